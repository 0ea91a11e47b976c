/* outfile.c - see outfile.h. */
#include "base/outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/diag.h"
#include "base/platform.h"
#include "base/sigclean.h"

static etl_status check(const char *path, bool dir, etl_outfile *of, etl_diag *diag)
{
    memset(of, 0, sizeof *of);
    of->dir = dir;
    etl_file_info ls;
    if (etl_stat(path, false, &ls) != 0) {
        if (errno != ENOENT) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            return ETL_E_IO;
        }
    } else {
        of->exists = true;
        of->is_link = ls.is_link;
        /* What a link names only matters to tell the input (a link to nothing names nothing). */
        of->resolves = of->is_link ? etl_stat(path, true, &of->st) == 0 : (of->st = ls, true);
        if (!of->resolves) memset(&of->st, 0, sizeof of->st);
        if (!of->is_link && dir && !ls.is_dir) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: not a directory; the output must be a new or existing directory",
                         path);
            return ETL_E_IO;
        }
        /* A writer may seek, and renaming over a FIFO or a device would replace the node itself. */
        if (!of->is_link && !dir && !ls.is_reg) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: not a regular file; the output must be a new or regular file",
                         path);
            return ETL_E_IO;
        }
        /* A file the user may not write stays as it is, as a plain open() would leave it. */
        if (!of->is_link && !dir && etl_writable(path) != 0) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            return ETL_E_IO;
        }
    }
    of->target = strdup(path);
    if (!of->target) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "%s: out of memory", path);
        return ETL_E_NOMEM;
    }
    return ETL_OK;
}

etl_status etl_outfile_check(const char *path, etl_outfile *of, etl_diag *diag) { return check(path, false, of, diag); }

etl_status etl_outfile_check_dir(const char *path, etl_outfile *of, etl_diag *diag) { return check(path, true, of, diag); }

etl_status etl_outfile_may_replace(const etl_outfile *of, const char *path, bool force, const char *input,
                                   etl_diag *diag)
{
    if (!of->exists) return ETL_OK;
    etl_file_info in;
    if (input && of->resolves &&
        (strcmp(input, "-") == 0 ? etl_fstat(STDIN_FILENO, &in) : etl_stat(input, true, &in)) == 0 &&
        in.has_id && of->st.has_id && in.dev == of->st.dev && in.ino == of->st.ino) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s: the output is the input file", path);
        return ETL_E_INVALID_ARG;
    }
    if (force) return ETL_OK;
    if (of->is_link)
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX,
                     "%s is a symbolic link; use --force to replace the link (what it names is never written)", path);
    else
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s exists; use --force to replace it", path);
    return ETL_E_IO;
}

/* The temporary name for try i: .NAME.XXXXXXXX.tmp in the target's directory. */
static char *tmp_name(const etl_outfile *of, char *tmp, size_t n, unsigned i)
{
    const char *base = etl_path_base(of->target);
    size_t dirlen = (size_t)(base - of->target);
    unsigned long salt = (unsigned long)getpid() * 2654435761ul ^ (unsigned long)time(NULL);
    snprintf(tmp, n, "%.*s.%s.%08lx.tmp", (int)dirlen, of->target, base, (salt + i * 0x9E3779B9ul) & 0xFFFFFFFFul);
    return tmp;
}

etl_status etl_outfile_create(etl_outfile *of, FILE **f, etl_diag *diag)
{
    size_t n = strlen(of->target) + 40;
    char *tmp = malloc(n);
    if (!tmp) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "%s: out of memory", of->target);
        return ETL_E_NOMEM;
    }
    int fd = -1;
    bool keep_mode = of->exists && !of->is_link;
    /* O_EXCL with the mode a plain create would use: the umask (and a default ACL) apply as usual. */
    for (unsigned i = 0; fd < 0 && i < 100; i++) {
        fd = etl_create_new(tmp_name(of, tmp, n, i), keep_mode ? 0600 : 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot create a file in its directory: %s", of->target,
                     strerror(errno));
        free(tmp);
        return ETL_E_IO;
    }
    of->tmp = tmp;
    of->clean = etl_sigclean_add(tmp, false) + 1;
    if (keep_mode) etl_copy_mode(fd, &of->st); /* replacing a file: it keeps its permissions (and, when we may, its owner) */
    if (!f) {
        if (close(fd) != 0) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", of->target, strerror(errno));
            return ETL_E_IO;
        }
        return ETL_OK;
    }
    *f = fdopen(fd, "wb");
    if (!*f) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", of->target, strerror(errno));
        close(fd);
        return ETL_E_IO;
    }
    return ETL_OK;
}

etl_status etl_outfile_create_dir(etl_outfile *of, etl_diag *diag)
{
    size_t n = strlen(of->target) + 40;
    char *tmp = malloc(n);
    if (!tmp) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "%s: out of memory", of->target);
        return ETL_E_NOMEM;
    }
    int r = -1;
    for (unsigned i = 0; r != 0 && i < 100; i++) {
        r = etl_mkdir(tmp_name(of, tmp, n, i)); /* the umask applies, as to any new directory */
        if (r != 0 && errno != EEXIST) break;
    }
    if (r != 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot create a directory beside it: %s", of->target,
                     strerror(errno));
        free(tmp);
        return ETL_E_IO;
    }
    of->tmp = tmp;
    of->clean = etl_sigclean_add(tmp, true) + 1;
    return ETL_OK;
}

etl_status etl_outfile_commit(etl_outfile *of, const char *path, etl_diag *diag)
{
    if (!of->tmp) return ETL_OK;
    if (of->dir && of->exists && !of->is_link) return ETL_OK; /* the caller moved the files in; discard removes tmp */
    /* rename() replaces a link to a file, not one to a directory: a directory output removes the link first. */
    if (of->dir && of->is_link && etl_unlink(of->target) != 0 && errno != ENOENT) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot replace the symbolic link: %s", path, strerror(errno));
        return ETL_E_IO;
    }
    if (etl_rename(of->tmp, of->target) != 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot rename %s into place: %s", path, of->tmp, strerror(errno));
        return ETL_E_IO;
    }
    etl_sigclean_remove(of->clean - 1); /* after the rename: a signal before it still finds the temporary */
    of->clean = 0;
    free(of->tmp);
    of->tmp = NULL;
    return ETL_OK;
}

void etl_outfile_discard(etl_outfile *of)
{
    /* Ours alone: the old output, if any, is as it was. */
    if (of->tmp) (void)(of->dir ? etl_rmdir(of->tmp) : etl_unlink(of->tmp));
    etl_sigclean_remove(of->clean - 1);
    of->clean = 0;
    free(of->tmp);
    free(of->target);
    of->tmp = NULL;
    of->target = NULL;
}
