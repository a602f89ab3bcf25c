"""A training-loop shape through a C extension that releases the GIL, as
PyTorch does. Lines marked '# @name' are where the test expects the calls."""
import sys

import gtcuda


def load_batch(n):
    return gtcuda.copy_h2d(n)  # @copy


def step(i):
    load_batch(1 << 16)  # @load_batch
    gtcuda.launch("train_step")  # @launch


def main(steps):
    for i in range(steps):
        step(i)  # @step
    gtcuda.sync()  # @sync
    gtcuda.sync_holding_gil()  # @sync_held


main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)  # @main
