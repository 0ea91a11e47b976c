/* platform_posix.c - platform.h on Linux and other POSIX systems (platform_win32.c is Windows'). */
#ifndef _WIN32
/* mkostemp, sched_getaffinity, madvise(MADV_DONTNEED) (glibc makes posix_madvise's a no-op), fchmod/fchown. */
#define _GNU_SOURCE
#include "base/platform.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void etl_platform_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
}

static void info_from(const struct stat *st, etl_file_info *fi)
{
    memset(fi, 0, sizeof *fi);
    fi->is_reg = S_ISREG(st->st_mode);
    fi->is_dir = S_ISDIR(st->st_mode);
    fi->is_link = S_ISLNK(st->st_mode);
    fi->size = st->st_size > 0 ? (uint64_t)st->st_size : 0;
    fi->has_id = true;
    fi->dev = (uint64_t)st->st_dev;
    fi->ino = (uint64_t)st->st_ino;
    fi->mode = (unsigned)st->st_mode & 07777;
    fi->uid = (uint32_t)st->st_uid;
    fi->gid = (uint32_t)st->st_gid;
}

int etl_stat(const char *path, bool follow, etl_file_info *fi)
{
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) != 0) return -1;
    info_from(&st, fi);
    return 0;
}

int etl_fstat(int fd, etl_file_info *fi)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    info_from(&st, fi);
    return 0;
}

int etl_open_read(const char *path) { return open(path, O_RDONLY | O_CLOEXEC); }

FILE *etl_fopen(const char *path, const char *mode) { return fopen(path, mode); }

int etl_create_new(const char *path, unsigned mode)
{
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
}

int etl_mkdir(const char *path) { return mkdir(path, 0777); }
int etl_rmdir(const char *path) { return rmdir(path); }
int etl_unlink(const char *path) { return unlink(path); }
int etl_rename(const char *from, const char *to) { return rename(from, to); }

int etl_rename_new(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    /* EEXIST among the rest; EPERM: a container's seccomp filter refusing an unknown system call */
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP && errno != EPERM) return -1;
#endif
    struct stat st;
    if (lstat(to, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}
int etl_writable(const char *path) { return access(path, W_OK); }

void etl_copy_mode(int fd, const etl_file_info *fi)
{
    if (fchown(fd, fi->uid, fi->gid) != 0) { /* only root may give a file away */ }
    fchmod(fd, fi->mode);
}

long long etl_pread(int fd, void *dst, size_t n, uint64_t off) { return pread(fd, dst, n, (off_t)off); }
long long etl_pwrite(int fd, const void *src, size_t n, uint64_t off) { return pwrite(fd, src, n, (off_t)off); }
int etl_fsync(int fd) { return fsync(fd); }

void *etl_mmap_read(int fd, size_t size)
{
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

void etl_munmap(void *p, size_t size) { munmap(p, size); }
void etl_mem_release(void *p, size_t n) { madvise(p, n, MADV_DONTNEED); }

void etl_mem_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + n) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: refused, the pages stay small */
#else
    (void)p, (void)n;
#endif
}
size_t etl_page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

const char *etl_getenv(const char *name) { return getenv(name); }
const char *etl_llvm_install_hint(void) { return "Debian: apt-get install llvm"; }

int etl_write_errno(FILE *f)
{
    (void)f;
    return errno;
}

/* tmpfile(3) ignores TMPDIR, so a user with a small /tmp could not move the spill. */
const char *etl_temp_dir(void)
{
    const char *d = etl_getenv("TMPDIR");
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
    if (fd >= 0 && unlink(path) != 0) { /* unlinked at once: gone with the process, whatever happens */
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

/* SIGPIPE: a reader gone from the pipe the run writes to (synth --truth - | head) ends it too. */
static const int term_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ, SIGPIPE};
static void (*term_clean)(void);
static atomic_int term_installed;
/*
 * etl_termination_hold: held sections now running; the signal one of them put off; set once a
 * signal came (a section begun after it waits for the end instead of starting).
 */
static atomic_int term_hold, term_pending, term_ending;

/* The signal's default action, taken once the handler returns (the signal is blocked until then). */
static void default_action(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig);
}

