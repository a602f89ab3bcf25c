/* fork_child: initialises CUDA, forks a child that never uses CUDA (it
 * prints and exits 7), waits for it, then the parent does more CUDA work.
 * Ground truth: one trace (the parent's), 2 launches of "fork_kernel". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

int main(void)
{
    const void *k = fakecuda_runtime_kernel("fork_kernel", 1000);
    dim3 g = {1, 1, 1}, b = {1, 1, 1};
    cudaLaunchKernel(k, g, b, NULL, 0, NULL);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child %d\n", (int)getpid());
        exit(7);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cudaLaunchKernel(k, g, b, NULL, 0, NULL);
    cudaDeviceSynchronize();
    printf("parent: child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
