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
        /* Refused by may_replace, after its input test: -o naming the input is a usage error, as for a file. */
        if (!of->is_link && dir && !ls.is_dir) of->not_dir = true;
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
    /* OUT/ names the directory OUT: its temporary goes beside it, not inside one not made yet ("/" and "C:\\" stay). */
    size_t n = strlen(of->target);
    while (dir && n > 1 && of->target[n - 1] != ':' && of->target[n - 2] != ':' && !*etl_path_base(of->target))
        of->target[--n] = 0;
    return ETL_OK;
}

etl_status etl_outfile_check(const char *path, etl_outfile *of, etl_diag *diag) { return check(path, false, of, diag); }

etl_status etl_outfile_check_dir(const char *path, etl_outfile *of, etl_diag *diag) { return check(path, true, of, diag); }

/* Whether fi is the input file (same device and inode; "-" is standard input, NULL none). */
static bool is_input(const etl_file_info *fi, const char *input)
{
    etl_file_info in;
    return input && fi->has_id &&
           (strcmp(input, "-") == 0 ? etl_fstat(STDIN_FILENO, &in) : etl_stat(input, true, &in)) == 0 && in.has_id &&
           in.dev == fi->dev && in.ino == fi->ino;
}

etl_status etl_outfile_may_replace(const etl_outfile *of, const char *path, bool force, const char *input,
                                   etl_diag *diag)
{
    if (!of->exists) return ETL_OK;
    if (of->resolves && is_input(&of->st, input)) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s: the output is the input file", path);
        return ETL_E_INVALID_ARG;
    }
    if (of->not_dir) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: not a directory; the output must be a new or existing directory",
                     path);
        return ETL_E_IO;
    }
    if (force) return ETL_OK;
    if (of->is_link)
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX,
                     "%s is a symbolic link; use --force to replace the link (what it names is never written)", path);
    else
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s exists; use --force to replace it", path);
    return ETL_E_IO;
}

/* dir/name + ext + suffix (dir's separator: etl_path_sep), allocated; NULL when out of memory. */
static char *file_in(const char *dir, const char *name, const char *ext, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + strlen(suffix) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s%s%s", dir, etl_path_sep(dir, NULL), name, ext, suffix);
    return p;
}

/* The directory a path's last component is in (what etl_path_base leaves, "." when nothing), as etl_stat sees it. */
static int parent_of(const char *path, etl_file_info *fi)
{
    size_t n = (size_t)(etl_path_base(path) - path);
    char *d = malloc(n + 2);
    if (!d) return -1;
    memcpy(d, path, n);
    /* "" is here; "C:" is drive C's current directory, "C:." to open it */
    if (n == 0 || d[n - 1] == ':') d[n++] = '.';
    d[n] = 0;
    int r = etl_stat(d, true, fi);
    free(d);
    return r;
}

bool etl_outfile_same(const char *a, const char *b)
{
    if (strcmp(a, b) == 0) return true;
    etl_file_info da, db;
    return etl_name_same(etl_path_base(a), etl_path_base(b)) && parent_of(a, &da) == 0 && parent_of(b, &db) == 0 &&
           da.has_id && db.has_id && da.dev == db.dev && da.ino == db.ino;
}

etl_status etl_outfile_dir_files(etl_outfile *of, const char *path, const char *const *names, unsigned n,
                                 const char *ext, uint32_t ours, const char *input, etl_diag *diag)
{
    of->names = names;
    of->nnames = n < 32 ? n : 32;
    of->ext = ext;
    of->ours = ours;
    if (!of->exists || of->is_link || of->not_dir) return ETL_OK; /* made whole and renamed into place, or refused */
    for (unsigned i = 0; i < of->nnames; i++) {
        char *p = file_in(path, names[i], ext, "");
        etl_file_info ls, st;
        etl_status s = ETL_OK;
        if (!p) {
            etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "%s: out of memory", path);
            return ETL_E_NOMEM;
        }
        if (etl_stat(p, false, &ls) != 0) {
            if (errno != ENOENT) s = ETL_E_IO, etl_diag_set(diag, s, UINT64_MAX, "%s: %s", p, strerror(errno));
        } else if (is_input(&ls, input) || (ls.is_link && etl_stat(p, true, &st) == 0 && is_input(&st, input))) {
            /* --force would replace or remove it: the input, whatever its name, never. */
            s = ETL_E_INVALID_ARG;
            etl_diag_set(diag, s, UINT64_MAX, "%s: the output is the input file (--force replaces it); nothing written",
                         p);
        } else if (!ls.is_reg && !ls.is_link) {
            s = ETL_E_IO;
            etl_diag_set(diag, s, UINT64_MAX, "%s: not a regular file, where --force puts a table; nothing touched", p);
        }
        free(p);
        if (s != ETL_OK) return s;
    }
    return ETL_OK;
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

