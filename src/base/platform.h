/*
 * platform.h - what differs between POSIX and Windows, behind one set of names.
 *
 * platform_posix.c implements it with POSIX calls, platform_win32.c with Win32's
 * (each file compiles to nothing on the other system). Paths are UTF-8 on both:
 * Windows converts them to UTF-16 for the wide calls (_wfopen, CreateFileW), so a
 * name outside the ANSI code page works. Failures set errno, as the POSIX calls do,
 * so that callers say why with strerror(errno) on both systems.
 */
#ifndef ETLKIT_SRC_BASE_PLATFORM_H
#define ETLKIT_SRC_BASE_PLATFORM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The first call in main: on Windows, argv anew in UTF-8 from the UTF-16 command
 * line, * and ? outside double quotes expanded as a POSIX shell expands them (cmd.exe
 * and PowerShell do not), standard input, output and error in binary mode (text is
 * written with "\n" line ends, as on Linux; CSV's own CRLF stays CRLF), and output and
 * error that are a console shown as text (UTF-16 to WriteConsoleW, not the UTF-8 bytes
 * in the console's code page). Nothing on POSIX.
 */
void etl_platform_init(int *argc, char ***argv);

/* What a name or a descriptor is. */
typedef struct etl_file_info {
    bool is_reg, is_dir, is_link; /* is_link: a symbolic link (Windows: any reparse point) */
    uint64_t size;
    bool has_id;                  /* dev and ino name the file: equal pairs, one file */
    uint64_t dev, ino;
    unsigned mode;                /* permission bits, uid, gid: POSIX only (0 on Windows) */
    uint32_t uid, gid;
} etl_file_info;

/* follow: what a symbolic link names (stat), or the link itself (lstat). 0, or -1 with errno. */
int etl_stat(const char *path, bool follow, etl_file_info *fi);
int etl_fstat(int fd, etl_file_info *fi);

/* Opens a file read-only (close-on-exec, binary): a descriptor, or -1 with errno. */
int etl_open_read(const char *path);
/* fopen with a UTF-8 name; "x" in mode (create, fail if it exists) on both systems. */
FILE *etl_fopen(const char *path, const char *mode);
/*
 * Creates a new file for writing (fails with EEXIST if the name is taken): a descriptor,
 * or -1 with errno. mode as open(2)'s (the umask applies); Windows ignores it. On
 * Windows the file may be deleted while open, so that a Ctrl-C can remove it.
 */
int etl_create_new(const char *path, unsigned mode);
/* A new directory (mode 0777 less the umask on POSIX). 0, or -1 with errno. */
int etl_mkdir(const char *path);
int etl_rmdir(const char *path);
int etl_unlink(const char *path);
/* Renames from over to, replacing a file there (Windows: MoveFileExW, MOVEFILE_REPLACE_EXISTING). */
int etl_rename(const char *from, const char *to);
/*
 * Renames from to to only while nothing is at to: -1 with errno EEXIST when something is, a
 * file, a directory or a link (Linux renameat2 RENAME_NOREPLACE; Windows MoveFileExW without
 * MOVEFILE_REPLACE_EXISTING). On a file system that cannot refuse in the rename itself, a look
 * just before it: what appears between the two is replaced.
 */
int etl_rename_new(const char *from, const char *to);
/* 0 when the user may write the file at path (access(W_OK); Windows: not read-only). */
int etl_writable(const char *path);
/* Gives the file open at fd the permissions (and, when allowed, the owner) of fi. Nothing on Windows. */
void etl_copy_mode(int fd, const etl_file_info *fi);

/* Reads or writes n bytes at offset off, not moving any shared file position: bytes done, or -1 with errno. */
long long etl_pread(int fd, void *dst, size_t n, uint64_t off);
long long etl_pwrite(int fd, const void *src, size_t n, uint64_t off);
/* Flushes the file's data to the disk (fsync; Windows: FlushFileBuffers). 0, or -1 with errno. */
int etl_fsync(int fd);

/* Maps size bytes of the file open at fd read-only: the address, or NULL. */
void *etl_mmap_read(int fd, size_t size);
void etl_munmap(void *p, size_t size);
/* Drops the pages of [p, p+n) (page-aligned) from memory; they are read again if touched. */
void etl_mem_release(void *p, size_t n);
/*
 * Asks for [p, p+n) (any alignment: its whole 2 MiB pages) in huge pages, before it is first touched: a
 * table looked up at random over tens of MB misses the TLB at every probe in 4 KiB pages (Linux
 * MADV_HUGEPAGE, for THP's "madvise" mode; elsewhere nothing).
 */
void etl_mem_huge(void *p, size_t n);
size_t etl_page_size(void);

/*
 * An environment variable's value in UTF-8, or NULL when it is not set: getenv (Windows: read
 * in UTF-16, as the arguments are, so that C:\Users\José\symbols names that folder, not one
 * in the ANSI code page's bytes). The value stays valid for the life of the process.
 */
const char *etl_getenv(const char *name);

/*
 * errno after a failed write to stream f, as the system meant it: Windows' C runtime calls
 * a pipe its reader closed EINVAL (ERROR_NO_DATA, which it does not map; under wine a short
 * write with no error at all); on a pipe this says EPIPE, "Broken pipe", as POSIX would
 * (where SIGPIPE ends the process first). Elsewhere errno.
 */
int etl_write_errno(FILE *f);

/* How this system gets llvm-pdbutil, for the message when it is missing: Debian's package, or LLVM for Windows. */
const char *etl_llvm_install_hint(void);

/* The directory for temporary files: $TMPDIR when set and not empty, else /tmp (Windows: %TEMP%, GetTempPathW). */
const char *etl_temp_dir(void);
/* A new file there, read-write, gone when closed or when the process ends: a descriptor, or -1 with errno. */
int etl_temp_open(void);

/*
 * Calls clean once when the user or the system ends the process (POSIX: SIGINT, SIGTERM,
 * SIGHUP, SIGXFSZ, SIGPIPE, and SIGBUS, a mapped input cut short, unless ignored or handled already;
 * Windows: Ctrl-C, Ctrl-Break, the console closed), then lets it end as it would have. clean must be
 * async-signal-safe.
 */
void etl_on_termination(void (*clean)(void));
/*
 * Puts off that end while a short section runs (a few renames that must not stop half way):
 * a signal that comes between hold and release ends the process, clean first, at the release
 * (POSIX: sent again to the process; Windows: the handler's thread waits). Sections nest and
 * may run on several threads at once: the last release lets the end come. A section about to
 * begin once the end has begun does not: the thread waits for the end.
 */
void etl_termination_hold(void);
void etl_termination_release(void);

/*
 * A stream into memory, as open_memstream(3) (Windows has none: a temporary file in
 * etl_temp_dir(), read back at close). etl_memstream_close sets *buf (NUL-terminated, to
 * free) and *n, as fclose does open_memstream's; 0, or EOF with *buf NULL when the bytes
 * could not be had. Either failure sets errno, and dir says where: the directory of the
 * temporary file (Windows), NULL for memory alone (POSIX, and a read-back that found none),
 * so that the caller's message can name it. ms stays where it is until the close (the stream
 * holds its address).
 */
typedef struct etl_memstream {
    FILE *f;
    char **buf;
    size_t *n;
    const char *dir;
    size_t cap;   /* POSIX: *buf's size */
    bool failed;  /* POSIX: a write found no memory (every later one fails, and the close) */
} etl_memstream;
FILE *etl_memstream_open(etl_memstream *ms, char **buf, size_t *n);
int etl_memstream_close(etl_memstream *ms);

/*
 * Threads and a lock, for work split across traces (export's datasets) or between the
 * stages of one pass (base/pipe.h). A thread (etl_os_thread: not the Thread event, etlkit/kernel.h's
 * etl_thread) runs fn(arg); NULL when none could be started (the caller then runs fn itself).
 * etl_thread_join waits for it and frees it. The mutex is not recursive.
 * A thread started here takes none of the signals a user sends (POSIX: they go to the
 * program's own threads, so etl_on_termination's cleanup never runs beside a thread that
 * creates the files it removes); those its own calls raise (SIGXFSZ, SIGPIPE, faults) stay.
 */
typedef struct etl_os_thread etl_os_thread;
etl_os_thread *etl_thread_start(void (*fn)(void *), void *arg);
void etl_thread_join(etl_os_thread *t);
typedef struct etl_mutex etl_mutex;
etl_mutex *etl_mutex_new(void); /* NULL: out of memory */
void etl_mutex_lock(etl_mutex *m);
void etl_mutex_unlock(etl_mutex *m);
void etl_mutex_free(etl_mutex *m);
/* A condition variable for that mutex (wait releases m while it sleeps; wakeups may be spurious). */
typedef struct etl_cond etl_cond;
etl_cond *etl_cond_new(void); /* NULL: out of memory */
void etl_cond_wait(etl_cond *c, etl_mutex *m);
void etl_cond_broadcast(etl_cond *c);
void etl_cond_free(etl_cond *c);
/*
 * One-time initialisation: the first etl_call_once on a flag runs fn, the calls beside it
 * return once fn has returned, the later ones at once. The flag is a static set to
 * ETL_ONCE_INIT; fn must not call etl_call_once itself.
 */
typedef struct etl_once_flag {
    _Atomic int done;
} etl_once_flag;
#define ETL_ONCE_INIT {0}
void etl_call_once(etl_once_flag *flag, void (*fn)(void));

/*
 * Calls fn(ctx, name, is_dir) for each entry of the directory at path but "." and
 * "..", in no particular order, until fn returns non-zero. 0, or -1 with errno.
 */
int etl_dir_each(const char *path, int (*fn)(void *ctx, const char *name, bool is_dir), void *ctx);

/* A byte into a stream no other thread writes meanwhile, without taking its lock (a JSON token at a time). */
#ifdef _WIN32
#define etl_putc_unlocked(c, f) _fputc_nolock((c), (f))
#else
#define etl_putc_unlocked(c, f) putc_unlocked((c), (f))
#endif

/* The CPUs this process may run on (at least 1). */
unsigned etl_cpu_count(void);
/* Whether the descriptor is a terminal (Windows: a console). */
bool etl_isatty(int fd);
/* The last component of a path: after the last '/' (Windows: '\\' too, or a drive's "C:"). */
const char *etl_path_base(const char *path);
/*
 * What joins a name to the directory path dir: "" when dir ends with a separator (Windows: or is
 * a drive's "C:"), else "/" (Windows: the separator dir uses, the last one; '\\' when it has
 * none, and always after \\?\, where '/' is no separator). *sep (sep may be NULL): that
 * separator, for the separators of names joined below dir.
 */
const char *etl_path_sep(const char *dir, char *sep);
/*
 * Whether two last components (etl_path_base) name one entry of a directory: equal bytes
 * (Windows: equal as its file systems compare names, case aside, trailing dots and spaces
 * dropped as Windows drops them).
 */
bool etl_name_same(const char *a, const char *b);

/*
 * A program run with its standard output read through a pipe (the symbolizer's
 * llvm-pdbutil): argv[0] is searched on PATH (Windows: in PATH's folders alone),
 * standard input and error go to the null device. idle_ms: the longest the child
 * may write nothing (0: no limit). The child, or NULL with errno (ENOENT: no such
 * program). platform_spawn_*.c.
 *
 * Its output is read with etl_child_read, not a FILE: a FILE's read blocks for as
 * long as the child is silent, and neither stdio can be given a deadline.
 */
typedef struct etl_child etl_child;
etl_child *etl_spawn_read(const char *const *argv, unsigned idle_ms);
/*
 * Up to n bytes of the child's output: the count, 0 at its end, or -1 with errno;
 * ETIMEDOUT when it wrote nothing for idle_ms: it is killed then (etl_child_wait reaps it).
 */
long etl_child_read(etl_child *c, void *buf, size_t n);
/*
 * Closes the output, waits for the child (reaps it): its exit code (0: success), -1 when
 * it died of a signal, failed to run or was killed for its silence. A child whose output
 * was not read to its end is killed first (the caller wants no more of it, and a child
 * that neither writes nor ends would hold the wait forever): -1 too. Frees c.
 */
int etl_child_wait(etl_child *c);

#endif
