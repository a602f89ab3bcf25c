"""A training loop with planted answers (tests/test_truth.py), through the
gtcuda extension (GIL released around each call, as PyTorch does): each
step stalls in load_batch (time.sleep: the planted data loading) and then
copies the batch to the GPU there, then forward launches kernels, then
step_end syncs. The GPU idles through each stall, and the work that ends
each such gap is the copy in load_batch. The copy is made four Python
frames deep (load_batch < step < run_epoch < main), below <module>. Lines
marked '# @name' are where the test expects the calls.
    truth_loop.py STEPS STALL_MS BYTES KERNELS"""
import sys
import time

import gtcuda


def load_batch(nbytes, stall_s):
    time.sleep(stall_s)
    return gtcuda.copy_h2d(nbytes)  # @copy


def forward(kernels):
    for _ in range(kernels):
        gtcuda.launch("py_forward")  # @launch


def step_end():
    gtcuda.sync()  # @sync


def step(nbytes, stall_s, kernels):
    load_batch(nbytes, stall_s)  # @load_batch
    forward(kernels)  # @forward
    step_end()  # @step_end


def run_epoch(steps, nbytes, stall_s, kernels):
    for _ in range(steps):
        step(nbytes, stall_s, kernels)  # @step


def main(steps, stall_ms, nbytes, kernels):
    gtcuda.launch("py_init")  # @init
    gtcuda.sync()
    run_epoch(steps, nbytes, stall_ms / 1000.0, kernels)  # @run_epoch


main(*(int(a) for a in sys.argv[1:5])) if len(sys.argv) > 4 else main(8, 5, 1 << 18, 3)
