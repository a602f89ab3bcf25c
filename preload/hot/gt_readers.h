/* gt_readers.h: what each kind of hooked call leaves in its event. Called
 * after the real call, inside the guard. */
#ifndef GT_READERS_H
#define GT_READERS_H

#include <stddef.h>
#include <stdint.h>
#include "base/gt_cuda.h"
#include "base/gt_event.h"

static inline size_t gt_mul_sat(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? (size_t)-1 : r;
}

void gt_rd_launch_rt(struct gt_event *ev, const void *func, dim3 grid, dim3 block, size_t shm,
                     cudaStream_t stream, int pt);
void gt_rd_launch_rt_ex(struct gt_event *ev, int res, const cudaLaunchConfig_t *config, const void *func, int pt);
void gt_rd_launch_rt_kernel(struct gt_event *ev, int res, cudaKernel_t kernel, dim3 grid, dim3 block, size_t shm,
                            cudaStream_t stream, int pt);
void gt_rd_launch_drv(struct gt_event *ev, int res, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned shm, CUstream stream, int pt);
void gt_rd_launch_drv_ex(struct gt_event *ev, int res, const CUlaunchConfig *config, CUfunction f, int pt);
void gt_rd_register_function(const char *host_fun, const char *device_name);
void gt_rd_get_kernel(int res, cudaKernel_t *kernel, const void *host_fun);
void gt_rd_get_function(int res, void **handle, const char *name);
void gt_rd_kernel_function(int res, CUfunction *f, CUkernel k);

/* gt_readers_module.c */
void gt_rd_module_image(struct gt_event *ev, int res, const void *image);
void gt_rd_module_file(struct gt_event *ev, int res, int ptx);
void gt_rd_module_none(struct gt_event *ev);
void gt_rd_link_data(struct gt_event *ev, int res, CUjitInputType type, size_t size);
void gt_rd_link_complete(struct gt_event *ev, int res, size_t *size);

void gt_rd_copy_rt(struct gt_event *ev, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                   int async, cudaStream_t stream, int pt);
void gt_rd_copy(struct gt_event *ev, enum gt_copy_kind kind, const void *host, size_t bytes, int async,
                CUstream stream, int pt);
void gt_rd_copy_unified(struct gt_event *ev, CUdeviceptr dst, CUdeviceptr src, size_t bytes, int async,
                        CUstream stream, int pt);
void gt_rd_copy_2d(struct gt_event *ev, int res, const CUDA_MEMCPY2D *p, int async, CUstream stream, int pt);
void gt_rd_copy_3d(struct gt_event *ev, int res, const CUDA_MEMCPY3D *p, int async, CUstream stream, int pt);
void gt_rd_copy_rt_3d(struct gt_event *ev, int res, const struct cudaMemcpy3DParms *p, int async, cudaStream_t stream,
                      int pt);
void gt_rd_copy_batch(struct gt_event *ev, int res, void *const *dsts, const void *const *srcs, const size_t *sizes,
                      size_t count, void *stream, int pt);
void gt_rd_copy_peer(struct gt_event *ev, size_t bytes, int async, void *stream, int pt);
void gt_rd_memset(struct gt_event *ev, size_t bytes, int async, void *stream, int pt);

void gt_rd_sync(struct gt_event *ev, enum gt_sync_kind kind, void *stream, void *target, int pt);
/* cudaEventQuery, cudaStreamQuery and the driver's: one poll. */
void gt_rd_query(struct gt_event *ev, enum gt_sync_kind kind, void *stream, void *target, int pt);

void gt_rd_alloc(struct gt_event *ev, int res, enum gt_alloc_kind kind, void *const *out, size_t bytes);
void gt_rd_alloc_pitch(struct gt_event *ev, int res, void *const *out, const size_t *pitch, size_t height);
void gt_rd_alloc_async(struct gt_event *ev, int res, void *const *out, size_t bytes, void *stream, int pt);
void gt_rd_register(struct gt_event *ev, int res, void *p, size_t bytes, int mapped);
/* cudaHostGetDevicePointer: its host memory is read zero-copy (mapped). */
void gt_rd_host_device_pointer(int res, const void *host);
void gt_rd_free(struct gt_event *ev, int res, enum gt_alloc_kind kind, void *p);
void gt_rd_free_async(struct gt_event *ev, int res, void *p, void *stream, int pt);

void gt_rd_stream(struct gt_event *ev, void *stream, int pt);
void gt_rd_stream_out(struct gt_event *ev, int res, void *const *out);
void gt_rd_set_device(struct gt_event *ev, int res, int device);
void gt_rd_device_reset(void);
/* begin: 1 for a capture's start, 0 for its end. */
void gt_rd_capture(struct gt_event *ev, int res, void *stream, int begin, int pt);
void gt_rd_proc_address(int res, void **pfn);

#endif
