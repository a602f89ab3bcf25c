"""CUDA from ctypes: CDLL releases the GIL around each call, PyDLL keeps it.
ctypes finds the functions with dlsym on the library's handle."""
import ctypes
import sys

cdll = ctypes.CDLL(sys.argv[1])
pydll = ctypes.PyDLL(sys.argv[1])
dev = ctypes.c_void_p()
cdll.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(4096))  # @malloc
host = ctypes.create_string_buffer(4096)


def with_cdll():
    return cdll.cudaMemcpy(dev, host, ctypes.c_size_t(4096), 1)  # @cdll_copy


def with_pydll():
    return pydll.cudaMemcpy(dev, host, ctypes.c_size_t(2048), 1)  # @pydll_copy


for _ in range(3):
    with_cdll()  # @cdll_caller
with_pydll()  # @pydll_caller
pydll.cudaDeviceSynchronize()  # @pydll_sync
