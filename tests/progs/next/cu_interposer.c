/* A preloaded library that defines driver entry points of its own (as the
 * tracer does), for tests/progs/procaddr_probe.c. Never called. */
int cuLaunchKernel(void);
int cuMemAlloc_v2(void);
int cuCtxSynchronize(void);
int cuLaunchKernel(void) { return 999; }
int cuMemAlloc_v2(void) { return 999; }
int cuCtxSynchronize(void) { return 999; }
