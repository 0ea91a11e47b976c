/* outfile.c - see outfile.h. */
/* realpath(NULL buffer) and fchmod/fchown are XSI, beyond the build's POSIX level. */
#define _XOPEN_SOURCE 700
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/diag.h"

etl_status etl_outfile_check(const char *path, etl_outfile *of, etl_diag *diag)
{
    memset(of, 0, sizeof *of);
    struct stat ls;
    if (lstat(path, &ls) != 0) {
        if (errno != ENOENT) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            return ETL_E_IO;
        }
    } else if (stat(path, &of->st) != 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: a symbolic link to nothing (%s); not followed", path,
                     strerror(errno));
        return ETL_E_IO;
    } else {
        of->exists = true;
        /* A writer may seek, and renaming over a FIFO or a device would replace the node itself. */
        if (!S_ISREG(of->st.st_mode)) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: not a regular file; the output must be a new or regular file",
                         path);
            return ETL_E_IO;
        }
        /* A file the user may not write stays as it is, as a plain open() would leave it. */
        if (access(path, W_OK) != 0) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            return ETL_E_IO;
        }
    }
    /* Through a symbolic link, the file it names is replaced and the link kept. */
    char *target = S_ISLNK(ls.st_mode) && of->exists ? realpath(path, NULL) : strdup(path);
    if (!target) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
        return ETL_E_IO;
    }
    of->target = target;
    return ETL_OK;
}

etl_status etl_outfile_create(etl_outfile *of, FILE **f, etl_diag *diag)
{
    const char *slash = strrchr(of->target, '/');
    size_t dirlen = slash ? (size_t)(slash - of->target) + 1 : 0;
    const char *base = slash ? slash + 1 : of->target;
    size_t n = dirlen + strlen(base) + 40;
    char *tmp = malloc(n);
    if (!tmp) return ETL_E_NOMEM;
    int fd = -1;
    unsigned long salt = (unsigned long)getpid() * 2654435761ul ^ (unsigned long)time(NULL);
    /* O_EXCL with the mode a plain create would use: the umask (and a default ACL) apply as usual. */
    for (unsigned i = 0; fd < 0 && i < 100; i++) {
        snprintf(tmp, n, "%.*s.%s.%08lx.tmp", (int)dirlen, of->target, base, (salt + i * 0x9E3779B9ul) & 0xFFFFFFFFul);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, of->exists ? 0600 : 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot create a file in its directory: %s", of->target,
                     strerror(errno));
        free(tmp);
        return ETL_E_IO;
    }
    of->tmp = tmp;
    if (of->exists) {
        /* Replacing a file: it keeps its permissions (and, when we may, its owner). */
        if (fchown(fd, of->st.st_uid, of->st.st_gid) != 0) { /* only root may give a file away */ }
        fchmod(fd, of->st.st_mode & 07777);
    }
    *f = fdopen(fd, "wb");
    if (!*f) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", tmp, strerror(errno));
        close(fd);
        return ETL_E_IO;
    }
    return ETL_OK;
}

etl_status etl_outfile_commit(etl_outfile *of, const char *path, etl_diag *diag)
{
    if (!of->tmp) return ETL_OK;
    if (rename(of->tmp, of->target) != 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot rename %s into place: %s", path, of->tmp, strerror(errno));
        return ETL_E_IO;
    }
    free(of->tmp);
    of->tmp = NULL;
    return ETL_OK;
}

void etl_outfile_discard(etl_outfile *of)
{
    if (of->tmp) unlink(of->tmp); /* ours alone: the old output, if any, is as it was */
    free(of->tmp);
    free(of->target);
    of->tmp = NULL;
    of->target = NULL;
}
