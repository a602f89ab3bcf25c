/* gt_idle.c: the idle rule's watcher (gt_idle.h).
 *
 * Where NVML is (libnvidia-ml.so.1, beside every NVIDIA driver), its
 * utilization is the share of a recent period (1/6 s to 1 s, by product)
 * in which one or more kernels ran: device-wide, so another process's
 * kernels on the same GPU count as busy. The watcher looks only at the
 * devices whose primary context this process holds (every visible device
 * when it holds none: a program with contexts of its own), and a device
 * counts only once it has been seen busy, so that start-up, before the
 * first kernel, and devices the process does not use never fire. After a
 * window it must be seen busy again.
 *
 * No signal, no work on the program's threads: this thread sleeps a
 * second between looks, and reads nothing until the program has loaded
 * and initialised the CUDA driver. Without NVML the rule is off, said in
 * one line. */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "hot/gt_threads.h"
#include "session/gt_idle.h"

#define GT_IDLE_MAX_DEVICES 64

/* NVML's ABI, from its documentation (the toolkit here ships no nvml.h). */
typedef struct gt_nvml_device *gt_nvml_device_t;
struct gt_nvml_util {
    unsigned int gpu, memory;
};

struct gt_idle_api {
    CUresult (*dev_count)(int *);
    CUresult (*bus_id)(char *, int, CUdevice);
    CUresult (*ctx_state)(CUdevice, unsigned int *, int *);
    int (*nvml_init)(void);
    const char *(*nvml_error)(int);
    int (*nvml_by_bus)(const char *, gt_nvml_device_t *);
    int (*nvml_util)(gt_nvml_device_t, struct gt_nvml_util *);
};

static struct {
    int pct;
    void (*fire)(const char *why); /* keeps the one cooldown of every rule */
    int started;
    _Atomic int stop;
} gt_idle;

static void gt_idle_sleep(void)
{
    struct timespec ts = {1, 0};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The program's driver, once it has loaded it: 1, 0 while it has not,
 * -1 when it lacks a function the watcher needs. */
static int gt_idle_find_driver(struct gt_idle_api *a)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return 0;
    a->dev_count = (CUresult(*)(int *))dlsym(h, "cuDeviceGetCount");
    a->bus_id = (CUresult(*)(char *, int, CUdevice))dlsym(h, "cuDeviceGetPCIBusId");
    a->ctx_state = (CUresult(*)(CUdevice, unsigned int *, int *))dlsym(h, "cuDevicePrimaryCtxGetState");
    dlclose(h); /* the program keeps it loaded */
    return a->dev_count && a->bus_id && a->ctx_state ? 1 : -1;
}

static int gt_idle_open_nvml(struct gt_idle_api *a, char *why, size_t why_len)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, why_len, "no NVML (%s)", dlerror());
        return -1;
    }
    a->nvml_init = (int (*)(void))dlsym(h, "nvmlInit_v2");
    a->nvml_error = (const char *(*)(int))dlsym(h, "nvmlErrorString");
    a->nvml_by_bus = (int (*)(const char *, gt_nvml_device_t *))dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    a->nvml_util = (int (*)(gt_nvml_device_t, struct gt_nvml_util *))dlsym(h, "nvmlDeviceGetUtilizationRates");
    if (!a->nvml_init || !a->nvml_by_bus || !a->nvml_util) {
        snprintf(why, why_len, "this NVML lacks the functions it needs");
        return -1;
    }
    int r = a->nvml_init();
    if (r != 0) {
        snprintf(why, why_len, "NVML did not start (%s)", a->nvml_error ? a->nvml_error(r) : "error");
        return -1;
    }
    return 0;
}

static void *gt_idle_main(void *arg)
{
    (void)arg;
    gt_tls_busy = 1; /* the tracer's own thread: never recorded */
    gt_threads_mark_tracer((uint32_t)syscall(SYS_gettid));
    struct gt_idle_api a;
    memset(&a, 0, sizeof(a));
    gt_nvml_device_t dev[GT_IDLE_MAX_DEVICES];
    int ndev = 0, armed[GT_IDLE_MAX_DEVICES] = {0};
    for (;;) {
        gt_idle_sleep();
        if (atomic_load(&gt_idle.stop))
            return NULL;
        if (!ndev) {
            int n = 0;
            if (!a.dev_count) {
                int found = gt_idle_find_driver(&a);
                if (found < 0) {
                    gt_warn("GPUTRACE_TRIGGER=idle>%d%%: this CUDA driver lacks the device queries it needs; "
                            "the idle rule is off", gt_idle.pct);
                    return NULL;
                }
                if (!found)
                    continue;
            }
            if (a.dev_count(&n) != CUDA_SUCCESS || n <= 0)
                continue; /* not initialised yet */
            char why[512];
            if (gt_idle_open_nvml(&a, why, sizeof(why)) < 0) {
                gt_warn("GPUTRACE_TRIGGER=idle>%d%%: %s; the idle rule is off", gt_idle.pct, why);
                return NULL;
            }
            for (int d = 0; d < n && d < GT_IDLE_MAX_DEVICES; d++) {
                char bus[32];
                dev[d] = NULL;
                if (a.bus_id(bus, (int)sizeof(bus), d) == CUDA_SUCCESS)
                    a.nvml_by_bus(bus, &dev[d]);
            }
            ndev = n < GT_IDLE_MAX_DEVICES ? n : GT_IDLE_MAX_DEVICES;
        }
        int active[GT_IDLE_MAX_DEVICES], any = 0;
        for (int d = 0; d < ndev; d++) {
            unsigned flags;
            active[d] = 0;
            if (a.ctx_state(d, &flags, &active[d]) != CUDA_SUCCESS)
                active[d] = 0;
            any |= active[d];
        }
        for (int d = 0; d < ndev; d++) {
            struct gt_nvml_util u;
            if (!dev[d] || (any && !active[d]) || a.nvml_util(dev[d], &u) != 0 || u.gpu > 100)
                continue;
            int idle = 100 - (int)u.gpu;
            if (idle <= gt_idle.pct) {
                armed[d] = 1;
                continue;
            }
            if (!armed[d])
                continue;
            char why[128];
            snprintf(why, sizeof(why), "idle>%d%%: GPU %d idle %d%% of the last second", gt_idle.pct, d, idle);
            gt_idle.fire(why);
            memset(armed, 0, sizeof(armed));
            break;
        }
    }
    return NULL;
}

int gt_idle_start(int pct, void (*fire)(const char *why), char *err, size_t err_len)
{
    if (gt_idle.started)
        return 0;
    gt_idle.pct = pct;
    gt_idle.fire = fire;
    int rc = gt_thread_spawn(NULL, 1, gt_idle_main, NULL);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start the idle watcher: %s", strerror(rc));
        return -1;
    }
    gt_idle.started = 1;
    return 0;
}

void gt_idle_stop(void)
{
    atomic_store(&gt_idle.stop, 1);
}

void gt_idle_after_fork_child(void)
{
    gt_idle.started = 0;
    atomic_store(&gt_idle.stop, 0);
}
