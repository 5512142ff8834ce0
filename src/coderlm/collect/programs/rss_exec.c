/* rss_exec REPORT COMMAND...: run COMMAND as a child, then write "maxrss_kib user_s sys_s wall_s signal" to the
 * file REPORT and exit
 * with the child's status (128 + signal when it was killed). Started fresh, it measures the child's
 * true peak RSS: a process forked straight from the (large) collector would inherit its high-water mark.
 * Built on first use by coderlm.collect.sandbox with the system C compiler. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: rss_exec REPORT COMMAND [ARGS...]\n"); return 125; }
    FILE *report = fopen(argv[1], "w");
    if (!report) { perror("rss_exec: report"); return 125; }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) { perror("rss_exec: fork"); return 125; }
    if (pid == 0) {
        fclose(report);
        execvp(argv[2], argv + 2);
        fprintf(stderr, "rss_exec: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {}
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(report, "%ld %.6f %.6f %.6f %d\n", ru.ru_maxrss, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, wall,
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    fclose(report);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
