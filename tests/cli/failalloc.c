/*
 * failalloc.c - an LD_PRELOAD shim that fails one chosen allocation (NULL, errno ENOMEM), for
 * tests/cli/oom.sh (from explore17's tool). Counted: malloc, calloc, realloc (not realloc(p, 0)),
 * posix_memalign, aligned_alloc, memalign, from this library's constructor on (glibc's strdup,
 * fopen, open_memstream... call malloc, so they count too).
 *   FAILALLOC_N=n        call n (1-based) fails; unset or 0: none (count only)
 *   FAILALLOC_COUNT=FILE at exit, "calls=<total>" written to FILE
 * Linux (glibc) only, and not under ASan, whose allocator it cannot wrap.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*r_malloc)(size_t);
static void *(*r_calloc)(size_t, size_t);
static void *(*r_realloc)(void *, size_t);
static void (*r_free)(void *);
static int (*r_posix_memalign)(void **, size_t, size_t);
static void *(*r_aligned_alloc)(size_t, size_t);
static void *(*r_memalign)(size_t, size_t);

/* dlsym may calloc before r_calloc is known: served from here. */
static char boot[65536];
static size_t boot_used;
static int in_boot(void *p) { return (char *)p >= boot && (char *)p < boot + sizeof boot; }
static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (boot_used + n > sizeof boot) return NULL;
    void *p = boot + boot_used;
    boot_used += n;
    return p;
}

static atomic_int armed;
static atomic_ulong calls;
static unsigned long fail_n;
static const char *count_file;
static int resolving;

static void resolve(void)
{
    if (r_malloc || resolving) return;
    resolving = 1;
    r_calloc = dlsym(RTLD_NEXT, "calloc");
    r_malloc = dlsym(RTLD_NEXT, "malloc");
    r_realloc = dlsym(RTLD_NEXT, "realloc");
    r_free = dlsym(RTLD_NEXT, "free");
    r_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    r_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    r_memalign = dlsym(RTLD_NEXT, "memalign");
    resolving = 0;
}

static int should_fail(void)
{
    if (!atomic_load(&armed)) return 0;
    unsigned long k = atomic_fetch_add(&calls, 1) + 1;
    return fail_n && k == fail_n;
}

__attribute__((constructor)) static void fa_init(void)
{
    resolve();
    const char *s = getenv("FAILALLOC_N");
    fail_n = s ? strtoul(s, NULL, 10) : 0;
    count_file = getenv("FAILALLOC_COUNT");
    atomic_store(&armed, 1);
}

__attribute__((destructor)) static void fa_fini(void)
{
    if (!count_file) return;
    atomic_store(&armed, 0);
    int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    char b[64];
    int n = snprintf(b, sizeof b, "calls=%lu\n", (unsigned long)atomic_load(&calls));
    if (write(fd, b, (size_t)n) < 0) { /* nothing to do */ }
    close(fd);
}

void *malloc(size_t n)
{
    if (!r_malloc) {
        resolve();
        if (!r_malloc) return boot_alloc(n);
    }
    if (should_fail()) { errno = ENOMEM; return NULL; }
    return r_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (!r_calloc) {
        resolve();
        if (!r_calloc) {
            void *p = boot_alloc(a * b);
            if (p) memset(p, 0, a * b);
            return p;
        }
    }
    if (should_fail()) { errno = ENOMEM; return NULL; }
    return r_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (!r_realloc) resolve();
    if (in_boot(p)) { /* out of the boot area */
        void *q = malloc(n);
        if (q) memcpy(q, p, n); /* may read past p's block: the boot area is ours and large enough */
        return q;
    }
    if (!(p && n == 0) && should_fail()) { errno = ENOMEM; return NULL; }
    return r_realloc(p, n);
}

void free(void *p)
{
    if (!p || in_boot(p)) return;
    if (!r_free) resolve();
    r_free(p);
}

int posix_memalign(void **out, size_t al, size_t n)
{
    if (!r_posix_memalign) resolve();
    if (should_fail()) return ENOMEM;
    return r_posix_memalign(out, al, n);
}

void *aligned_alloc(size_t al, size_t n)
{
    if (!r_aligned_alloc) resolve();
    if (should_fail()) { errno = ENOMEM; return NULL; }
    return r_aligned_alloc(al, n);
}

void *memalign(size_t al, size_t n)
{
    if (!r_memalign) resolve();
    if (should_fail()) { errno = ENOMEM; return NULL; }
    return r_memalign(al, n);
}
