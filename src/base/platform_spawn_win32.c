/*
 * platform_spawn_win32.c - etl_spawn_read / etl_child_read / etl_child_wait (platform.h) with
 * CreateProcessW and a pipe. An anonymous pipe cannot be read with a time limit (its ReadFile
 * blocks, and PeekNamedPipe would mean polling), so the pipe is a named one of ours, its read end
 * overlapped: each read waits on its event no longer than the limit, then the child is terminated.
 */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#if !defined(_WIN32_WINNT) || _WIN32_WINNT < 0x0600
#undef _WIN32_WINNT
#define _WIN32_WINNT 0x0600 /* Vista: the attribute list that names the handles a child inherits */
#endif
#include <windows.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/platform.h"

struct etl_child {
    HANDLE process;
    HANDLE rd;          /* the pipe's read end (overlapped) */
    HANDLE ev;          /* its reads' event */
    unsigned idle_ms;   /* 0: no limit */
    bool killed;
    bool ended;         /* its output read to the end */
};

static wchar_t *utf16(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
    if (w) MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
    return w;
}

/* The command line CreateProcess takes: each argument quoted as CommandLineToArgvW reads it back. */
static wchar_t *command_line(const char *const *argv)
{
    size_t cap = 1;
    for (size_t i = 0; argv[i]; i++) cap += 2 * strlen(argv[i]) + 3;
    char *s = malloc(cap), *o = s;
    if (!s) return NULL;
    for (size_t i = 0; argv[i]; i++) {
        if (i) *o++ = ' ';
        *o++ = '"';
        size_t bs = 0;
        for (const char *c = argv[i];; c++) {
            if (*c == '\\') {
                bs++;
                continue;
            }
            /* backslashes before a quote (or the closing quote) are doubled */
            size_t k = (*c == '"' || !*c) ? 2 * bs : bs;
            while (k--) *o++ = '\\';
            bs = 0;
            if (!*c) break;
            if (*c == '"') *o++ = '\\';
            *o++ = *c;
        }
        *o++ = '"';
    }
    *o = 0;
    wchar_t *w = utf16(s);
    free(s);
    return w;
}

/*
 * The program to run: name as given when it holds a path, else found in PATH's folders
 * alone - never in the current directory, where a folder of traces could plant one.
 * NULL with errno (ENOENT: not found).
 */
static wchar_t *program(const char *name)
{
    enum { CAP = 32768 };
    wchar_t *w = utf16(name);
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    if (wcschr(w, L'\\') || wcschr(w, L'/') || wcschr(w, L':')) return w;
    DWORD n = GetEnvironmentVariableW(L"PATH", NULL, 0);
    wchar_t *path = n ? malloc((size_t)n * sizeof *path) : NULL, *found = malloc(CAP * sizeof *found);
    DWORD k = path && found && GetEnvironmentVariableW(L"PATH", path, n) ? SearchPathW(path, w, L".exe", CAP, found, NULL)
                                                                      : 0;
    free(path);
    free(w);
    if (!k || k >= CAP) {
        free(found);
        errno = ENOENT;
        return NULL;
    }
    return found;
}

/*
 * A pipe for one child: *rd ours (overlapped, not inherited), *wr the child's (inheritable). The
 * name is this process's and a counter's; FILE_FLAG_FIRST_PIPE_INSTANCE and one instance make sure
 * the pipe is the one created here and the client end ours. FALSE with the error set.
 */
