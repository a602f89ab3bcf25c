// module_cubin.cu: built with nvcc -cubin (tests/tests.mk) into a cubin
// that tests/progs/module_jit loads: one kernel, one global of 64 floats.
__device__ float cubin_table[64];

extern "C" __global__ void cubin_kernel(float *out)
{
    out[threadIdx.x] = cubin_table[threadIdx.x % 64];
}
