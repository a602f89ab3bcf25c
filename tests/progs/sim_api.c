/* sim_api: runtime functions ordinary CUDA programs call, on the simulated
 * GPU with two devices (FAKECUDA_DEVICES=2). Prints "name value" lines, the
 * values each call returned or reported; tests/test_simulator.py compares
 * them with what NVIDIA's documentation says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define N (1u << 16)

static void out(const char *name, long long v)
{
    printf("%s %lld\n", name, v);
}

static uint64_t cb_time;
static int cb_status = -1, cb_stream_ok;
static cudaStream_t cb_expect;

static void CUDART_CB on_done(cudaStream_t s, cudaError_t status, void *data)
{
    cb_time = fakecuda_now_ns();
    cb_status = status;
    cb_stream_ok = s == cb_expect && data == &cb_time;
}

static void flags(void)
{
    unsigned f = 99;
    out("get_flags_rc", cudaGetDeviceFlags(&f));
    out("flags_initial", f);
    out("set_flags_rc", cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync | cudaDeviceMapHost));
    cudaGetDeviceFlags(&f);
    out("flags_after", f);
    out("set_flags_two_schedules_rc", cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceScheduleYield));
    out("set_flags_unknown_rc", cudaSetDeviceFlags(0x100));
    cudaGetLastError();
}

static void mapped(void)
{
    int can = -1;
    cudaDeviceGetAttribute(&can, cudaDevAttrCanMapHostMemory, 0);
    out("attr_can_map_host_memory", can);
    struct cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    out("prop_can_map_host_memory", p.canMapHostMemory);
    char *h = NULL, *pageable = malloc(N), *dev = NULL, *managed = NULL, *back = malloc(N);
    void *d = NULL;
    out("host_alloc_mapped_rc", cudaHostAlloc((void **)&h, N, cudaHostAllocMapped));
    out("host_get_device_pointer_rc", cudaHostGetDevicePointer(&d, h, 0));
    out("device_pointer_is_host_pointer", d == (void *)h);
    out("host_get_device_pointer_flags_rc", cudaHostGetDevicePointer(&d, h, 1));
    out("host_get_device_pointer_pageable_rc", cudaHostGetDevicePointer(&d, pageable, 0));
    out("host_alloc_bad_flags_rc", cudaHostAlloc((void **)&back, N, 0x100));
    cudaGetLastError();
    /* zero copy: what the host writes, the device pointer reads */
    cudaHostGetDevicePointer(&d, h, 0);
    memset(h, 0x5a, N);
    cudaMalloc((void **)&dev, N);
    cudaMemcpy(dev, d, N, cudaMemcpyDeviceToDevice);
    cudaMemcpy(back, dev, N, cudaMemcpyDeviceToHost);
    out("zero_copy_bytes_ok", back[0] == 0x5a && back[N - 1] == 0x5a);
    cudaMallocManaged((void **)&managed, N, cudaMemAttachGlobal);
    struct cudaPointerAttributes a;
    cudaPointerGetAttributes(&a, h);
    out("ptr_type_mapped", a.type);
    out("ptr_mapped_device_pointer_ok", a.devicePointer == (void *)h && a.hostPointer == (void *)h);
    cudaPointerGetAttributes(&a, dev);
    out("ptr_type_device", a.type);
    out("ptr_device_device", a.device);
    out("ptr_type_pageable_rc", cudaPointerGetAttributes(&a, pageable));
    out("ptr_type_pageable", a.type);
    out("ptr_device_pageable", a.device);
    cudaPointerGetAttributes(&a, managed);
    out("ptr_type_managed", a.type);
}

static void peers(void)
{
    int n = 0, can = -1;
    cudaGetDeviceCount(&n);
    out("device_count", n);
    cudaDeviceCanAccessPeer(&can, 0, 1);
    out("can_access_peer_0_1", can);
    cudaDeviceCanAccessPeer(&can, 0, 0);
    out("can_access_peer_0_0", can);
    out("can_access_peer_bad_device_rc", cudaDeviceCanAccessPeer(&can, 0, 7));
    cudaSetDevice(0);
    out("enable_peer_rc", cudaDeviceEnablePeerAccess(1, 0));
    out("enable_peer_again_rc", cudaDeviceEnablePeerAccess(1, 0));
    out("enable_peer_self_rc", cudaDeviceEnablePeerAccess(0, 0));
    out("disable_peer_rc", cudaDeviceDisablePeerAccess(1));
    out("disable_peer_again_rc", cudaDeviceDisablePeerAccess(1));
    cudaGetLastError();
    /* a copy between the devices, and each device's own default stream */
    char *d0, *d1, *h = malloc(N), *back = malloc(N);
    memset(h, 0x33, N);
    cudaSetDevice(1);
    cudaMalloc((void **)&d1, N);
    cudaSetDevice(0);
    cudaMalloc((void **)&d0, N);
    cudaMemcpy(d0, h, N, cudaMemcpyHostToDevice);
    out("memcpy_peer_rc", cudaMemcpyPeer(d1, 1, d0, 0, N));
    cudaSetDevice(1);
    cudaMemcpy(back, d1, N, cudaMemcpyDeviceToHost);
    out("peer_bytes_ok", back[0] == 0x33 && back[N - 1] == 0x33);
    const void *k0 = fakecuda_runtime_kernel("on_device_0", 0), *k1 = fakecuda_runtime_kernel("on_device_1", 0);
    dim3 one = {1, 1, 1};
    cudaSetDevice(0);
    cudaLaunchKernel(k0, one, one, NULL, 0, NULL);
    cudaSetDevice(1);
    cudaLaunchKernel(k1, one, one, NULL, 0, NULL);
    cudaDeviceSynchronize();
    cudaSetDevice(0);
    cudaDeviceSynchronize();
}

