/*
 * platform_win32.c - platform.h on Windows (mingw-w64), on the Win32 API: UTF-8 names
 * converted to UTF-16 for every wide call, CreateFileMapping for mmap, MoveFileExW for
 * rename, a console control handler for the signals. platform_posix.c is the rest's.
 */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <shellapi.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "base/platform.h"

/* Win32's error codes as the errno values the callers' messages know. */
static int errno_of(DWORD e)
{
    switch (e) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
        return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_WRITE_PROTECT:
        return EACCES;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
        return EEXIST;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
        return ENOSPC;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
        return ENOMEM;
    case ERROR_DIR_NOT_EMPTY:
        return ENOTEMPTY;
    case ERROR_DIRECTORY:
        return ENOTDIR;
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME:
    case ERROR_FILENAME_EXCED_RANGE:
        return ENAMETOOLONG;
    default:
        return EIO;
    }
}

static int fail_win(void)
{
    errno = errno_of(GetLastError());
    return -1;
}

/* UTF-8 to a new UTF-16 string (free it), or NULL with errno. */
static wchar_t *wide(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
    if (n <= 0) {
        errno = EINVAL;
        return NULL;
    }
    wchar_t *w = malloc((size_t)n * sizeof *w);
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
    return w;
}

/* UTF-16 to a new UTF-8 string (free it), or NULL. */
static char *narrow(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    if (n <= 0) return NULL;
    char *s = malloc((size_t)n);
    if (s) WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
    return s;
}

void etl_platform_init(int *argc, char ***argv)
{
    /* Bytes in, bytes out: no "\r\n" made of "\n", no ^Z taken for the end of a piped trace. */
    _setmode(0, _O_BINARY);
    _setmode(1, _O_BINARY);
    _setmode(2, _O_BINARY);
    int n = 0;
    wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &n);
    if (!wargv) return;
    /* Kept for the life of the process, as the argv it replaces. */
    char **args = calloc((size_t)n + 1, sizeof *args);
    for (int i = 0; args && i < n; i++)
        if (!(args[i] = narrow(wargv[i]))) {
            for (int j = 0; j < i; j++) free(args[j]);
            free(args);
            args = NULL;
        }
    LocalFree(wargv);
    if (!args) return; /* out of memory this early: the ANSI argv it is */
    *argc = n;
    *argv = args;
}

static void info_from(const BY_HANDLE_FILE_INFORMATION *h, bool follow, etl_file_info *fi)
{
    memset(fi, 0, sizeof *fi);
    fi->is_link = !follow && (h->dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT);
    fi->is_dir = !fi->is_link && (h->dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
    fi->is_reg = !fi->is_link && !fi->is_dir;
    fi->size = (uint64_t)h->nFileSizeHigh << 32 | h->nFileSizeLow;
    fi->has_id = true;
    fi->dev = h->dwVolumeSerialNumber;
    fi->ino = (uint64_t)h->nFileIndexHigh << 32 | h->nFileIndexLow;
}

static int info_of_handle(HANDLE h, bool follow, etl_file_info *fi)
{
    DWORD type = GetFileType(h);
    if (type != FILE_TYPE_DISK) { /* a pipe or a console: neither regular nor a directory, no identity */
        memset(fi, 0, sizeof *fi);
        return 0;
    }
    BY_HANDLE_FILE_INFORMATION bh;
    if (!GetFileInformationByHandle(h, &bh)) return fail_win();
    info_from(&bh, follow, fi);
    return 0;
}

int etl_stat(const char *path, bool follow, etl_file_info *fi)
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    /* Backup semantics opens a directory too; without following, the link itself. */
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS | (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT), NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE) return fail_win();
    int r = info_of_handle(h, follow, fi);
    CloseHandle(h);
    return r;
}

int etl_fstat(int fd, etl_file_info *fi)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    /* A handle inherited without the right to read its attributes (wine's standard input redirected
     * from a file): a stream read to its end, as a pipe, without an identity. */
    if (info_of_handle(h, true, fi) != 0) memset(fi, 0, sizeof *fi);
    return 0;
}

/* A descriptor on a new handle; share_delete lets the name be deleted while it is open. */
static int open_handle(const char *path, DWORD access, DWORD disposition, DWORD flags, int oflags)
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    HANDLE h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, disposition,
                           flags, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE) return fail_win();
    int fd = _open_osfhandle((intptr_t)h, oflags | _O_BINARY | _O_NOINHERIT);
    if (fd < 0) {
        CloseHandle(h);
        errno = EMFILE;
    }
    return fd;
}

