/* platform_spawn_posix.c - etl_spawn_read / etl_child_wait (platform.h) with posix_spawnp and a pipe. */
#ifndef _WIN32
#define _GNU_SOURCE
#include "base/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct etl_child {
    pid_t pid;
    FILE *out;
};

etl_child *etl_spawn_read(const char *const *argv, FILE **out)
{
    *out = NULL;
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
    if (!e && !(c->out = fdopen(fd[0], "rb"))) {
        e = errno;
        close(fd[0]);
        int ws;
        while (waitpid(c->pid, &ws, 0) < 0 && errno == EINTR) {}
    } else if (e) {
        close(fd[0]);
    }
    if (e) {
        free(c);
        errno = e;
        return NULL;
    }
    *out = c->out;
    return c;
}

int etl_child_wait(etl_child *c)
{
    if (!c) return -1;
    fclose(c->out);
    int ws = 0;
    pid_t r;
    while ((r = waitpid(c->pid, &ws, 0)) < 0 && errno == EINTR) {}
    free(c);
    if (r < 0 || !WIFEXITED(ws)) return -1;
    return WEXITSTATUS(ws);
}

#endif
