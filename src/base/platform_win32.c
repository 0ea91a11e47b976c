/*
 * platform_win32.c - platform.h on Windows (mingw-w64), on the Win32 API: UTF-8 names
 * converted to UTF-16 for every wide call, CreateFileMapping for mmap, MoveFileExW for
 * rename, a console control handler for the signals, the wildcards a POSIX shell would
 * have expanded, a console written in UTF-16. platform_posix.c is the rest's.
 */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <shellapi.h>
#include <errno.h>
#include <limits.h>
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
    case ERROR_BAD_PATHNAME:
        return ENOENT;
    case ERROR_INVALID_NAME: /* a name no Windows file can have: * ? < > | " : or a '/' after \\?\ */
    case ERROR_INVALID_PARAMETER:
        return EINVAL;
    case ERROR_FILENAME_EXCED_RANGE:
        return ENAMETOOLONG;
    case ERROR_INVALID_HANDLE: /* CreateFileW on CON or CONIN$ in a process without a console */
        return ENXIO;
    case ERROR_NO_DATA: /* a pipe whose reader closed it (wine: not connected) */
    case ERROR_BROKEN_PIPE:
    case ERROR_PIPE_NOT_CONNECTED:
        return EPIPE;
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

/* ---- wildcards: cmd.exe and PowerShell pass * and ? as typed; a program expands them itself ---- */

/*
 * Whether each argument after the program's name holds a * or ? outside double quotes ("*.etl"
 * quoted stays as it is, as in a POSIX shell): the command line split by CommandLineToArgvW's
 * rules (2n backslashes and a quote: n and a quote that opens or closes; 2n+1: n and a quote).
 * The count of arguments, the program's name included.
 */
static int unquoted_wild(const wchar_t *p, bool *wild, int cap)
{
    if (*p == L'"') { /* the program's name: to the next quote, no escapes */
        for (p++; *p && *p != L'"'; p++) {}
        if (*p) p++;
    } else {
        while (*p && *p != L' ' && *p != L'\t') p++;
    }
    int n = 1;
    for (;;) {
        while (*p == L' ' || *p == L'\t') p++;
        if (!*p) return n;
        bool q = false, w = false;
        while (*p && (q || (*p != L' ' && *p != L'\t'))) {
            if (*p == L'\\') {
                size_t k = 0;
                for (; *p == L'\\'; p++) k++;
                if (*p == L'"' && k % 2) p++; /* an escaped quote: a character */
            } else if (*p == L'"') {
                if (q && p[1] == L'"') p++; /* "" in quotes: a quote character */
                else q = !q;
                p++;
            } else {
                if (!q && (*p == L'*' || *p == L'?')) w = true;
                p++;
            }
        }
        if (n < cap) wild[n] = w;
        n++;
    }
}

typedef struct wlist {
    wchar_t **v;
    size_t n, cap;
} wlist;

static bool wl_push(wlist *l, wchar_t *s)
{
    if (!s) return false;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        wchar_t **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            free(s);
            return false;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return true;
}

/* a, b and c joined, the first n units of a only: a new string, or NULL. */
static wchar_t *wcat(const wchar_t *a, size_t n, const wchar_t *b, const wchar_t *c)
{
    size_t nb = wcslen(b), nc = wcslen(c);
    wchar_t *r = malloc((n + nb + nc + 1) * sizeof *r);
    if (!r) return NULL;
    memcpy(r, a, n * sizeof *r);
    memcpy(r + n, b, nb * sizeof *r);
    memcpy(r + n + nb, c, (nc + 1) * sizeof *r);
    return r;
}

static bool wsep(wchar_t c) { return c == L'/' || c == L'\\'; }

/* One character of s: 2 units for a surrogate pair. */
static size_t wchar_len(const wchar_t *s) { return IS_HIGH_SURROGATE(s[0]) && IS_LOW_SURROGATE(s[1]) ? 2 : 1; }

/* Whether a name matches a pattern: * any run of characters, ? one, the others equal case aside (as NTFS compares). */
static bool wmatch(const wchar_t *p, const wchar_t *s)
{
    const wchar_t *star = NULL, *from = NULL;
    while (*s) {
        if (*p == L'*') {
            star = ++p;
            from = s;
        } else if (*p == L'?') {
            p++;
            s += wchar_len(s);
        } else if (*p && CompareStringOrdinal(p, 1, s, 1, TRUE) == CSTR_EQUAL) {
            p++;
            s++;
        } else if (star) { /* the last * takes one character more */
            p = star;
            from += wchar_len(from);
            s = from;
        } else {
            return false;
        }
    }
    while (*p == L'*') p++;
    return !*p;
}