int etl_open_read(const char *path)
{
    return open_handle(path, GENERIC_READ, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, _O_RDONLY);
}

int etl_create_new(const char *path, unsigned mode)
{
    (void)mode;
    return open_handle(path, GENERIC_WRITE | GENERIC_READ, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, _O_RDWR);
}

FILE *etl_fopen(const char *path, const char *mode)
{
    /* "x" is C11's, which msvcrt's fopen does not know: a new file by CREATE_NEW, then a stream on it. */
    if (strchr(mode, 'x')) {
        char m[8];
        size_t k = 0;
        for (const char *p = mode; *p && k + 1 < sizeof m; p++)
            if (*p != 'x') m[k++] = *p;
        m[k] = 0;
        int fd = etl_create_new(path, 0666);
        if (fd < 0) return NULL;
        FILE *f = _fdopen(fd, m);
        if (!f) _close(fd);
        return f;
    }
    wchar_t *w = wide(path), wm[8];
    if (!w) return NULL;
    size_t k = 0;
    for (; mode[k] && k + 1 < sizeof wm / sizeof wm[0]; k++) wm[k] = (wchar_t)(unsigned char)mode[k];
    wm[k] = 0;
    FILE *f = _wfopen(w, wm);
    free(w);
    return f;
}

/* A wide call on one name: 0, or -1 with errno. */
static int on_name(const char *path, BOOL(WINAPI *call)(LPCWSTR))
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    BOOL ok = call(w);
    free(w);
    return ok ? 0 : fail_win();
}

static BOOL WINAPI create_dir(LPCWSTR w) { return CreateDirectoryW(w, NULL); }

int etl_mkdir(const char *path) { return on_name(path, create_dir); }
int etl_rmdir(const char *path) { return on_name(path, RemoveDirectoryW); }
int etl_unlink(const char *path) { return on_name(path, DeleteFileW); }

int etl_rename(const char *from, const char *to)
{
    wchar_t *wf = wide(from), *wt = wf ? wide(to) : NULL;
    BOOL ok = wt && MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    int r = ok ? 0 : wt ? fail_win() : -1;
    free(wf);
    free(wt);
    return r;
}

int etl_writable(const char *path)
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    DWORD a = GetFileAttributesW(w);
    free(w);
    if (a == INVALID_FILE_ATTRIBUTES) return fail_win();
    if (a & FILE_ATTRIBUTE_READONLY) {
        errno = EACCES;
        return -1;
    }
    return 0;
}

void etl_copy_mode(int fd, const etl_file_info *fi)
{
    (void)fd; /* Windows' ACLs come from the directory, as for any new file */
    (void)fi;
}

static long long positioned(int fd, void *buf, size_t n, uint64_t off, bool write)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    /* An OVERLAPPED offset on a synchronous handle: one call, no seek another thread could race. */
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.Offset = (DWORD)off;
    ov.OffsetHigh = (DWORD)(off >> 32);
    DWORD k = 0, want = n > 0x40000000u ? 0x40000000u : (DWORD)n;
    BOOL ok = write ? WriteFile(h, buf, want, &k, &ov) : ReadFile(h, buf, want, &k, &ov);
    if (!ok) {
        if (!write && GetLastError() == ERROR_HANDLE_EOF) return 0;
        return fail_win();
    }
    return (long long)k;
}

long long etl_pread(int fd, void *dst, size_t n, uint64_t off) { return positioned(fd, dst, n, off, false); }
long long etl_pwrite(int fd, const void *src, size_t n, uint64_t off) { return positioned(fd, (void *)src, n, off, true); }

int etl_fsync(int fd)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    return FlushFileBuffers(h) ? 0 : fail_win();
}

void *etl_mmap_read(int fd, size_t size)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE) return NULL;
    HANDLE m = CreateFileMappingW(h, NULL, PAGE_READONLY, 0, 0, NULL);
    if (!m) return NULL;
    void *p = MapViewOfFile(m, FILE_MAP_READ, 0, 0, size);
    CloseHandle(m); /* the view keeps the mapping */
    return p;
}

void etl_munmap(void *p, size_t size)
{
    (void)size;
    UnmapViewOfFile(p);
}

