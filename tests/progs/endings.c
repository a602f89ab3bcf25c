/* endings: ways a traced process ends. argv[1] picks one; each first makes
 * N launches (argv[2], default 100) and one 4096-byte H2D copy, prints
 * "ready" and then:
 *   exit           returns from main
 *   atexit         an atexit handler launches "in_atexit" once, then calls
 *                  exit(7) from inside the handler
 *   _exit          _exit(3) right away (no atexit handlers)
 *   abort          sleeps 700 ms (the writer commits), launches N more, abort()
 *   segv           the same, then writes through a NULL pointer
 *   thread_exit    4 threads launch without end; main calls exit(5) while
 *                  they are inside CUDA calls
 *   churn          40 threads, 8 alive at a time, each launching N and
 *                  exiting; every event of every dead thread must land
 *   system         system("true") and popen("echo popen-ok") after CUDA is
 *                  in use; prints what popen read
 *   exec           execs itself as "endings exec-child N": a new image in
 *                  the same process, which launches N more
 *   exec-child     (the image exec starts) launches N "after_exec" kernels
 *   exec-fail      execs a file that does not exist, then launches N
 *                  "after_failed_exec" and exits 0
 *   children       forks 6 children one after another; each launches N and
 *                  exits; the parent launches too
 *   vfork          vforks 3 children that exec /bin/true (one through
 *                  execve, one execv, one execvp), then launches once more */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static int n_launch = 100;
static volatile int stop_threads;

static void launch_n(const char *name, int n)
{
    const void *k = fakecuda_runtime_kernel(name, 1000);
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (int i = 0; i < n; i++)
        cudaLaunchKernel(k, g, b, NULL, 0, NULL);
}

static void start(void)
{
    static char host[4096];
    void *d;
    launch_n("ending_kernel", n_launch);
    cudaMalloc(&d, sizeof(host));
    cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice);
    printf("ready\n");
    fflush(stdout);
}

static void in_atexit(void)
{
    launch_n("in_atexit", 1);
    cudaDeviceSynchronize();
    exit(7);
}

static void *spin(void *arg)
{
    (void)arg;
    while (!stop_threads)
        launch_n("spin", 10);
    return NULL;
}

static void *churn_one(void *arg)
{
    (void)arg;
    launch_n("churn", n_launch);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    if (argc > 2)
        n_launch = atoi(argv[2]);
    if (strcmp(mode, "exec-child") == 0) {
        launch_n("after_exec", n_launch);
        cudaDeviceSynchronize();
        printf("exec-child done\n");
        return 0;
    }
    start();
    if (strcmp(mode, "exit") == 0) {
        cudaDeviceSynchronize();
        return 0;
    }
    if (strcmp(mode, "atexit") == 0) {
        atexit(in_atexit);
        return 0;
    }
    if (strcmp(mode, "_exit") == 0)
        _exit(3);
    if (strcmp(mode, "abort") == 0 || strcmp(mode, "segv") == 0) {
        usleep(700000);
        launch_n("late", n_launch);
        if (mode[0] == 'a')
            abort();
        volatile int *null = (volatile int *)(uintptr_t)(argc * 0);
        *null = 1;
        return 1;
    }
    if (strcmp(mode, "thread_exit") == 0) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, spin, NULL);
        usleep(100000);
        exit(5);
    }
    if (strcmp(mode, "churn") == 0) {
        pthread_t t[8];
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < 8; i++)
                pthread_create(&t[i], NULL, churn_one, NULL);
            for (int i = 0; i < 8; i++)
                pthread_join(t[i], NULL);
        }
        return 0;
    }
    if (strcmp(mode, "system") == 0) {
        int rc = system("true");
        char line[64] = "";
        FILE *p = popen("echo popen-ok", "r");
        if (p && fgets(line, sizeof(line), p))
            printf("%s", line);
        if (p)
            pclose(p);
        launch_n("after_system", 1);
        return rc == 0 ? 0 : 1;
    }
    if (strcmp(mode, "exec") == 0) {
        char count[16];
        snprintf(count, sizeof(count), "%d", n_launch);
        execl("/proc/self/exe", argv[0], "exec-child", count, (char *)NULL);
        perror("execl");
        return 1;
    }
    if (strcmp(mode, "exec-fail") == 0) {
        execl("/nonexistent/gputrace-test", "x", (char *)NULL);
        printf("exec failed as expected\n");
        launch_n("after_failed_exec", n_launch);
        return 0;
    }
    if (strcmp(mode, "vfork") == 0) {
        for (int i = 0; i < 3; i++) {
            pid_t pid = vfork();
            if (pid == 0) {
                char *args[] = {"true", NULL}, *envp[] = {NULL};
                if (i == 0)
                    execve("/bin/true", args, envp);
                else if (i == 1)
                    execv("/bin/true", args);
                else
                    execvp("true", args);
                _exit(127);
            }
            int st;
            waitpid(pid, &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return 1;
        }
        launch_n("after_vfork", 1);
        return 0;
    }
    if (strcmp(mode, "children") == 0) {
        for (int i = 0; i < 6; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                launch_n("child", n_launch);
                cudaDeviceSynchronize();
                exit(0);
            }
            int st;
            waitpid(pid, &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return 1;
        }
        launch_n("parent_after", 1);
        return 0;
    }
    fprintf(stderr, "endings: unknown mode %s\n", mode);
    return 2;
}
