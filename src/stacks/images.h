/*
 * images.h - modules over time: which image holds an address in a process at a time.
 *
 * Built from the Image events of a whole trace (etl_image_map_add in time order,
 * then etl_image_map_seal), then queried. The rules (issue 20, WPA's):
 *   - an image is live from its Load (0x030A; 0x140A in relogged files), or
 *     from before the trace for a rundown DCStart (0x1403: it was loaded already),
 *     until an Unload (0x1402) of the same (process, base);
 *   - an Unload with no life open there (its Load lost, or its process gone before the
 *     start rundown reached it) is a life from the trace's start, or the end of the
 *     last life there, until the Unload;
 *   - a rundown DCStart of the image live there since its Load (same size and file)
 *     is that life: the Load's time and fields stay, the DCStart fills only what the
 *     Load lacked (TimeDateStamp, checksum 0);
 *   - a rundown DCEnd (0x1404) is not an unload: it lists what is still loaded; it
 *     only adds an image no earlier event announced (live over the whole trace);
 *   - a later load at the same (process, base) replaces the earlier one: the lives at
 *     one place follow each other (a rundown event after an earlier life there starts
 *     where it ended), so a lookup searches each place's lives by time;
 *   - kernel-space images (a base in the upper half of the address space) are
 *     mapped in every process, whatever ProcessId their event carries;
 *   - an ImageSize no image can have (etl_image_size_possible) is damage: the
 *     image's life stands (it replaces and is unloaded as any other) but it holds
 *     no address, or it would take every other image's (counted in bad_sizes).
 * Memory grows with the image events; adding one costs O(1) whatever came before,
 * a lookup O(log n) for each image whose range holds the address.
 */
#ifndef ETLKIT_STACKS_IMAGES_H
#define ETLKIT_STACKS_IMAGES_H

#include <stdbool.h>
#include <stdint.h>
#include "base/idmap.h"
#include "etlkit/kernel.h"
#include "stacks/strtab.h"

#define ETL_IMAGE_NONE UINT32_MAX

typedef struct etl_image_inst {
    uint64_t base, size;      /* size: the addresses it holds (0 for an impossible ImageSize) */
    uint64_t logged_size;     /* ImageSize as logged */
    uint64_t from_ts, to_ts;  /* live over [from_ts, to_ts): 0 from before the trace, UINT64_MAX to after it */
    uint32_t pid;             /* the event's ProcessId */
    uint32_t name, path;      /* strtab offsets: the file's base name, the path as logged */
    uint32_t time_date_stamp, checksum;
    bool kernel;              /* mapped in every process */
    bool open;                /* no Unload (nor replacing Load) seen yet: while building */
    uint32_t prev_same;       /* the instance added before it under the same hash of (space, base), or NONE */
} etl_image_inst;

typedef struct etl_image_map {
    unsigned ptr_size;
    etl_image_inst *v;        /* in the order added */
    uint32_t n, cap;
    uint32_t *order;          /* after seal: indexes sorted by (space, base) */
    uint64_t *reach;          /* after seal: the highest end (base + size) of order[first of its space .. i] */
    uint32_t *run_first;      /* after seal: each (space, base)'s first place in order; [nruns] = n */
    uint64_t *run_end;        /* after seal: a max tree (leaves + run) of each run's highest end */
    uint32_t nruns, leaves;
    etl_idmap newest;         /* hash of (space, base) -> the newest instance under it (chained by prev_same) */
    etl_strtab *names;
    uint64_t bad_sizes;       /* instances added with an impossible ImageSize (holding no address) */
    bool sealed;
} etl_image_map;

void etl_image_map_init(etl_image_map *m, unsigned ptr_size, etl_strtab *names);
void etl_image_map_free(etl_image_map *m);
/* Whether addr is kernel space for this pointer size. */
bool etl_image_kernel_addr(unsigned ptr_size, uint64_t addr);
/*
 * Whether addr is one no code can run at: on x64 (ptr_size 8) the addresses between the user half and the kernel
 * half, non-canonical, so a frame or an InstructionPointer there is damage. Canonical by 5-level paging's 57 bits
 * too (0x0100000000000000..0xfeffffffffffffff is neither), so that a machine with LA57, whose kernel may live below
 * 0xffff800000000000, never reads as damaged (reviewer71). A 32-bit trace has no such range.
 */
static inline bool etl_addr_noncanonical(unsigned ptr_size, uint64_t addr)
{
    return ptr_size == 8 && addr - 0x0100000000000000ull < 0xfe00000000000000ull;
}
/* The first of n frames of ptr_size bytes at p that etl_addr_noncanonical says is damage; false when none. */
bool etl_frames_noncanonical(const uint8_t *p, unsigned ptr_size, uint32_t n, uint64_t *addr);
/*
 * Whether an image of size bytes at base can be: a PE's SizeOfImage is 32 bits, and an image
 * ends within its half of the address space (a 32-bit trace's within 4 GiB).
 */
bool etl_image_size_possible(unsigned ptr_size, uint64_t base, uint64_t size);
/* One Image event (hook 0x030A, 0x1402..0x1404, 0x140A) at ts. ETL_E_NOMEM. */
etl_status etl_image_map_add(etl_image_map *m, uint16_t hook, uint64_t ts, const etl_image *img);
/* Ready for lookups; no add after it. ETL_E_NOMEM. */
etl_status etl_image_map_seal(etl_image_map *m);
/*
 * The image holding addr in process pid at ts (ETL_IMAGE_NONE): live then; the latest loaded if several.
 * hint (NULL, or the caller's, first ETL_IMAGE_NONE) remembers the last answer's place: when addr falls
 * in the same image and no other could hold it, the search is skipped (the same answer, sooner).
 */
uint32_t etl_image_map_find(const etl_image_map *m, uint32_t pid, uint64_t addr, uint64_t ts, uint32_t *hint);

#endif