/* The new file's stream (f NULL: none, the file closed), or the system's reason. */
static etl_status as_stream(const etl_outfile *of, int fd, FILE **f, etl_diag *diag)
{
    if (f ? (*f = fdopen(fd, "wb")) != NULL : close(fd) == 0) return ETL_OK;
    etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", of->target, strerror(errno));
    if (f) close(fd);
    return ETL_E_IO;
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
    /* Created and registered as one: a signal between the two would leave the file behind. */
    etl_sigclean_hold();
    /* O_EXCL with the mode a plain create would use: the umask (and a default ACL) apply as usual. */
    for (unsigned i = 0; fd < 0 && i < 100; i++) {
        fd = etl_create_new(tmp_name(of, tmp, n, i), keep_mode ? 0600 : 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        etl_sigclean_release();
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot create a file in its directory: %s", of->target,
                     strerror(errno));
        free(tmp);
        return ETL_E_IO;
    }
    of->tmp = tmp;
    of->clean = etl_sigclean_add(tmp, false) + 1;
    etl_sigclean_release();
    if (keep_mode) etl_copy_mode(fd, &of->st); /* replacing a file: it keeps its permissions (and, when we may, its owner) */
    return as_stream(of, fd, f, diag);
}

/*
 * Made anew under the same name, never opened through it: whatever is there now (a symbolic link put in its place
 * since) is removed, not written through, and O_EXCL creates ours or fails. It stays registered for the signals.
 */
etl_status etl_outfile_reopen(etl_outfile *of, FILE **f, etl_diag *diag)
{
    if (!of->tmp) return ETL_E_INVALID_ARG;
    bool keep_mode = of->exists && !of->is_link;
    int fd = remove(of->tmp) == 0 || errno == ENOENT ? etl_create_new(of->tmp, keep_mode ? 0600 : 0666) : -1;
    if (fd < 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", of->target, strerror(errno));
        return ETL_E_IO;
    }
    if (keep_mode) etl_copy_mode(fd, &of->st);
    return as_stream(of, fd, f, diag);
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
    etl_sigclean_hold(); /* made and registered as one */
    for (unsigned i = 0; r != 0 && i < 100; i++) {
        r = etl_mkdir(tmp_name(of, tmp, n, i)); /* the umask applies, as to any new directory */
        if (r != 0 && errno != EEXIST) break;
    }
    if (r != 0) {
        etl_sigclean_release();
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot create a directory beside it: %s", of->target,
                     strerror(errno));
        free(tmp);
        return ETL_E_IO;
    }
    of->tmp = tmp;
    of->clean = etl_sigclean_add(tmp, true) + 1;
    etl_sigclean_release();
    return ETL_OK;
}

/*
 * Over an existing directory: its files of dir_files replaced as one (outfile.h). Each
 * one there goes aside as tmp/NAME.old, ours move in, then the old ones are removed;
 * a failed step puts back what moved, last first. The signals wait for the end of it:
 * a few renames, and the unlinks of the old files.
 */