/* Clean pages of a read-only view: unlocking them out of the working set lets Windows drop them. */
void etl_mem_release(void *p, size_t n) { VirtualUnlock(p, n); }

size_t etl_page_size(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwPageSize;
}

const char *etl_temp_dir(void)
{
    static char dir[MAX_PATH * 3 + 1];
    /* TMPDIR as on POSIX (a user's choice made for etlkit), else Windows' own: %TMP%, %TEMP%, the profile's. */
    const char *d = getenv("TMPDIR");
    if (d && *d) return d;
    if (!dir[0]) {
        wchar_t w[MAX_PATH + 1];
        DWORD n = GetTempPathW(MAX_PATH + 1, w);
        if (n == 0 || n > MAX_PATH) return ".";
        if (n > 1 && (w[n - 1] == L'\\' || w[n - 1] == L'/')) w[n - 1] = 0; /* callers add the separator */
        if (!WideCharToMultiByte(CP_UTF8, 0, w, -1, dir, (int)sizeof dir, NULL, NULL)) return ".";
    }
    return dir;
}

int etl_temp_open(void)
{
    static atomic_uint seq;
    const char *dir = etl_temp_dir();
    size_t n = strlen(dir) + 64;
    char *path = malloc(n);
    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    int fd = -1;
    for (unsigned i = 0; fd < 0 && i < 100; i++) {
        snprintf(path, n, "%s\\etlkit-%lu-%u-%lu.tmp", dir, (unsigned long)GetCurrentProcessId(),
                 atomic_fetch_add(&seq, 1), (unsigned long)GetTickCount());
        /* Delete-on-close: gone with the last handle, the process's end included, as an unlinked file on POSIX. */
        fd = open_handle(path, GENERIC_READ | GENERIC_WRITE, CREATE_NEW,
                         FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, _O_RDWR);
        if (fd < 0 && errno != EEXIST) break;
    }
    int e = errno;
    free(path);
    errno = e;
    return fd;
}

static void (*term_clean)(void);
static atomic_int term_installed;
static atomic_int term_hold, term_ending; /* held sections now running; set once the end has begun */

/* Runs on a thread of its own. FALSE: the next handler, the default one, ends the process as usual. */
static BOOL WINAPI on_console_event(DWORD ev)
{
    if (ev == CTRL_C_EVENT || ev == CTRL_BREAK_EVENT || ev == CTRL_CLOSE_EVENT || ev == CTRL_LOGOFF_EVENT ||
        ev == CTRL_SHUTDOWN_EVENT) {
        /* No new held section from here; those running (a few renames) finish first. */
        atomic_store(&term_ending, 1);
        while (atomic_load(&term_hold) > 0) Sleep(1);
        term_clean();
    }
    return FALSE;
}

void etl_termination_hold(void)
{
    if (atomic_fetch_add(&term_hold, 1) > 0 || !atomic_load(&term_ending)) return;
    /* The end has begun: no new section; this thread waits for it. */
    atomic_fetch_sub(&term_hold, 1);
    for (;;) Sleep(INFINITE);
}

void etl_termination_release(void) { atomic_fetch_sub(&term_hold, 1); }

void etl_on_termination(void (*clean)(void))
{
    if (atomic_exchange(&term_installed, 1)) return;
    term_clean = clean;
    SetConsoleCtrlHandler(on_console_event, TRUE);
}

FILE *etl_memstream_open(etl_memstream *ms, char **buf, size_t *n)
{
    ms->buf = buf;
    ms->n = n;
    *buf = NULL;
    *n = 0;
    int fd = etl_temp_open();
    ms->f = fd < 0 ? NULL : _fdopen(fd, "w+b");
    if (fd >= 0 && !ms->f) _close(fd);
    return ms->f;
}

int etl_memstream_close(etl_memstream *ms)
{
    FILE *f = ms->f;
    char *b = NULL;
    long long size = fflush(f) == 0 ? _ftelli64(f) : -1;
    if (size >= 0 && (uint64_t)size < SIZE_MAX && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)size + 1))) {
        if (fread(b, 1, (size_t)size, f) != (size_t)size) {
            free(b);
            b = NULL;
        } else {
            b[size] = 0;
        }
    }
    fclose(f); /* the file is deleted on close */
    *ms->buf = b;
    *ms->n = b ? (size_t)size : 0;
    return b ? 0 : EOF;
}