/*
 * Appends to out what pat names, each component with * or ? matched against its directory's
 * entries (a name beginning with '.' only by a pattern that does, as a shell does); the text
 * before the first such component stays as typed. A later component without wildcards must
 * exist. false: out of memory.
 */
static bool expand(const wchar_t *pat, size_t from, wlist *out)
{
    const wchar_t *w = wcspbrk(pat + from, L"*?");
    if (!w) {
        if (GetFileAttributesW(pat) == INVALID_FILE_ATTRIBUTES) return true;
        return wl_push(out, wcat(pat, wcslen(pat), L"", L""));
    }
    size_t c0 = (size_t)(w - pat), c1 = c0;
    while (c0 > from && !wsep(pat[c0 - 1]) && pat[c0 - 1] != L':') c0--;
    while (pat[c1] && !wsep(pat[c1])) c1++;
    wchar_t *comp = wcat(pat + c0, c1 - c0, L"", L""), *dir = wcat(pat, c0, L"*", L"");
    bool ok = comp && dir;
    WIN32_FIND_DATAW fd;
    HANDLE h = ok ? FindFirstFileW(dir, &fd) : INVALID_HANDLE_VALUE;
    if (h != INVALID_HANDLE_VALUE) {
        do {
            const wchar_t *nm = fd.cFileName;
            if (wcscmp(nm, L".") == 0 || wcscmp(nm, L"..") == 0 || (nm[0] == L'.' && comp[0] != L'.') ||
                !wmatch(comp, nm))
                continue;
            if (pat[c1] && !(fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) continue; /* more below it */
            wchar_t *next = wcat(pat, c0, nm, pat + c1);
            ok = next && expand(next, c0 + wcslen(nm), out);
            free(next);
        } while (ok && FindNextFileW(h, &fd));
        FindClose(h);
    }
    free(comp);
    free(dir);
    return ok;
}

/* Name order, case aside, as a listing shows names (then ordinal: the order is total). */
static int by_name(const void *a, const void *b)
{
    const wchar_t *x = *(wchar_t *const *)a, *y = *(wchar_t *const *)b;
    int c = CompareStringOrdinal(x, -1, y, -1, TRUE);
    if (c == CSTR_EQUAL) c = CompareStringOrdinal(x, -1, y, -1, FALSE);
    return c - CSTR_EQUAL;
}

/*
 * The arguments, each one with * or ? outside quotes replaced by the paths it matches, sorted
 * (one that matches nothing stays as it is, as in a POSIX shell); NULL when out of memory.
 */
static wlist *expand_args(wchar_t **wargv, int n)
{
    bool *wild = calloc((size_t)n + 1, sizeof *wild);
    wlist *l = calloc(1, sizeof *l);
    bool ok = wild && l;
    /* a split that does not agree with CommandLineToArgvW's: nothing expanded, rather than the wrong argument */
    bool any = ok && unquoted_wild(GetCommandLineW(), wild, n) == n;
    for (int i = 0; ok && i < n; i++) {
        size_t before = l->n, skip = 0;
        /* \\?\ and \\.\ are prefixes, not wildcards */
        if (wcsncmp(wargv[i], L"\\\\?\\", 4) == 0 || wcsncmp(wargv[i], L"\\\\.\\", 4) == 0) skip = 4;
        if (any && i > 0 && wild[i] && wcspbrk(wargv[i] + skip, L"*?")) {
            ok = expand(wargv[i], skip, l);
            if (ok && l->n > before) qsort(l->v + before, l->n - before, sizeof *l->v, by_name);
        }
        if (ok && l->n == before) ok = wl_push(l, wcat(wargv[i], wcslen(wargv[i]), L"", L""));
    }
    free(wild);
    if (ok) return l;
    for (size_t i = 0; l && i < l->n; i++) free(l->v[i]);
    if (l) free(l->v);
    free(l);
    return NULL;
}

/* ---- the console: what etlkit writes (UTF-8) shown as text, whatever the console's code page ---- */

/*
 * A console shows the bytes written to it in its output code page (437 or 850: OEM), not UTF-8,
 * and a program that sets the page (SetConsoleOutputCP) changes it for the console's other
 * programs; stdio also writes an unbuffered stream a few bytes at a time, cutting characters.
 * So standard output and error, when they are the console, are a pipe: a thread reads it, keeps
 * a character cut at the end of a read for the next, and writes UTF-16 with WriteConsoleW. The
 * two share the pipe, so their lines keep their order. Redirected, they are not touched.
 */
static HANDLE con_rd, con_out, con_thread; /* the pipe's read end, the console, the thread writing to it */
static bool con_fd[3];                     /* descriptor 1 or 2 goes to the console through the pipe */

/* How many of the n bytes at b end on a whole UTF-8 character (a lead byte without its continuations: not). */
static size_t utf8_whole(const unsigned char *b, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = b[n - k];
        if ((c & 0xC0) == 0x80) continue; /* a continuation byte: its lead is further back */
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > k ? n - k : n;
    }
    return n; /* no lead byte in the last three: nothing to wait for */
}