static void on_term_signal(int sig)
{
    int saved = errno;
    /* Pending first, then the count: a release between the two still finds the signal. */
    atomic_store(&term_pending, sig);
    atomic_store(&term_ending, 1);
    if (atomic_load(&term_hold) > 0) { /* etl_termination_release sends it again */
        errno = saved;
        return;
    }
    atomic_store(&term_pending, 0);
    term_clean();
    default_action(sig);
    errno = saved;
}

/*
 * SIGBUS: a mapped input shrunk under the run (a log rotated, a file copied in over it). The read
 * cannot be put off (returning faults again) nor finished: the names go now, in a held section
 * too (the process ends either way), and the fault ends the process as it would have.
 */
static void on_fault_signal(int sig)
{
    atomic_store(&term_ending, 1);
    term_clean();
    default_action(sig); /* a SIGBUS sent by kill: pending until the handler returns; a fault: faults again */
}

void etl_on_termination(void (*clean)(void))
{
    if (atomic_exchange(&term_installed, 1)) return;
    term_clean = clean;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term_signal;
    sa.sa_flags = SA_RESTART; /* a signal put off returns to the call it interrupted */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof term_sigs / sizeof term_sigs[0]; i++) sigaddset(&sa.sa_mask, term_sigs[i]);
    for (size_t i = 0; i < sizeof term_sigs / sizeof term_sigs[0]; i++) {
        struct sigaction old;
        /* Ignored (nohup) or handled by the program that links us: left as it is. */
        if (sigaction(term_sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        sigaction(term_sigs[i], &sa, NULL);
    }
    struct sigaction old;
    sa.sa_handler = on_fault_signal;
    sa.sa_flags = 0;
    if (sigaction(SIGBUS, NULL, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(SIGBUS, &sa, NULL);
}

void etl_termination_hold(void)
{
    /* Inside a section (nested, or another thread's), this one ends before the signal's end too. */
    if (atomic_fetch_add(&term_hold, 1) > 0 || !atomic_load(&term_ending)) return;
    /* A signal came already and is ending the process: no new section; this thread waits for the end. */
    etl_termination_release();
    for (;;) pause();
}

void etl_termination_release(void)
{
    if (atomic_fetch_sub(&term_hold, 1) != 1) return;
    int sig = atomic_exchange(&term_pending, 0);
    /* To the process, not this thread: a thread of etl_thread_start blocks the user's signals. */
    if (sig) kill(getpid(), sig);
}

/*
 * The stream's bytes, through stdio's cookie: glibc's open_memstream loses a write it has no memory to
 * grow for (EOF, no error flag: a character missing from the middle), and its close can free the buffer
 * and still succeed. Here a failed growth is sticky: every later write fails, and so does the close.
 */
static ssize_t memstream_write(void *cookie, const char *p, size_t n)
{
    etl_memstream *ms = cookie;
    size_t used = *ms->n;
    if (ms->failed || n > SIZE_MAX - used - 1) {
        ms->failed = true;
        errno = ENOMEM;
        return -1;
    }
    if (used + n + 1 > ms->cap) {
        size_t cap = ms->cap ? ms->cap : 4096;
        while (cap < used + n + 1) cap = cap > SIZE_MAX / 2 ? used + n + 1 : cap * 2;
        char *b = realloc(*ms->buf, cap);
        if (!b) {
            ms->failed = true;
            errno = ENOMEM;
            return -1;
        }
        *ms->buf = b;
        ms->cap = cap;
    }
    memcpy(*ms->buf + used, p, n);
    *ms->n = used + n;
    (*ms->buf)[used + n] = 0;
    return (ssize_t)n;
}

FILE *etl_memstream_open(etl_memstream *ms, char **buf, size_t *n)
{
    ms->buf = buf;
    ms->n = n;
    ms->dir = NULL; /* memory alone */
    ms->cap = 0;
    ms->failed = false;
    *buf = NULL;
    *n = 0;
    cookie_io_functions_t io = {NULL, memstream_write, NULL, NULL};
    return ms->f = fopencookie(ms, "w", io);
}

int etl_memstream_close(etl_memstream *ms)
{
    errno = 0;
    bool ok = fclose(ms->f) == 0 && !ms->failed; /* the flush's write fails the close too */
    if (ok && !*ms->buf && !(*ms->buf = calloc(1, 1))) ok = false; /* nothing written: "" */
    if (ok) return 0;
    int e = errno ? errno : ENOMEM;
    free(*ms->buf);
    *ms->buf = NULL;
    *ms->n = 0;
    errno = e;
    return EOF;
}

struct etl_os_thread {
    pthread_t th;
    void (*fn)(void *);
    void *arg;
};

static void *thread_main(void *p)
{
    etl_os_thread *t = p;
    t->fn(t->arg);
    return NULL;
}

etl_os_thread *etl_thread_start(void (*fn)(void *), void *arg)
{
    etl_os_thread *t = malloc(sizeof *t);
    if (!t) return NULL;
    t->fn = fn;
    t->arg = arg;
    /* The new thread inherits the mask: blocked there, the user's signals reach the caller's threads. */
    static const int own[] = {SIGXFSZ, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    sigset_t block, old;
    sigfillset(&block);
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) sigdelset(&block, own[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(&t->th, NULL, thread_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void etl_thread_join(etl_os_thread *t)
{
    if (!t) return;
    pthread_join(t->th, NULL);
    free(t);
}

struct etl_mutex {
    pthread_mutex_t mu;
};

etl_mutex *etl_mutex_new(void)
{
    etl_mutex *m = malloc(sizeof *m);
    if (m && pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void etl_mutex_lock(etl_mutex *m) { pthread_mutex_lock(&m->mu); }
void etl_mutex_unlock(etl_mutex *m) { pthread_mutex_unlock(&m->mu); }

void etl_mutex_free(etl_mutex *m)
{
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

struct etl_cond {
    pthread_cond_t cv;
};

etl_cond *etl_cond_new(void)
{
    etl_cond *c = malloc(sizeof *c);
    if (c && pthread_cond_init(&c->cv, NULL) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void etl_cond_wait(etl_cond *c, etl_mutex *m) { pthread_cond_wait(&c->cv, &m->mu); }
void etl_cond_broadcast(etl_cond *c) { pthread_cond_broadcast(&c->cv); }

void etl_cond_free(etl_cond *c)
{
    if (!c) return;
    pthread_cond_destroy(&c->cv);
    free(c);
}

void etl_call_once(etl_once_flag *flag, void (*fn)(void))
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* one for every flag: they are rare and quick */
    if (atomic_load_explicit(&flag->done, memory_order_acquire)) return;
    pthread_mutex_lock(&mu);
    if (!atomic_load_explicit(&flag->done, memory_order_relaxed)) {
        fn();
        atomic_store_explicit(&flag->done, 1, memory_order_release);
    }
    pthread_mutex_unlock(&mu);
}

int etl_dir_each(const char *path, int (*fn)(void *ctx, const char *name, bool is_dir), void *ctx)
{
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *e;
    int rc = 0;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        bool dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) { /* file systems that do not say: ask */
            struct stat st;
            dir = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        if (fn(ctx, e->d_name, dir)) break;
        errno = 0;
    }
    int e2 = errno;
    closedir(d);
    if (e2) {
        errno = e2;
        rc = -1;
    }
    return rc;
}

unsigned etl_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

bool etl_isatty(int fd) { return isatty(fd) == 1; }

const char *etl_path_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

const char *etl_path_sep(const char *dir, char *sep)
{
    size_t n = strlen(dir);
    if (sep) *sep = '/';
    return n && dir[n - 1] == '/' ? "" : "/";
}

bool etl_name_same(const char *a, const char *b) { return strcmp(a, b) == 0; }

#endif
