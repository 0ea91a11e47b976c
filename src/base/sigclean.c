/* sigclean.c - see sigclean.h. */
#include "base/sigclean.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The handler may only touch lock-free atomics. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "lock-free atomic int needed in a signal handler");

enum { FREE = 0, IS_FILE = 1, IS_DIR = 2 };

typedef struct slot {
    atomic_uint seq;    /* odd while the slot is being changed */
    atomic_int what;    /* FREE, IS_FILE or IS_DIR */
    char path[PATH_MAX];
} slot;

static slot slots[ETL_SIGCLEAN_SLOTS];
static atomic_int installed;

static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};

/* Copies slot i's name if it is a `what` and stayed one while copied. */
static bool read_slot(int i, int what, char *out)
{
    unsigned s1 = atomic_load(&slots[i].seq);
    if (s1 & 1u || atomic_load(&slots[i].what) != what) return false;
    size_t k = 0;
    for (; k + 1 < sizeof slots[i].path && slots[i].path[k]; k++) out[k] = slots[i].path[k];
    out[k] = 0;
    return k > 0 && atomic_load(&slots[i].seq) == s1;
}

static void on_signal(int sig)
{
    int saved = errno;
    char name[PATH_MAX];
    /* The files first: a directory goes only once empty. */
    for (int i = 0; i < ETL_SIGCLEAN_SLOTS; i++)
        if (read_slot(i, IS_FILE, name)) unlink(name);
    for (int i = 0; i < ETL_SIGCLEAN_SLOTS; i++)
        if (read_slot(i, IS_DIR, name)) rmdir(name);
    /* The default action, taken when this handler returns (the signal is blocked until then). */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig);
    errno = saved;
}

static void install(void)
{
    if (atomic_exchange(&installed, 1)) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&sa.sa_mask, sigs[i]);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* Ignored (nohup) or handled by the program that links us: left as it is. */
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

int etl_sigclean_add(const char *path, bool dir)
{
    size_t n = strlen(path);
    if (n == 0 || n >= PATH_MAX) return -1;
    install();
    for (int i = 0; i < ETL_SIGCLEAN_SLOTS; i++) {
        slot *s = &slots[i];
        if (atomic_load(&s->what) != FREE) continue;
        atomic_fetch_add(&s->seq, 1);
        memcpy(s->path, path, n + 1);
        atomic_store(&s->what, dir ? IS_DIR : IS_FILE);
        atomic_fetch_add(&s->seq, 1);
        return i;
    }
    return -1;
}

void etl_sigclean_remove(int slot_no)
{
    if (slot_no < 0 || slot_no >= ETL_SIGCLEAN_SLOTS) return;
    slot *s = &slots[slot_no];
    atomic_fetch_add(&s->seq, 1);
    atomic_store(&s->what, FREE);
    atomic_fetch_add(&s->seq, 1);
}