static void con_write(const unsigned char *b, size_t n, wchar_t *w, int cap)
{
    int k = n ? MultiByteToWideChar(CP_UTF8, 0, (const char *)b, (int)n, w, cap) : 0;
    for (int done = 0; done < k;) {
        DWORD wrote = 0;
        if (!WriteConsoleW(con_out, w + done, (DWORD)(k - done), &wrote, NULL) || !wrote) break;
        done += (int)wrote;
    }
}

static DWORD WINAPI con_pump(LPVOID arg)
{
    (void)arg;
    enum { N = 8192 };
    static unsigned char b[N + 4];
    static wchar_t w[N + 4];
    size_t have = 0;
    DWORD k;
    while (ReadFile(con_rd, b + have, N, &k, NULL) && k > 0) {
        have += k;
        size_t whole = utf8_whole(b, have);
        con_write(b, whole, w, N + 4);
        memmove(b, b + whole, have - whole);
        have -= whole;
    }
    con_write(b, have, w, N + 4);
    return 0;
}

/* At exit: what is in the pipe written before the process ends. */
static void con_drain(void)
{
    fflush(stdout);
    fflush(stderr);
    /* Every write end closed, the thread reads the pipe to its end. */
    if (con_fd[1]) _close(1);
    if (con_fd[2]) _close(2);
    WaitForSingleObject(con_thread, 10000);
}

static void console_text(void)
{
    HANDLE h[3] = {0, GetStdHandle(STD_OUTPUT_HANDLE), GetStdHandle(STD_ERROR_HANDLE)};
    DWORD mode;
    bool is[3] = {false};
    for (int fd = 1; fd <= 2; fd++)
        is[fd] = h[fd] && h[fd] != INVALID_HANDLE_VALUE && _get_osfhandle(fd) == (intptr_t)h[fd] &&
                 GetConsoleMode(h[fd], &mode);
    if (!is[1] && !is[2]) return;
    HANDLE rd, wr, self = GetCurrentProcess();
    /* the console's handle, its own: the descriptors' are closed when they become the pipe */
    if (!DuplicateHandle(self, h[is[1] ? 1 : 2], self, &con_out, 0, FALSE, DUPLICATE_SAME_ACCESS)) return;
    if (!CreatePipe(&rd, &wr, NULL, 0)) {
        CloseHandle(con_out);
        return;
    }
    int fd = _open_osfhandle((intptr_t)wr, _O_WRONLY | _O_BINARY);
    con_rd = rd;
    if (fd < 0 || !(con_thread = CreateThread(NULL, 0, con_pump, NULL, 0, NULL))) {
        if (fd >= 0) _close(fd);
        else CloseHandle(wr);
        CloseHandle(rd);
        CloseHandle(con_out);
        return;
    }
    for (int k = 1; k <= 2; k++)
        if (is[k] && _dup2(fd, k) == 0) {
            con_fd[k] = true;
            SetHandleInformation((HANDLE)_get_osfhandle(k), HANDLE_FLAG_INHERIT, 0); /* no child holds the pipe open */
            SetStdHandle(k == 1 ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE, (HANDLE)_get_osfhandle(k));
        }
    _close(fd);
    atexit(con_drain);
}

