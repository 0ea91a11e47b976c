/* sigclean.c - see sigclean.h. */
#include "base/sigclean.h"

#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include "base/platform.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The handler may only touch lock-free atomics. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "lock-free atomic int needed in a signal handler");

enum { FREE = 0, IS_FILE = 1, IS_DIR = 2, CLAIMED = 3 }; /* CLAIMED: a thread is filling it in */

typedef struct slot {
    atomic_uint seq;    /* odd while the slot is being changed */
    atomic_int what;    /* FREE, IS_FILE or IS_DIR */
    char path[PATH_MAX];
} slot;

static slot slots[ETL_SIGCLEAN_SLOTS];

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

/* Called by the platform's handler (platform.h: etl_on_termination), which then ends the process. */
static void clean_all(void)
{
    char name[PATH_MAX];
    /* The files first: a directory goes only once empty. */
    for (int i = 0; i < ETL_SIGCLEAN_SLOTS; i++)
        if (read_slot(i, IS_FILE, name)) etl_unlink(name);
    for (int i = 0; i < ETL_SIGCLEAN_SLOTS; i++)
        if (read_slot(i, IS_DIR, name)) etl_rmdir(name);
}

int etl_sigclean_add(const char *path, bool dir)
{
    size_t n = strlen(path);
    if (n == 0 || n >= PATH_MAX) return -1;
    etl_on_termination(clean_all);
    for (int i = 0; i < ETL_SIGCLEAN_SLOTS; i++) {
        slot *s = &slots[i];
        int free_ = FREE;
        /* Claimed first, so that two threads registering at once never share a slot. */
        if (atomic_load(&s->what) != FREE || !atomic_compare_exchange_strong(&s->what, &free_, CLAIMED)) continue;
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

void etl_sigclean_hold(void)
{
    etl_on_termination(clean_all);
    etl_termination_hold();
}

void etl_sigclean_release(void) { etl_termination_release(); }
