/* tempfile.c - see tempfile.h. */
#define _GNU_SOURCE /* mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/tempfile.h"

const char *etl_temp_dir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

int etl_temp_open(void)
{
    const char *dir = etl_temp_dir();
    size_t n = strlen(dir);
    char *path = malloc(n + sizeof "/etlkit-XXXXXX");
    if (!path) return -1;
    memcpy(path, dir, n);
    memcpy(path + n, "/etlkit-XXXXXX", sizeof "/etlkit-XXXXXX");
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0 && unlink(path) != 0) {
        int e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    int e = errno;
    free(path);
    errno = e;
    return fd;
}
