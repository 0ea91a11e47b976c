/*
 * heap.c - the simulator's event queues: indexed 4-ary min-heaps over a
 * fixed set of slots, keyed by (time, sequence). The simulator keeps two,
 * one of the threads' wake-ups and a small one of the CPUs' events (which
 * change at every switch), and pops the earlier top; the sequence numbers
 * come from one counter, so ties order the same across the two. A slot is in the heap at most once;
 * setting it again moves it (decrease or increase key), so there are never
 * stale entries and the arrays are sized once at start. Equal times pop in
 * the order they were set (the sequence number, kept above the slot number
 * in one word so that an entry compares without looking anything up), which
 * keeps runs deterministic and FIFO-fair.
 */
#include <stdlib.h>
#include "synth_internal.h"

#define NOPOS UINT32_MAX
#define SLOT_BITS 24
#define SLOT_MASK ((1ull << SLOT_BITS) - 1)

etl_status synth_heap_init(synth_heap *h, uint32_t slots)
{
    h->n = 0;
    h->cap = slots;
    if (slots > SYNTH_HEAP_MAX_SLOTS) return ETL_E_INVALID_ARG;
    h->e = calloc(slots ? slots : 1, sizeof *h->e);
    h->pos = malloc((slots ? slots : 1) * sizeof *h->pos);
    if (!h->e || !h->pos) {
        synth_heap_free(h);
        return ETL_E_NOMEM;
    }
    for (uint32_t i = 0; i < slots; i++) h->pos[i] = NOPOS;
    return ETL_OK;
}

void synth_heap_free(synth_heap *h)
{
    free(h->e);
    free(h->pos);
    h->e = NULL;
    h->pos = NULL;
    h->n = h->cap = 0;
}

static inline bool less(const synth_heap_entry *a, const synth_heap_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->seq_slot < b->seq_slot);
}

static void up(synth_heap *h, uint32_t i, synth_heap_entry x)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 4;
        if (!less(&x, &h->e[p])) break;
        h->e[i] = h->e[p];
        h->pos[h->e[i].seq_slot & SLOT_MASK] = i;
        i = p;
    }
    h->e[i] = x;
    h->pos[x.seq_slot & SLOT_MASK] = i;
}

static void down(synth_heap *h, uint32_t i, synth_heap_entry x)
{
    for (;;) {
        uint32_t l = 4 * i + 1;
        if (l >= h->n) break;
        uint32_t c = l, end = l + 4 < h->n ? l + 4 : h->n;
        for (uint32_t k = l + 1; k < end; k++)
            if (less(&h->e[k], &h->e[c])) c = k;
        if (!less(&h->e[c], &x)) break;
        h->e[i] = h->e[c];
        h->pos[h->e[i].seq_slot & SLOT_MASK] = i;
        i = c;
    }
    h->e[i] = x;
    h->pos[x.seq_slot & SLOT_MASK] = i;
}

void synth_heap_set(synth_heap *h, uint32_t slot, uint64_t time, uint64_t seq)
{
    synth_heap_entry x = {time, seq << SLOT_BITS | slot};
    uint32_t i = h->pos[slot];
    if (i == NOPOS) {
        up(h, h->n++, x);
    } else if (less(&x, &h->e[i])) {
        up(h, i, x);
    } else {
        down(h, i, x);
    }
}

void synth_heap_remove(synth_heap *h, uint32_t slot)
{
    uint32_t i = h->pos[slot];
    if (i == NOPOS) return;
    h->pos[slot] = NOPOS;
    synth_heap_entry last = h->e[--h->n];
    if (i == h->n) return;
    if (i > 0 && less(&last, &h->e[(i - 1) / 4])) up(h, i, last);
    else down(h, i, last);
}

const synth_heap_entry *synth_heap_top(const synth_heap *h)
{
    return h->n ? &h->e[0] : NULL;
}

uint32_t synth_heap_slot(const synth_heap_entry *e)
{
    return (uint32_t)(e->seq_slot & SLOT_MASK);
}
