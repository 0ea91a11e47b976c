#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "base/platform.h"

static int nib(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

size_t tu_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int hi = -1;
    for (; *hex; hex++) {
        int v = nib((unsigned char)*hex);
        if (v < 0) continue;
        if (hi < 0) {
            hi = v;
        } else {
            if (n < cap) out[n] = (uint8_t)(hi << 4 | v);
            n++;
            hi = -1;
        }
    }
    return n;
}

uint64_t tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int tu_tmpdir_make(char *buf, size_t n, const char *name)
{
    int k = snprintf(buf, n, "%s/etlkit-%s-XXXXXX", etl_temp_dir(), name);
    if (k < 0 || (size_t)k >= n) return -1;
    return mkdtemp(buf) ? 0 : -1;
}

/* path and all below it: a link or file unlinked, a folder emptied first. */
static int remove_tree(const char *path)
{
    etl_file_info fi;
    if (etl_stat(path, false, &fi) != 0) return -1;
    if (!fi.is_dir) return etl_unlink(path);
    if (fi.is_link) return etl_rmdir(path); /* Windows' link to a folder: the link alone */
    DIR *d = opendir(path);
    if (!d) return -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = -1;
            continue;
        }
        snprintf(p, len, "%s/%s", path, e->d_name);
        if (remove_tree(p) != 0) rc = -1;
        free(p);
    }
    closedir(d);
    return etl_rmdir(path) == 0 ? rc : -1;
}

int tu_tmpdir_remove(const char *dir)
{
    if (!dir || !dir[0]) return -1;
    if (getenv("ETLKIT_KEEP_TMP")) return 0;
    return remove_tree(dir);
}

#ifdef _WIN32
#include <direct.h>
#include <errno.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>

char *tu_mkdtemp(char *tmpl)
{
    size_t n = strlen(tmpl);
    if (n < 6 || strcmp(tmpl + n - 6, "XXXXXX") != 0) {
        errno = EINVAL;
        return NULL;
    }
    for (unsigned i = 0; i < 100; i++) {
        memcpy(tmpl + n - 6, "XXXXXX", 6);
        if (_mktemp_s(tmpl, n + 1) != 0) return NULL;
        if (_mkdir(tmpl) == 0) return tmpl;
        if (errno != EEXIST) return NULL;
    }
    return NULL;
}

int tu_setenv(const char *name, const char *value, int overwrite)
{
    if (!overwrite && getenv(name)) return 0;
    return _putenv_s(name, value) == 0 ? 0 : -1;
}

int tu_unsetenv(const char *name) { return _putenv_s(name, "") == 0 ? 0 : -1; } /* "" removes it */
#endif
