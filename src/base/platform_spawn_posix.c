/*
 * platform_spawn_posix.c - etl_spawn_read / etl_child_read / etl_child_wait (platform.h) with
 * posix_spawnp and a pipe; a silent child is found by poll() with the time left, then killed.
 */
#ifndef _WIN32
#define _GNU_SOURCE
#include "base/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct etl_child {
    pid_t pid;
    int fd;             /* the pipe's read end */
    unsigned idle_ms;   /* 0: no limit */
    bool killed;
    bool ended;         /* its output read to the end */
};

etl_child *etl_spawn_read(const char *const *argv, unsigned idle_ms)
{
    etl_child *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) {
        free(c);
        return NULL;
    }
    posix_spawn_file_actions_t fa;
    int e = posix_spawn_file_actions_init(&fa);
    if (!e) e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (!e) e = posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    if (!e) e = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* glibc's posix_spawnp reports a program it could not execute (ENOENT) as its result. */
    if (!e) e = posix_spawnp(&c->pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (e) {
        close(fd[0]);
        free(c);
        errno = e;
        return NULL;
    }
    c->fd = fd[0];
    c->idle_ms = idle_ms;
    return c;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

long etl_child_read(etl_child *c, void *buf, size_t n)
{
    if (c->killed) {
        errno = ETIMEDOUT;
        return -1;
    }
    int64_t end = c->idle_ms ? now_ms() + c->idle_ms : 0;
    for (;;) {
        if (c->idle_ms) { /* wait for bytes (or the end) no longer than the time left, a signal or not */
            int64_t left = end - now_ms();
            struct pollfd p = {c->fd, POLLIN, 0};
            int r = left > 0 ? poll(&p, 1, left > 1000000 ? 1000000 : (int)left) : 0;
            if (r < 0 && errno != EINTR) return -1;
            if (r < 0 || (r == 0 && left > 1000000)) continue;
            if (r == 0) {
                kill(c->pid, SIGKILL);
                c->killed = true;
                errno = ETIMEDOUT;
                return -1;
            }
        }
        ssize_t k = read(c->fd, buf, n);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0) c->ended = true;
        return (long)k;
    }
}

int etl_child_wait(etl_child *c)
{
    if (!c) return -1;
    close(c->fd);
    if (!c->ended && !c->killed) {
        kill(c->pid, SIGKILL);
        c->killed = true;
    }
    int ws = 0;
    pid_t r;
    while ((r = waitpid(c->pid, &ws, 0)) < 0 && errno == EINTR) {}
    bool killed = c->killed;
    free(c);
    if (r < 0 || killed || !WIFEXITED(ws)) return -1;
    return WEXITSTATUS(ws);
}

#endif
