"""A parent that forks a worker, as DataLoader does; only the worker calls
CUDA first, then the parent does. Each process gets its own trace, each
call its own Python stack."""
import os

import gtcuda


def worker():
    gtcuda.copy_h2d(111)  # @child_copy


def parent():
    gtcuda.copy_h2d(222)  # @parent_copy


pid = os.fork()
if pid == 0:
    worker()  # @child_call
    os._exit(0)
os.waitpid(pid, 0)
parent()  # @parent_call