void etl_platform_init(int *argc, char ***argv)
{
    /* Bytes in, bytes out: no "\r\n" made of "\n", no ^Z taken for the end of a piped trace. */
    _setmode(0, _O_BINARY);
    _setmode(1, _O_BINARY);
    _setmode(2, _O_BINARY);
    console_text(); /* UTF-8 shown as text on a console; the same bytes when redirected */
    int n = 0;
    wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &n);
    if (!wargv) return;
    wlist *l = expand_args(wargv, n);
    LocalFree(wargv);
    if (!l) return; /* out of memory this early: the ANSI argv it is */
    /* Kept for the life of the process, as the argv it replaces. */
    char **args = calloc(l->n + 1, sizeof *args);
    for (size_t i = 0; args && i < l->n; i++)
        if (!(args[i] = narrow(l->v[i]))) {
            for (size_t j = 0; j < i; j++) free(args[j]);
            free(args);
            args = NULL;
        }
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    if (!args || l->n > INT_MAX) {
        free(l);
        return;
    }
    *argc = (int)l->n;
    *argv = args;
    free(l);
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
    if (h == INVALID_HANDLE_VALUE && GetLastError() == ERROR_INVALID_HANDLE) {
        memset(fi, 0, sizeof *fi); /* CON without a console: a device all the same, as NUL (not regular, no identity) */
        return 0;
    }
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
    if (fd < 0) { /* the table full (EMFILE), or a handle the C runtime takes for no file (a device: \\.\C:) */
        int e = errno == EMFILE ? EMFILE : ENODEV;
        CloseHandle(h);
        errno = e;
    }
    return fd;
}