struct etl_os_thread {
    HANDLE h;
    void (*fn)(void *);
    void *arg;
};

static DWORD WINAPI thread_main(LPVOID p)
{
    etl_os_thread *t = p;
    t->fn(t->arg);
    return 0;
}

etl_os_thread *etl_thread_start(void (*fn)(void *), void *arg)
{
    etl_os_thread *t = malloc(sizeof *t);
    if (!t) return NULL;
    t->fn = fn;
    t->arg = arg;
    /* 8 MiB reserved, as Linux gives a thread, not Windows' 1 MiB. */
    if (!(t->h = CreateThread(NULL, 8u << 20, thread_main, t, STACK_SIZE_PARAM_IS_A_RESERVATION, NULL))) {
        free(t);
        return NULL;
    }
    return t;
}

void etl_thread_join(etl_os_thread *t)
{
    if (!t) return;
    WaitForSingleObject(t->h, INFINITE);
    CloseHandle(t->h);
    free(t);
}

struct etl_mutex {
    SRWLOCK lk;
};

etl_mutex *etl_mutex_new(void)
{
    etl_mutex *m = malloc(sizeof *m);
    if (m) InitializeSRWLock(&m->lk);
    return m;
}

void etl_mutex_lock(etl_mutex *m) { AcquireSRWLockExclusive(&m->lk); }
void etl_mutex_unlock(etl_mutex *m) { ReleaseSRWLockExclusive(&m->lk); }
void etl_mutex_free(etl_mutex *m) { free(m); }

struct etl_cond {
    CONDITION_VARIABLE cv;
};

etl_cond *etl_cond_new(void)
{
    etl_cond *c = malloc(sizeof *c);
    if (c) InitializeConditionVariable(&c->cv);
    return c;
}

void etl_cond_wait(etl_cond *c, etl_mutex *m) { SleepConditionVariableSRW(&c->cv, &m->lk, INFINITE, 0); }
void etl_cond_broadcast(etl_cond *c) { WakeAllConditionVariable(&c->cv); }
void etl_cond_free(etl_cond *c) { free(c); }

void etl_call_once(etl_once_flag *flag, void (*fn)(void))
{
    static SRWLOCK lk = SRWLOCK_INIT; /* one for every flag: they are rare and quick */
    if (atomic_load_explicit(&flag->done, memory_order_acquire)) return;
    AcquireSRWLockExclusive(&lk);
    if (!atomic_load_explicit(&flag->done, memory_order_relaxed)) {
        fn();
        atomic_store_explicit(&flag->done, 1, memory_order_release);
    }
    ReleaseSRWLockExclusive(&lk);
}

int etl_dir_each(const char *path, int (*fn)(void *ctx, const char *name, bool is_dir), void *ctx)
{
    size_t n = strlen(path);
    char *pat = malloc(n + 3);
    if (!pat) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(pat, path, n);
    memcpy(pat + n, "/*", 3);
    wchar_t *w = wide(pat);
    free(pat);
    if (!w) return -1;
    WIN32_FIND_DATAW fd;
    HANDLE h = FindFirstFileW(w, &fd);
    free(w);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError();
        if (e == ERROR_FILE_NOT_FOUND) return 0; /* empty (not even "." on some file systems) */
        errno = errno_of(e);
        return -1;
    }
    int rc = 0;
    do {
        if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0) continue;
        char name[MAX_PATH * 4];
        if (WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, name, sizeof name, NULL, NULL) <= 0) continue;
        bool dir = (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) && !(fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT);
        if (fn(ctx, name, dir)) break;
    } while (FindNextFileW(h, &fd));
    FindClose(h);
    return rc;
}

unsigned etl_cpu_count(void)
{
    DWORD_PTR proc = 0, sys = 0;
    unsigned n = 0;
    if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys))
        for (; proc; proc &= proc - 1) n++;
    if (n == 0) {
        SYSTEM_INFO si;
        GetSystemInfo(&si);
        n = si.dwNumberOfProcessors;
    }
    return n ? n : 1;
}

bool etl_isatty(int fd)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    DWORD mode;
    /* _isatty says yes for NUL too; a console handle has a console mode. */
    return h != INVALID_HANDLE_VALUE && GetConsoleMode(h, &mode);
}

const char *etl_path_base(const char *path)
{
    const char *b = path;
    if (((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z') && path[1] == ':') b = path + 2;
    for (const char *p = b; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    return b;
}

#endif