static void streams(void)
{
    const void *k = fakecuda_runtime_kernel("slow_kernel", 0);
    dim3 one = {1, 1, 1};
    cudaStream_t s;
    cudaEvent_t e, never;
    cudaStreamCreate(&s);
    cudaEventCreate(&e);
    cudaEventCreate(&never);
    cudaLaunchKernel(k, one, one, NULL, 0, s);
    cudaEventRecord(e, s);
    cb_expect = s;
    out("add_callback_rc", cudaStreamAddCallback(s, on_done, &cb_time, 0));
    out("add_callback_flags_rc", cudaStreamAddCallback(s, on_done, &cb_time, 1));
    cudaGetLastError();
    out("stream_query_busy_rc", cudaStreamQuery(s));
    out("event_query_busy_rc", cudaEventQuery(e));
    out("event_query_unrecorded_rc", cudaEventQuery(never));
    out("last_error_after_queries", cudaGetLastError());
    cudaStreamSynchronize(s);
    out("stream_query_done_rc", cudaStreamQuery(s));
    out("event_query_done_rc", cudaEventQuery(e));
    out("callback_status", cb_status);
    out("callback_stream_and_data_ok", cb_stream_ok);
    out("callback_time", (long long)cb_time);

    int least = 99, greatest = 99, prio = 99;
    cudaDeviceGetStreamPriorityRange(&least, &greatest);
    out("priority_least", least);
    out("priority_greatest", greatest);
    cudaStream_t hi, lo, over;
    cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, -3);
    cudaStreamCreateWithPriority(&over, cudaStreamDefault, -10);
    cudaStreamCreateWithPriority(&lo, cudaStreamDefault, 3);
    cudaStreamGetPriority(hi, &prio);
    out("priority_minus3", prio);
    cudaStreamGetPriority(over, &prio);
    out("priority_minus10_clamped", prio);
    cudaStreamGetPriority(lo, &prio);
    out("priority_3_clamped", prio);
    cudaStreamGetPriority(NULL, &prio);
    out("priority_default_stream", prio);
    unsigned f = 99;
    cudaStreamGetFlags(hi, &f);
    out("stream_flags_nonblocking", f);
    int dev = 99;
    cudaStreamGetDevice(hi, &dev);
    out("stream_device", dev);
}

static void occupancy(void)
{
    const void *k = fakecuda_runtime_kernel("occ_kernel", 0);
    int n = -1;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, 256, 0);
    out("occupancy_256", n);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, 1024, 0);
    out("occupancy_1024", n);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, 96, 0);
    out("occupancy_96", n);
    cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, k, 128, 100000, cudaOccupancyDefault);
    out("occupancy_128_smem_100000", n);
    out("occupancy_bad_function_rc", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, &n, 128, 0));
    cudaGetLastError();
    CUfunction f = fakecuda_driver_kernel("occ_kernel", 0);
    int grid = -1, block = -1;
    cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0);
    out("potential_block", block);
    out("potential_min_grid", grid);
    cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 150000, 0);
    out("potential_block_smem_150000", block);
    out("potential_min_grid_smem_150000", grid);
    cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 200);
    out("potential_block_limit_200", block);
    out("potential_min_grid_limit_200", grid);
}

static void missing(void)
{
    const void *table = &table;
    CUuuid id;
    memset(&id, 0, sizeof(id));
    out("export_table_rc", cuGetExportTable(&table, &id));
    out("export_table_null", table == NULL);
    /* graphics interop: no display here, not simulated */
    out("unimplemented_rc", cudaGraphicsMapResources(1, NULL, NULL));
    out("unimplemented_last_error", cudaGetLastError());
    CUarray arr;
    CUDA_ARRAY_DESCRIPTOR ad = {64, 1, CU_AD_FORMAT_FLOAT, 1};
    out("driver_unimplemented_rc", cuArrayCreate(&arr, &ad));
}

int main(void)
{
    flags();
    mapped();
    peers();
    streams();
    occupancy();
    missing();
    return 0;
}
