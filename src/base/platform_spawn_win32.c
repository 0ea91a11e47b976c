/* platform_spawn_win32.c - etl_spawn_read / etl_child_wait (platform.h) with CreateProcessW and a pipe. */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>
#include "base/platform.h"

struct etl_child {
    HANDLE process;
    FILE *out;
};

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
    int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
    if (w) MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
    free(s);
    return w;
}

etl_child *etl_spawn_read(const char *const *argv, FILE **out)
{
    *out = NULL;
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE rd, wr, nul_in, nul_err;
    if (!CreatePipe(&rd, &wr, &sa, 0)) {
        errno = EIO;
        return NULL;
    }
    SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
    nul_in = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
    nul_err = CreateFileW(L"NUL", GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
    wchar_t *cmd = command_line(argv);
    STARTUPINFOW si = {0};
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = nul_in;
    si.hStdOutput = wr;
    si.hStdError = nul_err;
    PROCESS_INFORMATION pi;
    BOOL ok = cmd && CreateProcessW(NULL, cmd, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi);
    DWORD err = ok ? 0 : GetLastError();
    free(cmd);
    CloseHandle(wr);
    if (nul_in != INVALID_HANDLE_VALUE) CloseHandle(nul_in);
    if (nul_err != INVALID_HANDLE_VALUE) CloseHandle(nul_err);
    etl_child *c = ok ? calloc(1, sizeof *c) : NULL;
    int fd = c ? _open_osfhandle((intptr_t)rd, _O_RDONLY | _O_BINARY) : -1;
    if (c && fd >= 0) c->out = _fdopen(fd, "rb");
    if (!c || !c->out) {
        if (fd >= 0) _close(fd);
        else CloseHandle(rd);
        if (ok) {
            TerminateProcess(pi.hProcess, 1);
            CloseHandle(pi.hProcess);
            CloseHandle(pi.hThread);
        }
        free(c);
        errno = err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ? ENOENT : (ok ? ENOMEM : EIO);
        return NULL;
    }
    CloseHandle(pi.hThread);
    c->process = pi.hProcess;
    *out = c->out;
    return c;
}

int etl_child_wait(etl_child *c)
{
    if (!c) return -1;
    fclose(c->out);
    DWORD code = 1;
    WaitForSingleObject(c->process, INFINITE);
    BOOL ok = GetExitCodeProcess(c->process, &code);
    CloseHandle(c->process);
    free(c);
    return ok ? (int)code : -1;
}

#endif