static etl_status replace_files(etl_outfile *of, const char *path, etl_diag *diag)
{
    unsigned n = of->nnames;
    char *dst[32] = {0}, *src[32] = {0}, *old[32] = {0};
    etl_status st = ETL_OK;
    for (unsigned i = 0; st == ETL_OK && i < n; i++)
        if (!(dst[i] = file_in(path, of->names[i], of->ext, "")) ||
            !(src[i] = file_in(of->tmp, of->names[i], of->ext, "")) ||
            !(old[i] = file_in(of->tmp, of->names[i], of->ext, ".old"))) {
            etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "%s: out of memory", path);
            st = ETL_E_NOMEM;
        }
    uint32_t aside = 0, in = 0;
    if (st == ETL_OK) etl_sigclean_hold();
    for (unsigned i = 0; st == ETL_OK && i < n; i++) {
        etl_file_info fi;
        if (etl_stat(dst[i], false, &fi) != 0) {
            if (errno != ENOENT) st = ETL_E_IO, etl_diag_set(diag, st, UINT64_MAX, "%s: %s", dst[i], strerror(errno));
        } else if (!fi.is_reg && !fi.is_link) { /* not ours to move: a directory of someone's */
            st = ETL_E_IO;
            etl_diag_set(diag, st, UINT64_MAX, "%s: not a regular file, where a table goes", dst[i]);
        } else if (etl_rename(dst[i], old[i]) != 0) {
            st = ETL_E_IO;
            etl_diag_set(diag, st, UINT64_MAX, "%s: cannot move the old file aside: %s", dst[i], strerror(errno));
        } else {
            aside |= 1u << i;
        }
    }
    for (unsigned i = 0; st == ETL_OK && i < n; i++) {
        if (!(of->ours >> i & 1u)) continue;
        if (etl_rename_new(src[i], dst[i]) != 0) { /* its place is empty now: what appeared there since stays */
            st = ETL_E_IO;
            etl_diag_set(diag, st, UINT64_MAX, "%s: cannot move %s%s into place: %s", path, of->names[i], of->ext,
                         strerror(errno));
        } else {
            in |= 1u << i;
        }
    }
    if (st == ETL_E_IO) {
        /* Undone, last first: ours back into the temporary directory (discard removes them), theirs back. */
        char left[512] = "";
        size_t k = 0;
        for (unsigned i = n; i-- > 0;) {
            if (in >> i & 1u && etl_rename(dst[i], src[i]) != 0 && !(aside >> i & 1u)) etl_unlink(dst[i]);
            if (aside >> i & 1u && etl_rename(old[i], dst[i]) != 0 && k < sizeof left)
                k += (size_t)snprintf(left + k, sizeof left - k, "%s %s", k ? "," : "", old[i]);
        }
        size_t m = diag ? strlen(diag->msg) : 0;
        if (diag)
            snprintf(diag->msg + m, sizeof diag->msg - m, k ? "; the old files not put back are at:%s" : "; %s is as it was",
                     k ? left : path);
    } else if (st == ETL_OK) {
        for (unsigned i = 0; i < n; i++)
            if (aside >> i & 1u && etl_unlink(old[i]) != 0 && st == ETL_OK) {
                st = ETL_E_IO;
                etl_diag_set(diag, st, UINT64_MAX, "%s: replaced, but the old %s%s stays at %s: %s", path, of->names[i],
                             of->ext, old[i], strerror(errno));
            }
    }
    if (st != ETL_E_NOMEM) etl_sigclean_release();
    for (unsigned i = 0; i < n; i++) free(dst[i]), free(src[i]), free(old[i]);
    return st;
}

etl_status etl_outfile_commit(etl_outfile *of, const char *path, etl_diag *diag)
{
    if (!of->tmp) return ETL_OK;
    if (of->dir && of->exists && !of->is_link) return replace_files(of, path, diag); /* discard removes the emptied tmp */
    /* rename() replaces a link to a file, not one to a directory: a directory output removes the link first. */
    bool held = of->dir && of->is_link;
    if (held) etl_sigclean_hold(); /* no signal between the link's removal and the directory's rename */
    if (held && etl_unlink(of->target) != 0 && errno != ENOENT) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot replace the symbolic link: %s", path, strerror(errno));
        etl_sigclean_release();
        return ETL_E_IO;
    }
    /* Nothing was there at the check: what another program put there since is not ours to replace, --force or not. */
    if ((of->exists ? etl_rename(of->tmp, of->target) : etl_rename_new(of->tmp, of->target)) != 0) {
        if (!of->exists && errno == EEXIST)
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: made by another program while this one wrote; left as it is, "
                         "nothing written", path);
        else
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: cannot rename %s into place: %s", path, of->tmp,
                         strerror(errno));
        if (held) etl_sigclean_release();
        return ETL_E_IO;
    }
    if (held) etl_sigclean_release();
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
