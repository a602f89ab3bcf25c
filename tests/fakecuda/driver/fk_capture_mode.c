/* fk_capture_mode.c: the thread's stream capture interaction mode
 * (cuThreadExchangeStreamCaptureMode), as frameworks swap it around calls
 * that are legal during another thread's capture only in relaxed mode
 * (PyTorch's caching allocator does, around cudaMalloc, while a graph is
 * being captured). The mode is kept per thread, starting global, as the
 * real driver's. What a real driver does with it (failing "unsafe" calls
 * during a global capture) is not simulated. */
#include "fk_driver.h"

static __thread int fk_tls_mode_set;
static __thread CUstreamCaptureMode fk_tls_mode;

FK_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    if (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL && *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        *mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = fk_tls_mode_set ? fk_tls_mode : CU_STREAM_CAPTURE_MODE_GLOBAL;
    fk_tls_mode = *mode;
    fk_tls_mode_set = 1;
    *mode = old;
    return CUDA_SUCCESS;
}