int etl_open_read(const char *path)
{
    int fd = open_handle(path, GENERIC_READ, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, _O_RDONLY);
    if (fd >= 0) return fd;
    int e = errno;
    etl_file_info fi;
    /* A directory is refused as access denied: EISDIR, as reading one fails on POSIX. */
    if (e == EACCES && etl_stat(path, true, &fi) == 0 && fi.is_dir) e = EISDIR;
    /* A wildcard that matched no file (etl_platform_init expands them): no such file, as a shell says. */
    else if (e == EINVAL && strpbrk(path, "*?")) e = ENOENT;
    errno = e;
    return -1;
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

int etl_unlink(const char *path)
{
    wchar_t *w = wide(path);
    if (!w) return -1;
    BOOL ok = DeleteFileW(w);
    DWORD e = ok ? 0 : GetLastError(), a;
    /* Windows keeps a read-only file from being deleted; POSIX unlink asks only the directory: as POSIX. */
    if (!ok && e == ERROR_ACCESS_DENIED && (a = GetFileAttributesW(w)) != INVALID_FILE_ATTRIBUTES &&
        (a & FILE_ATTRIBUTE_READONLY) && !(a & FILE_ATTRIBUTE_DIRECTORY) &&
        SetFileAttributesW(w, a & ~(DWORD)FILE_ATTRIBUTE_READONLY)) {
        if (!(ok = DeleteFileW(w))) {
            e = GetLastError();
            SetFileAttributesW(w, a); /* still refused (held open): as it was */
        }
    }
    free(w);
    if (ok) return 0;
    errno = errno_of(e);
    return -1;
}

int etl_rename(const char *from, const char *to)
{
    wchar_t *wf = wide(from), *wt = wf ? wide(to) : NULL;
    BOOL ok = wt && MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    int r = ok ? 0 : wt ? fail_win() : -1;
    free(wf);
    free(wt);
    return r;
}

int etl_rename_new(const char *from, const char *to)
{
    wchar_t *wf = wide(from), *wt = wf ? wide(to) : NULL;
    BOOL ok = wt && MoveFileExW(wf, wt, MOVEFILE_WRITE_THROUGH); /* ERROR_ALREADY_EXISTS: EEXIST */
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

/* Large pages need a privilege and their own allocation on Windows: the advice is not given. */
void etl_mem_huge(void *p, size_t n) { (void)p, (void)n; }

size_t etl_page_size(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwPageSize;
}

const char *etl_llvm_install_hint(void)
{
    return "install LLVM for Windows, whose bin folder has llvm-pdbutil.exe, and put that folder in PATH";
}

int etl_write_errno(FILE *f)
{
    int e = errno;
    if (e != EINVAL) return e;
    if (errno_of((DWORD)_doserrno) == EPIPE) return EPIPE;
    HANDLE h = (HANDLE)_get_osfhandle(_fileno(f));
    return h != INVALID_HANDLE_VALUE && GetFileType(h) == FILE_TYPE_PIPE ? EPIPE : e;
}

/* A value etl_getenv converted, kept for the life of the process with its name (a handful: TMPDIR, ETLKIT_...). */
typedef struct env_kept {
    struct env_kept *next;
    char *name, *value;
    wchar_t *w;
} env_kept;

const char *etl_getenv(const char *name)
{
    static SRWLOCK lk = SRWLOCK_INIT;
    static env_kept *kept;
    /* The process's own block, in UTF-16: msvcrt's getenv gives its ANSI bytes, and _wgetenv is made from those. */
    wchar_t *wn = wide(name), *w = NULL;
    DWORD n = wn ? GetEnvironmentVariableW(wn, NULL, 0) : 0;
    if (n > 0 && (w = malloc((size_t)n * sizeof *w)) && GetEnvironmentVariableW(wn, w, n) >= n) {
        free(w); /* changed in between: taken as unset */
        w = NULL;
    }
    free(wn);
    if (!w) return NULL;
    AcquireSRWLockExclusive(&lk);
    env_kept *e = kept;
    while (e && !(strcmp(e->name, name) == 0 && wcscmp(e->w, w) == 0)) e = e->next;
    if (!e && (e = calloc(1, sizeof *e)) && (e->name = strdup(name)) && (e->value = narrow(w))) {
        e->w = w;
        w = NULL;
        e->next = kept;
        kept = e;
    } else if (e && !e->w) { /* out of memory */
        free(e->name);
        free(e);
        e = NULL;
    }
    ReleaseSRWLockExclusive(&lk);
    free(w);
    return e ? e->value : NULL;
}

const char *etl_temp_dir(void)
{
    static char dir[MAX_PATH * 3 + 1];
    /* TMPDIR as on POSIX (a user's choice made for etlkit), else Windows' own: %TMP%, %TEMP%, the profile's. */
    const char *d = etl_getenv("TMPDIR");
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
    ms->dir = etl_temp_dir(); /* where the bytes go, for the caller's message */
    *buf = NULL;
    *n = 0;
    int fd = etl_temp_open();
    ms->f = fd < 0 ? NULL : _fdopen(fd, "w+b");
    if (fd >= 0 && !ms->f) {
        _close(fd);
        errno = EMFILE;
    }
    return ms->f;
}

int etl_memstream_close(etl_memstream *ms)
{
    FILE *f = ms->f;
    char *b = NULL;
    /* A write that failed (a full disk) sets the error flag: the file lacks those bytes. */
    errno = 0;
    long long size = !ferror(f) && fflush(f) == 0 ? _ftelli64(f) : -1;
    if (size >= 0 && (uint64_t)size < SIZE_MAX && fseek(f, 0, SEEK_SET) == 0) {
        if (!(b = malloc((size_t)size + 1))) {
            ms->dir = NULL; /* memory, not the directory */
            errno = ENOMEM;
        } else if (fread(b, 1, (size_t)size, f) != (size_t)size) {
            free(b);
            b = NULL;
        } else {
            b[size] = 0;
        }
    }
    int e = errno ? errno : EIO;
    fclose(f); /* the file is deleted on close */
    *ms->buf = b;
    *ms->n = b ? (size_t)size : 0;
    if (b) return 0;
    errno = e;
    return EOF;
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
    /* the separator the path uses ('\\' after \\?\, where '/' is none); none after "C:" or a separator */
    char sep;
    const char *glue = etl_path_sep(path, &sep);
    memcpy(pat, path, n);
    if (*glue) pat[n++] = sep;
    memcpy(pat + n, "*", 2);
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
    if (fd >= 0 && fd < 3 && con_fd[fd]) return true; /* the console, through console_text's pipe */
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

const char *etl_path_sep(const char *dir, char *sep)
{
    char c = '\\';
    if (strncmp(dir, "\\\\?\\", 4) != 0) /* Win32 paths take either; \\?\ passes the name as it is */
        for (const char *p = dir; *p; p++)
            if (*p == '/' || *p == '\\') c = *p;
    if (sep) *sep = c;
    size_t n = strlen(dir);
    if (n && (dir[n - 1] == '/' || dir[n - 1] == '\\' || (n == 2 && dir[1] == ':'))) return "";
    return c == '/' ? "/" : "\\";
}

/* The length of a name as Windows keeps it: its trailing dots and spaces dropped ("a.etl." is "a.etl"). */
static int kept_len(const wchar_t *w)
{
    int n = (int)wcslen(w);
    while (n > 0 && (w[n - 1] == L'.' || w[n - 1] == L' ')) n--;
    return n > 0 ? n : (int)wcslen(w); /* "." and ".." as they are */
}

bool etl_name_same(const char *a, const char *b)
{
    if (strcmp(a, b) == 0) return true;
    wchar_t *wa = wide(a), *wb = wa ? wide(b) : NULL;
    /* NTFS's comparison: ordinal, case folded (its upcase table), not the user's locale's. */
    bool same = wb && CompareStringOrdinal(wa, kept_len(wa), wb, kept_len(wb), TRUE) == CSTR_EQUAL;
    free(wa);
    free(wb);
    return same;
}

#endif
