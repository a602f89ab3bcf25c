"""NVTX ranges from Python through ctypes over a small library built with
NVIDIA's NVTX headers (tests/progs/nvtx_lib.c), as torch.cuda.nvtx does.
Ground truth: ranges "epoch" (depth 0) holding 2 x "batch" (depth 1), each
pushed on the line marked @push_batch; "epoch" pushed at @push_epoch; a
start/end range "load" started at @start and ended from a second Python
thread; a mark "checkpoint" at @mark."""
import ctypes
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
lib.gt_nvtx_start.restype = ctypes.c_uint64
lib.gt_nvtx_end.argtypes = [ctypes.c_uint64]


def batch():
    lib.gt_nvtx_push(b"batch")  # @push_batch
    lib.gt_nvtx_pop()


def epoch():
    lib.gt_nvtx_push(b"epoch")  # @push_epoch
    for _ in range(2):
        batch()
    lib.gt_nvtx_pop()


epoch()
rid = lib.gt_nvtx_start(b"load")  # @start
t = threading.Thread(target=lambda: lib.gt_nvtx_end(rid))
t.start()
t.join()
lib.gt_nvtx_mark(b"checkpoint")  # @mark
