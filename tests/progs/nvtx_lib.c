/* libnvtx_lib.so: NVTX v3 (NVIDIA's headers) behind plain C functions, as
 * PyTorch's torch.cuda.nvtx bindings are: Python calls these through
 * ctypes (tests/progs/py/nvtx_ranges.py), and also the bench's loop. */
#include <stdint.h>
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) int gt_nvtx_push(const char *name)
{
    return nvtxRangePushA(name);
}

__attribute__((visibility("default"))) int gt_nvtx_pop(void)
{
    return nvtxRangePop();
}

__attribute__((visibility("default"))) uint64_t gt_nvtx_start(const char *name)
{
    return nvtxRangeStartA(name);
}

__attribute__((visibility("default"))) void gt_nvtx_end(uint64_t id)
{
    nvtxRangeEnd(id);
}

__attribute__((visibility("default"))) void gt_nvtx_mark(const char *name)
{
    nvtxMarkA(name);
}

/* n push/pop pairs, for the bench. */
__attribute__((visibility("default"))) void gt_nvtx_loop(long n)
{
    for (long i = 0; i < n; i++) {
        nvtxRangePushA("bench-range");
        nvtxRangePop();
    }
}
