"""Python threads, a generator and deep recursion, each making CUDA calls
through the C extension. argv: recursion depth."""
import sys
import threading

import gtcuda


def worker_a():
    for _ in range(20):
        gtcuda.copy_h2d(1000)  # @thread_a


def worker_b():
    for _ in range(20):
        gtcuda.copy_h2d(2000)  # @thread_b


def batches(n):
    for i in range(n):
        gtcuda.copy_h2d(3000)  # @gen_copy
        yield i


def consume():
    total = 0
    for i in batches(4):  # @gen_consumer
        total += i
    return total


def recurse(depth):
    if depth == 0:
        return gtcuda.copy_h2d(4000)  # @rec_bottom
    return recurse(depth - 1)  # @rec_step


threads = [threading.Thread(target=worker_a), threading.Thread(target=worker_b),
           threading.Thread(target=worker_a), threading.Thread(target=worker_b)]
for t in threads:
    t.start()
for t in threads:
    t.join()
consume()  # @consume
recurse(int(sys.argv[1]))  # @recurse
gtcuda.sync()