static BOOL make_pipe(HANDLE *rd, HANDLE *wr, SECURITY_ATTRIBUTES *sa)
{
    static volatile LONG serial;
    char name[96];
    snprintf(name, sizeof name, "\\\\.\\pipe\\etlkit-spawn-%lu-%ld", (unsigned long)GetCurrentProcessId(),
             (long)InterlockedIncrement(&serial));
    wchar_t *w = utf16(name);
    if (!w) return FALSE;
    *rd = CreateNamedPipeW(w, PIPE_ACCESS_INBOUND | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
                           PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, 1, 0, 1u << 16, 0, NULL);
    *wr = *rd == INVALID_HANDLE_VALUE ? INVALID_HANDLE_VALUE
                                      : CreateFileW(w, GENERIC_WRITE, 0, sa, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    free(w);
    if (*wr == INVALID_HANDLE_VALUE) {
        if (*rd != INVALID_HANDLE_VALUE) CloseHandle(*rd);
        return FALSE;
    }
    return TRUE;
}

etl_child *etl_spawn_read(const char *const *argv, unsigned idle_ms)
{
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE rd, wr, nul_in, nul_err;
    HANDLE ev = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!ev || !make_pipe(&rd, &wr, &sa)) {
        if (ev) CloseHandle(ev);
        errno = EIO;
        return NULL;
    }
    nul_in = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
    nul_err = CreateFileW(L"NUL", GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
    wchar_t *cmd = command_line(argv), *app = program(argv[0]);
    /* The child inherits these three handles and no other (not the files the export is writing). */
    HANDLE inherit[3];
    DWORD ninherit = 0;
    if (nul_in != INVALID_HANDLE_VALUE) inherit[ninherit++] = nul_in;
    inherit[ninherit++] = wr;
    if (nul_err != INVALID_HANDLE_VALUE) inherit[ninherit++] = nul_err;
    SIZE_T asize = 0;
    InitializeProcThreadAttributeList(NULL, 1, 0, &asize);
    LPPROC_THREAD_ATTRIBUTE_LIST al = asize ? malloc(asize) : NULL;
    BOOL have_al = al && InitializeProcThreadAttributeList(al, 1, 0, &asize);
    STARTUPINFOEXW si = {0};
    si.StartupInfo.cb = sizeof si;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = nul_in;
    si.StartupInfo.hStdOutput = wr;
    si.StartupInfo.hStdError = nul_err;
    si.lpAttributeList = al;
    PROCESS_INFORMATION pi;
    BOOL ok = cmd && app && have_al &&
              UpdateProcThreadAttribute(al, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit, ninherit * sizeof *inherit,
                                        NULL, NULL) &&
              CreateProcessW(app, cmd, NULL, NULL, TRUE, CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT, NULL, NULL,
                             &si.StartupInfo, &pi);
    DWORD err = ok ? 0 : !app ? ERROR_FILE_NOT_FOUND : GetLastError();
    if (have_al) DeleteProcThreadAttributeList(al);
    free(al);
    free(cmd);
    free(app);
    CloseHandle(wr);
    if (nul_in != INVALID_HANDLE_VALUE) CloseHandle(nul_in);
    if (nul_err != INVALID_HANDLE_VALUE) CloseHandle(nul_err);
    etl_child *c = ok ? calloc(1, sizeof *c) : NULL;
    if (!c) {
        CloseHandle(rd);
        CloseHandle(ev);
        if (ok) {
            TerminateProcess(pi.hProcess, 1);
            CloseHandle(pi.hProcess);
            CloseHandle(pi.hThread);
        }
        errno = err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ? ENOENT : (ok ? ENOMEM : EIO);
        return NULL;
    }
    CloseHandle(pi.hThread);
    c->process = pi.hProcess;
    c->rd = rd;
    c->ev = ev;
    c->idle_ms = idle_ms;
    return c;
}

long etl_child_read(etl_child *c, void *buf, size_t n)
{
    if (c->killed) {
        errno = ETIMEDOUT;
        return -1;
    }
    DWORD want = n > (1u << 30) ? 1u << 30 : (DWORD)n;
    ULONGLONG end = GetTickCount64() + c->idle_ms;
    for (;;) {
        OVERLAPPED ov;
        memset(&ov, 0, sizeof ov);
        ov.hEvent = c->ev;
        DWORD got = 0;
        BOOL done = ReadFile(c->rd, buf, want, &got, &ov);
        DWORD e = done ? 0 : GetLastError();
        if (!done && e == ERROR_IO_PENDING) {
            ULONGLONG now = GetTickCount64();
            DWORD wait = !c->idle_ms ? INFINITE : now >= end ? 0 : (DWORD)(end - now);
            if (WaitForSingleObject(c->ev, wait) != WAIT_OBJECT_0) {
                /* silent too long: the read cancelled (and finished, so the buffer is the caller's again) */
                CancelIo(c->rd);
                GetOverlappedResult(c->rd, &ov, &got, TRUE);
                TerminateProcess(c->process, 1);
                c->killed = true;
                errno = ETIMEDOUT;
                return -1;
            }
            done = GetOverlappedResult(c->rd, &ov, &got, FALSE);
            e = done ? 0 : GetLastError();
        }
        if (!done) {
            if (e == ERROR_BROKEN_PIPE) { /* every writer gone: the end */
                c->ended = true;
                return 0;
            }
            errno = EIO;
            return -1;
        }
        if (got) return (long)got;
        /* a write of no bytes: read on, within the same limit */
    }
}

int etl_child_wait(etl_child *c)
{
    if (!c) return -1;
    CloseHandle(c->rd);
    CloseHandle(c->ev);
    if (!c->ended && !c->killed) {
        TerminateProcess(c->process, 1);
        c->killed = true;
    }
    DWORD code = 1;
    WaitForSingleObject(c->process, INFINITE);
    BOOL ok = GetExitCodeProcess(c->process, &code);
    CloseHandle(c->process);
    bool killed = c->killed;
    free(c);
    return ok && !killed ? (int)code : -1;
}

#endif
