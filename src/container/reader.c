/*
 * reader.c - opens a file and indexes its buffers.
 *
 * Opening reads only the 0x48-byte header of each buffer (a few KB for a GB file)
 * and the logfile header in buffer 0. Buffers are walked by each one's own
 * BufferSize (compressed buffers have odd on-disk sizes). A buffer whose header
 * is impossible is skipped by searching forward for the next plausible header;
 * a buffer cut by the end of the file keeps the records that fit. Only a file
 * whose first buffer does not start with a logfile header is refused.
 */
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/compress.h"
#include "etlkit/ccswap.h" /* the kernel's batch walker, for the last switch a batch holds (etl_buf_times_sw) */
#include "container/reader_internal.h"
#include "base/bytes.h"
#include "base/opts.h"

/* The first problem is the one at the lowest file offset (a tie: the smaller message), whatever order the
 * passes and threads meet them in: the same answer for every --threads and every command. */
static void stats_take_problem(etl_stats *st, uint64_t file_off, const char *msg)
{
    if (file_off > st->first_problem_offset) return;
    if (file_off == st->first_problem_offset && strcmp(msg, st->first_problem) >= 0) return;
    st->first_problem_offset = file_off;
    snprintf(st->first_problem, sizeof st->first_problem, "%s", msg);
}

void etl_reader_problem(const etl_reader *r, etl_stats *st, etl_status status, uint64_t file_off,
                        const char *fmt, ...)
{
    etl_diag d;
    d.status = status;
    d.file_offset = file_off;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(d.msg, sizeof d.msg, fmt, ap);
    va_end(ap);
    /* etl_diag's size is the ABI's: a text longer than it holds ends in "..." so the cut is seen. */
    if (len >= (int)sizeof d.msg) memcpy(d.msg + sizeof d.msg - 4, "...", 4);
    stats_take_problem(st, file_off, d.msg);
    if (!r->opts.on_diag) return;
    etl_mutex_lock(r->diag_mu);
    r->opts.on_diag(r->opts.diag_ctx, &d);
    etl_mutex_unlock(r->diag_mu);
}

/* Could a buffer header start here? Cheap checks on the header alone. */
static bool plausible_alone(const etl_reader *r, size_t off)
{
    etl_buffer_header h;
    if (etl_buffer_header_decode(etl_span_from((etl_span){r->data, r->size}, off), &h) != ETL_OK)
        return false;
    if (h.buffer_size < ETL_BUFFER_HEADER_SIZE || h.buffer_size > ETL_MAX_BUFFER_SIZE) return false;
    if (h.offset < ETL_BUFFER_HEADER_SIZE || h.offset > ETL_MAX_BUFFER_SIZE) return false;
    if (h.buffer_type > ETL_BUFFER_TYPE_DBG_INFO || (h.buffer_flag & ~0x7Fu)) return false;
    if (!(h.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED)) {
        if (h.offset > h.buffer_size) return false;
        if (off + ETL_BUFFER_HEADER_SIZE + 4 <= r->size && h.offset > ETL_BUFFER_HEADER_SIZE)
            return (r->data[off + ETL_BUFFER_HEADER_SIZE + 3] & 0x80) != 0;
    }
    return true;
}

/* A plausible header whose BufferSize leads to the end of the file or to another one (never past the end). */
static bool plausible_header(const etl_reader *r, size_t off)
{
    if (!plausible_alone(r, off)) return false;
    size_t next = off + etl_rd_u32(r->data + off);
    return next == r->size || (next < r->size && plausible_alone(r, next));
}

/*
 * How far from where a buffer was expected its header is looked for, when the chain of
 * BufferSizes breaks: a flipped bit of a size moves it by up to 32 KiB (an impossible size is
 * resynchronised forward instead). Two plausible headers a chain apart are rare in other bytes.
 */
#define NEAR_BYTES 65536u

/*
 * A plausible header within NEAR_BYTES of at, after `after` (0: none), nearest first; SIZE_MAX:
 * none. The offsets tried come out of the reader's budget, twice the file's size: past it, none.
 */
static size_t near_header(etl_reader *r, size_t at, size_t after)
{
    for (size_t d = 1; d <= NEAR_BYTES && r->near_budget >= 2; d++, r->near_budget -= 2) {
        if (at >= d && at - d > after && plausible_header(r, at - d)) return at - d;
        if (at + d + ETL_BUFFER_HEADER_SIZE <= r->size && plausible_header(r, at + d)) return at + d;
    }
    return SIZE_MAX;
}

/*
 * The most bytes a buffer can take on disk: the session's BufferSize (etl_reader_data_cap; 64 MiB
 * while the logfile header is unknown, a compressed buffer 0's file), and for a compressed one the
 * formats' worst growth on top: a quarter (LZ77+Huffman codes a token in at most 10 bits: an
 * optimal code is within a bit of the entropy, at most 9 bits over 512 symbols; XPRESS's 4-byte
 * flag word per 32 tokens and LZNT1's flag byte per 8 are an eighth), 1/128 (a Huffman block's
 * 256-byte table per 64 KiB, LZNT1's 2-byte header per 4 KiB chunk) and one table and flag word.
 * The samples' largest compressed buffer is 36,924 bytes of a 65,536 session.
 */
static uint64_t disk_cap(const etl_reader *r, bool compressed)
{
    uint64_t cap = etl_reader_data_cap(r);
    return compressed ? cap + cap / 4 + cap / 128 + 256 + 8 : cap;
}

/* The first plausible header in (off, off + lim], past the header at off (SIZE_MAX: none), on the reader's budget. */
static size_t next_header(etl_reader *r, size_t off, uint64_t lim)
{
    for (size_t x = off + ETL_BUFFER_HEADER_SIZE; x - off <= lim && x + ETL_BUFFER_HEADER_SIZE <= r->size; x++) {
        if (!r->near_budget) break;
        r->near_budget--;
        if (plausible_header(r, x)) return x;
    }
    return SIZE_MAX;
}

/* The one field of a buffer header that is impossible, when every other one is a buffer's. */
enum { FIELD_NONE, FIELD_SIZE, FIELD_OFFSET, FIELD_FLAG };

/* Fields of the header at off no damage of one field explains: its type, its flags, its processor. */
static bool header_like(const etl_reader *r, size_t off, etl_buffer_header *h)
{
    if (etl_buffer_header_decode(etl_span_from((etl_span){r->data, r->size}, off), h) != ETL_OK) return false;
    if (h->buffer_type > ETL_BUFFER_TYPE_DBG_INFO || (h->buffer_flag & ~0x7Fu)) return false;
    return !r->hdr.num_processors || h->processor_index < r->hdr.num_processors;
}

/*
 * The header at off of a compressed log, header_like, with the next buffer len bytes on: the one
 * field that makes it no buffer's (FIELD_NONE: none, or more than one). BufferSize is wrong when it
 * is not len; Offset when no buffer holds it (past the session's BufferSize when compressed, past
 * len when not); the COMPRESSED flag when, cleared, the Offset is past len and the bytes after the
 * header do not start a record (an uncompressed buffer's Offset is what is wrong then).
 */
static int damaged_field(const etl_reader *r, size_t off, const etl_buffer_header *h, size_t len)
{
    uint32_t cap = etl_reader_data_cap(r);
    bool comp = h->buffer_flag & ETL_BUFFER_FLAG_COMPRESSED;
    /* The marker of a first record has its top bit set (plausible_alone). */
    bool rec = off + ETL_BUFFER_HEADER_SIZE + 4 <= r->size && (r->data[off + ETL_BUFFER_HEADER_SIZE + 3] & 0x80);
    int bad = 0, field = FIELD_NONE;
    if (!comp && h->offset > len && h->offset <= cap && !rec) {
        comp = true;
        bad++, field = FIELD_FLAG;
    }
    if (!comp && h->offset > ETL_BUFFER_HEADER_SIZE && h->offset <= len && !rec) return FIELD_NONE;
    if (h->offset < ETL_BUFFER_HEADER_SIZE || h->offset > (comp ? cap : len)) bad++, field = FIELD_OFFSET;
    if (h->buffer_size != len) bad++, field = FIELD_SIZE;
    return bad == 1 ? field : FIELD_NONE;
}

/*
 * Whether the header at off is a buffer's but for one field (*field), the next header following it
 * *n bytes on within a buffer's length (or the end of the file, after a last buffer whose size is
 * impossible).
 */
static int one_bad_field(etl_reader *r, size_t off, size_t *n)
{
    etl_buffer_header h;
    *n = SIZE_MAX;
    if (off >= r->size || !header_like(r, off, &h)) return FIELD_NONE;
    size_t at = next_header(r, off, disk_cap(r, true));
    if (at == SIZE_MAX && (h.buffer_size < ETL_BUFFER_HEADER_SIZE || h.buffer_size > ETL_MAX_BUFFER_SIZE) &&
        r->size - off >= ETL_BUFFER_HEADER_SIZE && r->size - off <= disk_cap(r, true))
        at = r->size;
    if (at == SIZE_MAX) return FIELD_NONE;
    int field = damaged_field(r, off, &h, at - off);
    bool comp = field == FIELD_FLAG || (h.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED);
    if (field == FIELD_NONE || at - off > disk_cap(r, comp)) return FIELD_NONE;
    *n = at;
    return field;
}

/* After an impossible buffer header at `bad`: the next plausible one, or the end of the file. */
static size_t resync(const etl_reader *r, size_t bad)
{
    size_t nominal = r->nominal_buffer_size;
    if (nominal >= ETL_BUFFER_HEADER_SIZE && bad + nominal < r->size && plausible_header(r, bad + nominal))
        return bad + nominal;
    for (size_t off = bad + 1; off + ETL_BUFFER_HEADER_SIZE <= r->size; off++)
        if (plausible_header(r, off)) return off;
    return r->size;
}

static etl_status push_buffer(etl_reader *r, size_t *cap, const etl_buf_ent *e)
{
    if (r->nbufs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        etl_buf_ent *nb = realloc(r->bufs, ncap * sizeof *nb);
        if (!nb) return ETL_E_NOMEM;
        r->bufs = nb;
        *cap = ncap;
    }
    r->bufs[r->nbufs++] = *e;
    return ETL_OK;
}

static etl_status index_buffers(etl_reader *r)
{
    size_t cap = 0, off = 0, released = 0;
    r->near_budget = 2 * (uint64_t)r->size;
    etl_stats *st = &r->stats;
    while (off < r->size) {
        /* Damage makes the index read around a header (resync): drop those pages as we go. */
        if (off - released >= ((size_t)16 << 20)) {
            etl_map_release(&r->map, released, off - released);
            released = off;
        }
        if (r->size - off < ETL_BUFFER_HEADER_SIZE) {
            st->truncated_buffers++;
            st->bad_buffers++;
            st->skipped_bytes += r->size - off;
            etl_reader_problem(r, st, ETL_E_TRUNCATED, off,
                               "buffer %zu at offset 0x%zx: %zu bytes left, less than a buffer header",
                               r->nbufs, off, r->size - off);
            break;
        }
        /* Read, not touched: a touch would map the whole buffer around the header. */
        uint8_t raw[ETL_BUFFER_HEADER_SIZE];
        if (!etl_map_pread(&r->map, off, raw, sizeof raw)) memcpy(raw, r->data + off, sizeof raw);
        etl_buffer_header h;
        etl_buffer_header_decode((etl_span){raw, sizeof raw}, &h);
        /*
         * Compressed buffers each have their own size, so one BufferSize a few bytes off leads
         * into the bytes around the next header, which may still look like one. Where the chain
         * of sizes breaks here, a header a few bytes away that continues it is the buffer: the
         * previous one's size was wrong (it ends there); else, when the next header lies a few
         * bytes from where this one's size leads, this one's size was.
         */
        if (!r->uniform && off && !plausible_header(r, off)) {
            etl_buf_ent *prev = r->nbufs ? &r->bufs[r->nbufs - 1] : NULL;
            size_t at = near_header(r, off, prev ? prev->file_off + ETL_BUFFER_HEADER_SIZE : 0);
            size_t next = off + h.buffer_size, to = SIZE_MAX; /* where this one's size should lead */
            if (plausible_alone(r, off) && h.buffer_size >= ETL_BUFFER_HEADER_SIZE)
                to = near_header(r, next, off + ETL_BUFFER_HEADER_SIZE);
            /*
             * No explanation makes a buffer longer than a session's buffer can be on disk: one
             * BufferSize past the end of the real sample once found the last header 9 KB from
             * where it led and swallowed 352 buffers as one.
             */
            if (to != SIZE_MAX && to - off > disk_cap(r, h.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED)) to = SIZE_MAX;
            if (at != SIZE_MAX && at > off && prev && prev->file_off + prev->disk_size == off && !prev->truncated &&
                at - prev->file_off > disk_cap(r, prev->compressed))
                at = SIZE_MAX;
            /*
             * A third explanation: this header is the buffer's but for one field (BufferSize, Offset, the
             * COMPRESSED flag), and the next header follows within a buffer's length. It beats the last
             * buffer's size being wrong when that header is the one the last buffer would end at (or
             * none is near): the last buffer is then whole, and the damage told where it is.
             */
            size_t n = SIZE_MAX;
            int field = FIELD_NONE;
            bool whole = plausible_alone(r, off) && h.buffer_size >= ETL_BUFFER_HEADER_SIZE &&
                         one_bad_field(r, next, &n) != FIELD_NONE && (to == SIZE_MAX || to == n);
            if (!whole) field = one_bad_field(r, off, &n);
            /* The nearer of the two explains the break with the smaller error. */
            size_t d_at = at == SIZE_MAX ? SIZE_MAX : at > off ? at - off : off - at;
            size_t d_to = to == SIZE_MAX ? SIZE_MAX : to > next ? to - next : next - to;
            if (whole) {
                /* This buffer's size leads to such a header: this one is whole, that one is told next turn. */
            } else if (field != FIELD_NONE && (at == SIZE_MAX || at == n)) {
                if (field == FIELD_SIZE) {
                    st->bad_buffers++;
                    etl_reader_problem(r, st, ETL_E_CORRUPT, off,
                                       "buffer %zu at offset 0x%zx: BufferSize %u does not lead to the next buffer; %zu does",
                                       r->nbufs, off, h.buffer_size, n - off);
                    h.buffer_size = (uint32_t)(n - off);
                } else if (field == FIELD_FLAG) {
                    st->bad_buffers++;
                    etl_reader_problem(r, st, ETL_E_CORRUPT, off,
                                       "buffer %zu at offset 0x%zx: BufferFlag 0x%x lacks COMPRESSED (0x40), but its "
                                       "Offset %u is past its BufferSize %u in a compressed log; read as compressed",
                                       r->nbufs, off, h.buffer_flag, h.offset, h.buffer_size);
                    h.buffer_flag |= ETL_BUFFER_FLAG_COMPRESSED;
                } /* FIELD_OFFSET: told below, where an impossible Offset falls back to SavedOffset */
            } else if (d_to != SIZE_MAX && d_to <= d_at) {
                st->bad_buffers++;
                etl_reader_problem(r, st, ETL_E_CORRUPT, off,
                                   "buffer %zu at offset 0x%zx: BufferSize %u does not lead to the next buffer; %zu does",
                                   r->nbufs, off, h.buffer_size, to - off);
                h.buffer_size = (uint32_t)(to - off);
            } else if (d_at != SIZE_MAX) {
                st->bad_buffers++;
                etl_reader_problem(r, st, ETL_E_CORRUPT, off,
                                   "buffer %zu at offset 0x%zx: no buffer header here, the last one's BufferSize is "
                                   "off by %lld; it is at 0x%zx",
                                   r->nbufs, off, (long long)at - (long long)off, at);
                if (prev && prev->file_off + prev->disk_size == off && !prev->truncated)
                    prev->disk_size = (uint32_t)(at - prev->file_off);
                else if (at > off)
                    st->skipped_bytes += at - off;
                off = at;
                continue;
            }
        }
        if (h.buffer_size < ETL_BUFFER_HEADER_SIZE || h.buffer_size > ETL_MAX_BUFFER_SIZE) {
            size_t next = resync(r, off);
            st->bad_buffers++;
            r->unindexed++;
            st->skipped_bytes += next - off;
            etl_reader_problem(r, st, ETL_E_CORRUPT, off,
                               "buffer %zu at offset 0x%zx: BufferSize %u is impossible; skipped %zu bytes",
                               r->nbufs, off, h.buffer_size, next - off);
            off = next;
            continue;
        }
        /* Uncompressed files have one buffer size (container.md §1): an in-range but
         * different BufferSize is believed only if no buffer starts at the usual stride. */
        uint32_t nominal = r->nominal_buffer_size;
        bool nominal_ok = nominal >= ETL_BUFFER_HEADER_SIZE + 0x20 && nominal <= ETL_MAX_BUFFER_SIZE;
        if (r->uniform && nominal_ok && h.buffer_size != nominal && !(h.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED) &&
            off + nominal < r->size && plausible_header(r, off + nominal)) {
            st->bad_buffers++;
            etl_reader_problem(r, st, ETL_E_CORRUPT, off,
                               "buffer %zu at offset 0x%zx: BufferSize %u differs from the file's %u; using %u",
                               r->nbufs, off, h.buffer_size, nominal, nominal);
            h.buffer_size = nominal;
            if (h.offset > nominal) h.offset = nominal;
        }
        etl_buf_ent e = {0};
        e.file_off = off;
        e.seq = h.sequence_number;
        e.order = h.sequence_number;
        e.ts = h.timestamp;
        e.index = (uint32_t)r->nbufs;
        e.cpu = h.processor_index;
        e.flags = h.buffer_flag;
        e.type = h.buffer_type;
        e.compressed = (h.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED) != 0;
        e.disk_size = h.buffer_size;
        if (h.buffer_size > r->size - off) {
            e.disk_size = (uint32_t)(r->size - off);
            e.truncated = 1;
            st->truncated_buffers++;
            etl_reader_problem(r, st, ETL_E_TRUNCATED, off,
                               "buffer %zu at offset 0x%zx: BufferSize %u runs past the end of the file (%zu bytes left)",
                               r->nbufs, off, h.buffer_size, r->size - off);
        }
        e.data_end = h.offset;
        if (h.offset < ETL_BUFFER_HEADER_SIZE || h.offset > ETL_MAX_BUFFER_SIZE ||
            (!e.compressed && h.offset > h.buffer_size)) {
            /* Offset is unusable; SavedOffset is the only other end marker. */
            uint32_t alt = h.saved_offset;
            bool alt_ok = alt >= ETL_BUFFER_HEADER_SIZE && alt <= ETL_MAX_BUFFER_SIZE &&
                          (e.compressed || alt <= h.buffer_size);
            e.data_end = alt_ok ? alt : (e.compressed ? ETL_BUFFER_HEADER_SIZE : h.buffer_size);
            st->bad_buffers++;
            etl_reader_problem(r, st, ETL_E_CORRUPT, off,
                               "buffer %zu at offset 0x%zx: Offset %u is impossible (BufferSize %u); using %u",
                               r->nbufs, off, h.offset, h.buffer_size, e.data_end);
        }
        if (e.cpu + 1u > r->ncpu) r->ncpu = e.cpu + 1u;
        st->buffers++;
        if (e.compressed) st->compressed_buffers++;
        etl_status rc = push_buffer(r, &cap, &e);
        if (rc != ETL_OK) return rc;
        /* h.buffer_size >= 0x48 here: every turn moves forward. */
        off += h.buffer_size < r->size - off ? h.buffer_size : r->size - off;
    }
    return ETL_OK;
}

uint32_t etl_reader_data_cap(const etl_reader *r)
{
    uint32_t bs = r->hdr.buffer_size;
    return bs >= ETL_BUFFER_HEADER_SIZE + 0x20 && bs <= ETL_MAX_BUFFER_SIZE ? bs : ETL_MAX_BUFFER_SIZE;
}

etl_status etl_reader_load_buffer(const etl_reader *r, const etl_buf_ent *b, uint8_t *scratch,
                                  size_t cap, etl_span *out, etl_stats *st)
{
    const uint8_t *p = r->data + b->file_off;
    if (!b->compressed) {
        out->p = p;
        out->n = b->data_end < b->disk_size ? b->data_end : b->disk_size;
        return ETL_OK;
    }
    size_t want = b->data_end - ETL_BUFFER_HEADER_SIZE;
    if (r->compression != ETL_COMPRESSION_LZNT1 && r->compression != ETL_COMPRESSION_XPRESS &&
        r->compression != ETL_COMPRESSION_XPRESS_HUFF) {
        if (!st) return ETL_E_UNSUPPORTED;
        st->unsupported_buffers++;
        st->bad_buffers++;
        st->skipped_bytes += want;
        etl_reader_problem(r, st, ETL_E_UNSUPPORTED, b->file_off,
                           "buffer %u at offset 0x%llx: compression format %d is not supported",
                           b->index, (unsigned long long)b->file_off, r->compression);
        return ETL_E_UNSUPPORTED;
    }
    uint32_t session = etl_reader_data_cap(r);
    if (b->data_end > session) {
        if (!st) return ETL_E_CORRUPT;
        st->decompress_errors++;
        st->bad_buffers++;
        st->skipped_bytes += b->disk_size;
        etl_reader_problem(r, st, ETL_E_CORRUPT, b->file_off,
                           "buffer %u at offset 0x%llx: Offset %u claims more event data than the session's BufferSize %u; not decompressed",
                           b->index, (unsigned long long)b->file_off, b->data_end, session);
        return ETL_E_CORRUPT;
    }
    if (b->data_end > cap) return ETL_E_RANGE; /* cannot happen: cap is the largest data_end */
    memcpy(scratch, p, ETL_BUFFER_HEADER_SIZE);
    size_t got = 0;
    etl_span in = {p + ETL_BUFFER_HEADER_SIZE, b->disk_size - ETL_BUFFER_HEADER_SIZE};
    etl_status rc = etl_decompress((etl_compression)r->compression, in, scratch + ETL_BUFFER_HEADER_SIZE,
                                   want, &got);
    if (rc != ETL_OK || got != want) {
        if (!st) return rc != ETL_OK ? rc : ETL_E_CORRUPT;
        st->decompress_errors++;
        st->bad_buffers++;
        st->skipped_bytes += want;
        etl_reader_problem(r, st, rc != ETL_OK ? rc : ETL_E_CORRUPT, b->file_off,
                           "buffer %u at offset 0x%llx: %s payload of %u bytes expanded to %zu of the %zu bytes its Offset says (%s)",
                           b->index, (unsigned long long)b->file_off,
                           etl_compression_name((etl_compression)r->compression),
                           b->disk_size - ETL_BUFFER_HEADER_SIZE, got, want,
                           rc == ETL_OK ? "stream ended early" : etl_status_str(rc));
        return rc != ETL_OK ? rc : ETL_E_CORRUPT;
    }
    out->p = scratch;
    out->n = b->data_end;
    return ETL_OK;
}

/* The logfile header is the first record of buffer 0; without it there is no clock. */
static etl_status read_logfile_header(etl_reader *r, etl_diag *diag)
{
    if (r->nbufs == 0 || r->bufs[0].file_off != 0) {
        etl_diag_set(diag, ETL_E_NOT_ETL, 0, "not an ETL file: no buffer header at offset 0");
        return ETL_E_NOT_ETL;
    }
    const etl_buf_ent *b = &r->bufs[0];
    uint8_t *scratch = NULL;
    etl_span data;
    etl_stats tmp = r->stats;
    if (b->compressed) {
        scratch = malloc(b->data_end);
        if (!scratch) return ETL_E_NOMEM;
    }
    etl_status rc = etl_reader_load_buffer(r, b, scratch, b->data_end, &data, &tmp);
    if (rc == ETL_OK) {
        etl_span rec = etl_span_from(data, ETL_BUFFER_HEADER_SIZE);
        rc = etl_logfile_header_decode(rec, &r->hdr);
    }
    free(scratch);
    if (rc != ETL_OK) {
        etl_diag_set(diag, ETL_E_NOT_ETL, ETL_BUFFER_HEADER_SIZE,
                     "not an ETL file: no logfile header (hook 0x0000) at offset 0x48");
        return ETL_E_NOT_ETL;
    }
    return ETL_OK;
}

/*
 * The logfile header read straight from its record at 0x48, bounded by its own
 * Size: a damaged buffer 0 header (BufferSize, Offset) must not hide it.
 */
static etl_status read_logfile_header_direct(etl_reader *r, bool h0_ok, etl_diag *diag)
{
    etl_span rec = etl_span_from((etl_span){r->data, r->size}, ETL_BUFFER_HEADER_SIZE);
    uint16_t size = 0;
    if (etl_ld_u16(rec, 4, &size) && size <= rec.n) rec.n = size;
    etl_status rc = etl_logfile_header_decode(rec, &r->hdr);
    if (rc == ETL_E_TRUNCATED && h0_ok) {
        /* A buffer header, then the logfile header's record whose Size runs past the end: a file cut short. */
        etl_diag_set(diag, ETL_E_NOT_ETL, ETL_BUFFER_HEADER_SIZE,
                     "cut short: the file ends at byte %zu, inside its logfile header record (%u bytes at offset "
                     "0x48); nothing can be read without it", r->size, (unsigned)size);
        return ETL_E_NOT_ETL;
    }
    if (rc != ETL_OK) {
        etl_diag_set(diag, ETL_E_NOT_ETL, ETL_BUFFER_HEADER_SIZE,
                     "not an ETL file: no logfile header (hook 0x0000) at offset 0x48");
        return ETL_E_NOT_ETL;
    }
    return ETL_OK;
}

/*
 * A file of 72..103 bytes whose buffer 0 header is plausible: whether the bytes after it
 * begin a logfile header record (the system header's type, marker, Size and hook 0x0000,
 * as far as they are there); if so, say the file is cut short there.
 */
static bool cut_in_logfile_header(etl_reader *r, etl_diag *diag)
{
    const uint8_t *p = r->data + ETL_BUFFER_HEADER_SIZE;
    size_t n = r->size - ETL_BUFFER_HEADER_SIZE;
    if (n > 2 && p[2] != ETL_HTYPE_SYSTEM32 && p[2] != ETL_HTYPE_SYSTEM64) return false;
    if (n > 3 && (p[3] & 0xC0) != 0xC0) return false;
    if (n > 7 && etl_rd_u16(p + 6) != 0x0000) return false;
    if (n == 0) {
        etl_diag_set(diag, ETL_E_NOT_ETL, ETL_BUFFER_HEADER_SIZE,
                     "cut short: the file ends at byte %zu, where its logfile header record should start "
                     "(offset 0x48); nothing can be read without it", r->size);
    } else if (n < 6) {
        etl_diag_set(diag, ETL_E_NOT_ETL, ETL_BUFFER_HEADER_SIZE,
                     "cut short: the file ends at byte %zu, inside its logfile header record (at offset 0x48); "
                     "nothing can be read without it", r->size);
    } else {
        unsigned size = etl_rd_u16(p + 4);
        if (size < 0x20) return false; /* shorter than its own system header: no such record */
        etl_diag_set(diag, ETL_E_NOT_ETL, ETL_BUFFER_HEADER_SIZE,
                     "cut short: the file ends at byte %zu, inside its logfile header record (%u bytes at offset "
                     "0x48); nothing can be read without it", r->size, size);
    }
    return true;
}

/* The least slack around the session (etl_reader_time_window), in seconds. */
#define WINDOW_MIN_SLACK_S 60u
#define WINDOW_END_SLACK_S 5u

const char *etl_reader_secs(const etl_reader *r, uint64_t ts, char out[32])
{
    int64_t ns = etl_clock_ns(&r->clock, ts);
    uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(out, 32, "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000000u),
             (unsigned long long)(a % 1000000000u / 1000u));
    return out;
}

/* The window's end for a session that ends at end: its length (at least the least slack) on. */
static __int128 widen(__int128 end, __int128 t0, __int128 slack)
{
    return end + (end - t0 > slack ? end - t0 : slack);
}

__int128 etl_end_time_ts(const etl_clock *c, const etl_logfile_header *h)
{
    if (h->end_time <= h->start_time) return -1;
    return (__int128)c->t0 + (__int128)((unsigned __int128)(h->end_time - h->start_time) * c->ticks_per_sec / 10000000u);
}

bool etl_end_agrees(const etl_clock *c, __int128 end_ts, __int128 flush_ts)
{
    return flush_ts < c->t0 || end_ts <= widen(flush_ts, c->t0, (__int128)c->ticks_per_sec * WINDOW_MIN_SLACK_S);
}

/*
 * The session window (container.h, etl_reader_time_window), in 128-bit arithmetic: every
 * field comes from the file. Measured on the samples and synth output (README "Limits"):
 * no record comes near it. An EndTime far after the last buffer flush on the session clock
 * is damage as a record's time is: told, counted, and the flushes end the session.
 */
static void time_window(etl_reader *r)
{
    const etl_clock *c = &r->clock;
    const etl_logfile_header *h = &r->hdr;
    __int128 t0 = c->t0, end = -1, flush = -1;
    bool end_time = false; /* end is an EndTime that agrees with the flushes */
    r->t_lo = 0;
    r->t_span = UINT64_MAX;
    r->end_ts = 0;
    if (t0 > INT64_MAX) { /* the clock's origin itself is damaged: no window but the clock's, no top bit set */
        r->t_span = INT64_MAX;
        return;
    }
    for (size_t i = 0; i < r->nbufs; i++)
        if (!r->bufs[i].skip && r->bufs[i].ts >= c->t0 && r->bufs[i].ts <= INT64_MAX && (__int128)r->bufs[i].ts > flush)
            flush = r->bufs[i].ts;
    __int128 slack = (__int128)c->ticks_per_sec * WINDOW_MIN_SLACK_S;
    if (h->end_time > h->start_time) {
        end = etl_end_time_ts(c, h);
        if (flush >= t0 && !etl_end_agrees(c, end, flush)) {
            char e[32], f[32];
            uint64_t e_ts = end > INT64_MAX ? INT64_MAX : (uint64_t)end;
            r->stats.bad_times++;
            r->stats.bad_buffers++;
            /* EndTime: TRACE_LOGFILE_HEADER +0x10, after the record's 0x20-byte SYSTEM header. */
            etl_reader_problem(r, &r->stats, ETL_E_RANGE, r->nbufs && r->bufs[0].compressed ? 0 : 0x78,
                               "logfile header: EndTime is %s s after the start, far after the last buffer flush "
                               "(%s s); the session ends at that flush",
                               etl_reader_secs(r, e_ts, e), etl_reader_secs(r, (uint64_t)flush, f));
            end = flush;
        } else {
            r->end_ts = end > INT64_MAX ? INT64_MAX : (uint64_t)end;
            end_time = true;
        }
    } else {
        end = flush; /* not closed cleanly: the last flush on the session clock */
    }
    /*
     * Below t0 the slack is fixed: no record of the samples comes before the header's, and a
     * trace that convert rewrites (EndTime = its last record) keeps every record it read.
     */
    __int128 lo = t0 - slack, hi = INT64_MAX;
    /*
     * Above the end the tolerance is tight, so that a window is never much longer than the
     * session: 5 s or 1 % of the session, whichever is more (the samples' records reach 2.9 s
     * past EndTime at most, synth's 7 us). Only from a trustworthy EndTime: without one (the
     * last flush ends the session) and on the CPU-cycle clock, whose rate is the header's
     * nominal CpuSpeedInMHz (EndTime, a FILETIME, and the records' cycles drift apart by however
     * far the real rate is from it), the session's length (60 s at least) is kept.
     */
    __int128 tol = (__int128)c->ticks_per_sec * WINDOW_END_SLACK_S;
    if (end >= t0 && (!end_time || c->type == ETL_CLOCK_CPU_CYCLES)) hi = widen(end, t0, slack);
    else if (end >= t0) hi = end + ((end - t0) / 100 > tol ? (end - t0) / 100 : tol);
    if (lo < 0) lo = 0;
    if (hi > INT64_MAX) hi = INT64_MAX;
    r->t_lo = (uint64_t)lo;
    r->t_span = (uint64_t)(hi - lo);
}

uint64_t etl_reader_end_ts(const etl_reader *r) { return r->end_ts; }

void etl_reader_time_window(const etl_reader *r, uint64_t *lo, uint64_t *hi)
{
    *lo = r->t_lo;
    *hi = r->t_lo + r->t_span;
}

void etl_reader_keep_bad_times(etl_reader *r, bool keep) { r->keep_bad_times = keep; }

/* A buffer's TimeStamp in seconds, or NULL when it is no time of this session (outside its window, or past int64 ns). */
static const char *buffer_secs(const etl_reader *r, uint64_t ts, char out[32])
{
    int64_t ns = etl_clock_ns(&r->clock, ts);
    if (ts < r->t_lo || ts - r->t_lo > r->t_span || ns == INT64_MAX || ns == INT64_MIN) return NULL;
    return etl_reader_secs(r, ts, out);
}

/*
 * A buffer's ProcessorIndex past the machine's processors (the logfile header's
 * NumberOfProcessors) is damage of that buffer when a few buffers say so (a bit of their
 * header): told, never read, its records lost as a missing buffer's are. When many do, the
 * header is what is wrong: told, and the buffers read.
 */
static void judge_processors(etl_reader *r)
{
    unsigned n = r->hdr.num_processors;
    size_t beyond = 0;
    if (!n || n > ETL_MAX_PROCESSORS) return;
    for (size_t i = 0; i < r->nbufs; i++) beyond += r->bufs[i].cpu >= n;
    if (!beyond) return;
    unsigned top = 0;
    for (size_t i = 0; i < r->nbufs; i++) {
        etl_buf_ent *b = &r->bufs[i];
        if (b->cpu < n) continue;
        if (b->cpu > top) top = b->cpu;
        if (beyond * 8 > r->nbufs) continue;
        b->skip = 1;
        r->unindexed++; /* its SequenceNumber's gap is told here */
        r->stats.bad_buffers++;
        r->stats.skipped_bytes += b->disk_size;
        etl_reader_problem(r, &r->stats, ETL_E_CORRUPT, b->file_off,
                           "buffer %u at offset 0x%llx: ProcessorIndex %u, but the machine has %u processors (logfile "
                           "header); skipped",
                           b->index, (unsigned long long)b->file_off, b->cpu, n);
    }
    if (beyond * 8 > r->nbufs) {
        r->stats.bad_buffers++;
        /* NumberOfProcessors: TRACE_LOGFILE_HEADER +0x0C, after the record's 0x20-byte SYSTEM header. */
        etl_reader_problem(r, &r->stats, ETL_E_CORRUPT, r->bufs[0].compressed ? 0 : 0x74,
                           "logfile header: NumberOfProcessors is %u, but %zu buffers name processors up to %u; "
                           "read as the machine's",
                           n, beyond, top);
        return;
    }
    r->ncpu = 0;
    for (size_t i = 0; i < r->nbufs; i++)
        if (!r->bufs[i].skip && r->bufs[i].cpu + 1u > r->ncpu) r->ncpu = r->bufs[i].cpu + 1u;
}

static int by_seq(const void *a, const void *b)
{
    const etl_buf_ent *x = *(const etl_buf_ent *const *)a, *y = *(const etl_buf_ent *const *)b;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return x->file_off < y->file_off ? -1 : x->file_off > y->file_off;
}

/* Whether two buffers hold the same bytes (a buffer written twice). */
static bool same_bytes(const etl_reader *r, const etl_buf_ent *a, const etl_buf_ent *b)
{
    return a->disk_size == b->disk_size && memcmp(r->data + a->file_off, r->data + b->file_off, a->disk_size) == 0;
}

/*
 * SequenceNumbers a sequential log cannot have (container.md §2: 0, 1, 2... up to
 * BuffersWritten): a buffer's that is past BuffersWritten is damage of that field, told; the
 * buffer is read where it lies in the file (the log is written in SequenceNumber order), after
 * the last buffer before it with a number that can be. A number twice: the second copy of a
 * buffer written twice is skipped; two different buffers are told. Returns whether the
 * numbers left are a sequential log's.
 */
static bool judge_numbers(etl_reader *r, const etl_buf_ent **v, size_t *nv, uint64_t *nbad)
{
    const etl_logfile_header *h = &r->hdr;
    uint64_t written = h->buffers_written, n = *nv;
    uint64_t bound = written ? written : (uint64_t)r->nbufs * 2 + 1024;
    size_t beyond = 0;
    for (size_t i = 0; i < n; i++) beyond += v[i]->seq >= bound;
    if (beyond * 8 > n) return false; /* not a few damaged numbers: a numbering of another kind */
    uint64_t order = 0;
    for (size_t i = 0; beyond && i < r->nbufs; i++) { /* file order */
        etl_buf_ent *b = &r->bufs[i];
        if (b->skip) continue;
        if (b->seq < bound) {
            order = b->seq;
            continue;
        }
        b->order = order;
        (*nbad)++;
        r->stats.bad_buffers++;
        etl_reader_problem(r, &r->stats, ETL_E_CORRUPT, b->file_off,
                           "buffer %u at offset 0x%llx: SequenceNumber %llu is impossible (the session wrote %llu "
                           "buffers); read where it lies in the file",
                           b->index, (unsigned long long)b->file_off, (unsigned long long)b->seq,
                           (unsigned long long)written);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        etl_buf_ent *b = &r->bufs[v[i]->index];
        if (b->seq >= bound) continue; /* judged above: no place in the numbering */
        if (k && v[k - 1]->seq == b->seq) {
            const etl_buf_ent *first = v[k - 1];
            r->stats.bad_buffers++;
            if (same_bytes(r, first, b)) {
                b->skip = 1;
                etl_reader_problem(r, &r->stats, ETL_E_CORRUPT, b->file_off,
                                   "buffer %u at offset 0x%llx: a copy of buffer %u (offset 0x%llx, SequenceNumber "
                                   "%llu); skipped",
                                   b->index, (unsigned long long)b->file_off, first->index,
                                   (unsigned long long)first->file_off, (unsigned long long)b->seq);
                continue;
            }
            (*nbad)++; /* one of the two numbers is wrong: the other's may be a gap */
            etl_reader_problem(r, &r->stats, ETL_E_CORRUPT, b->file_off,
                               "buffer %u at offset 0x%llx: SequenceNumber %llu, as buffer %u (offset 0x%llx) has; "
                               "both read, in file order",
                               b->index, (unsigned long long)b->file_off, (unsigned long long)b->seq, first->index,
                               (unsigned long long)first->file_off);
            continue; /* the numbering counts the number once */
        }
        v[k++] = b;
    }
    *nv = k;
    return k && v[0]->seq == 0 && (!written || v[k - 1]->seq < written);
}

/*
 * Buffers whose records are lost (etl_reader_buffers_missing). The SequenceNumbers of a
 * sequential log run 0, 1, 2...: a gap between two found is a buffer removed, or one whose
 * header was beyond reading or that was skipped (told already: only the gaps it does not
 * explain are told); the numbers after the last found up to BuffersWritten, a file cut short.
 * Numbers that cannot be a sequential log's are damage of their own (judge_numbers).
 */
static etl_status missing_buffers(etl_reader *r)
{
    const etl_logfile_header *h = &r->hdr;
    size_t n = 0;
    if ((h->log_file_mode & ETL_LOG_FILE_MODE_CIRCULAR) || !r->nbufs) return ETL_OK;
    const etl_buf_ent **v = malloc(r->nbufs * sizeof *v); /* by SequenceNumber: a gap's neighbours side by side */
    if (!v) return ETL_E_NOMEM;
    for (size_t i = 0; i < r->nbufs; i++)
        if (!r->bufs[i].skip) v[n++] = &r->bufs[i];
    qsort(v, n, sizeof *v, by_seq);
    uint64_t nbad = 0; /* buffers whose number is impossible: each fills a gap, read where it lies */
    bool numbered = judge_numbers(r, v, &n, &nbad);
    uint64_t written = h->buffers_written, last = n ? v[n - 1]->seq : 0, gaps = 0;
    for (size_t i = 1; numbered && i < n; i++)
        if (v[i]->seq > v[i - 1]->seq + 1) {
            gaps += v[i]->seq - v[i - 1]->seq - 1, r->missing_last = v[i]->seq - 1;
            if (!r->holes && !(r->holes = malloc(n * sizeof *r->holes))) {
                free(v);
                return ETL_E_NOMEM;
            }
            r->holes[r->nholes++] = (etl_seq_hole){v[i - 1]->seq + 1, v[i]->seq - 1};
        }
    r->missing = gaps > nbad ? gaps - nbad : 0;
    char a[32], b[32], when[96];
    for (size_t i = 1; numbered && gaps > r->unindexed + nbad && i < n; i++) {
        const etl_buf_ent *before = v[i - 1], *after = v[i];
        if (after->seq <= before->seq + 1) continue;
        uint64_t from = before->seq + 1, to = after->seq - 1, k = to - from + 1;
        r->stats.bad_buffers += k;
        /* When its neighbours were flushed, if their TimeStamps are on the session's clock (a relogger's are not) */
        when[0] = 0;
        /* Buffers flushed at the session's stop need not be in SequenceNumber order: the earlier time first. */
        uint64_t t1 = before->ts < after->ts ? before->ts : after->ts, t2 = before->ts < after->ts ? after->ts : before->ts;
        if (buffer_secs(r, t1, a) && buffer_secs(r, t2, b))
            snprintf(when, sizeof when, ", flushed between %s s and %s s", a, b);
        etl_reader_problem(r, &r->stats, ETL_E_TRUNCATED, after->file_off,
                           "%llu buffer%s the session wrote (SequenceNumber %llu%s%.0llu%s) not in the file, before "
                           "the buffer at offset 0x%llx: %s records are lost",
                           (unsigned long long)k, k == 1 ? "" : "s", (unsigned long long)from, k == 1 ? "" : "..",
                           k == 1 ? 0ull : (unsigned long long)to, when, (unsigned long long)after->file_off,
                           k == 1 ? "its" : "their");
    }
    /* Without a numbering the count is all there is: the buffers found, read or not, against BuffersWritten. */
    uint64_t found = numbered ? last + 1 : r->nbufs + r->unindexed, cut = written > found ? written - found : 0;
    if (cut) {
        r->missing += cut;
        r->missing_last = numbered ? written - 1 : UINT64_MAX;
        r->stats.bad_buffers += cut;
        r->stats.truncated_buffers += cut;
        etl_reader_problem(r, &r->stats, ETL_E_TRUNCATED, r->size,
                           "the file ends at offset 0x%llx after %llu of the %llu buffers the session wrote (cut "
                           "short): each CPU's time after its last record is unknown",
                           (unsigned long long)r->size, (unsigned long long)found, (unsigned long long)written);
    }
    free(v);
    return ETL_OK;
}

uint64_t etl_reader_buffers_missing(const etl_reader *r) { return r->missing; }

/*
 * The time of the last switch of the compact batch (hook 0x0525) whose payload is p and record time ts: the kernel's
 * walker rebuilds the times (etlkit/ccswap.h); a switch later than ts is damage the expanders drop, and so are those
 * after it. false when the batch holds none.
 */
static bool batch_last_switch(etl_span p, uint64_t ts, uint64_t *at)
{
    etl_ccswap_walker w;
    if (etl_ccswap_open(&w, p) != ETL_OK) return false;
    etl_ccswap_record c;
    etl_status st;
    bool any = false;
    while ((st = etl_ccswap_next(&w, &c)) == ETL_OK || st == ETL_E_CORRUPT) {
        if (c.time > ts) break;
        *at = c.time;
        any = true;
    }
    return any;
}

bool etl_buf_times(const etl_reader *r, const etl_buf_ent *b, uint8_t **scratch, uint64_t *first, uint64_t *last)
{
    etl_buf_switch sw;
    return etl_buf_times_sw(r, b, scratch, first, last, &sw);
}

bool etl_buf_times_sw(const etl_reader *r, const etl_buf_ent *b, uint8_t **scratch, uint64_t *first, uint64_t *last,
                      etl_buf_switch *sw)
{
    sw->any = sw->batch = false;
    if (b->compressed && !*scratch && !(*scratch = malloc(etl_reader_data_cap(r)))) return false;
    etl_span data;
    if (etl_reader_load_buffer(r, b, *scratch, etl_reader_data_cap(r), &data, NULL) != ETL_OK) return false;
    etl_record rec;
    size_t pos = ETL_BUFFER_HEADER_SIZE, next = 0;
    /* No record is later than its buffer's flush (when that is a time of the session): the iterators' rule. */
    uint64_t flush = etl_buf_flush(r, b);
    bool any = false;
    while (etl_record_frame(data, pos, &rec, &next) == ETL_OK) {
        pos = next;
        if (!(rec.has & ETL_REC_TS) || rec.ts - r->t_lo > r->t_span || rec.ts > flush) continue;
        if ((rec.has & ETL_REC_HOOK) && (rec.hook == 0x0524 || (rec.hook == 0x0525 && rec.version == 2))) {
            uint64_t t = rec.ts;
            bool batch = rec.hook == 0x0525;
            if ((!batch || batch_last_switch(rec.payload, rec.ts, &t)) && (!sw->any || t >= sw->ts))
                sw->ts = t, sw->batch = batch, sw->any = true;
        }
        if (!any || rec.ts < *first) *first = rec.ts;
        if (!any || rec.ts > *last) *last = rec.ts;
        any = true;
    }
    /* A read out of turn (the buffers around every gap, at open): its pages go, or damage spread over the file
     * would keep it all mapped; the walks read them again in their turn. */
    etl_map_release(&r->map, b->file_off, b->disk_size);
    return any;
}

uint64_t etl_reader_cpu_known_until(const etl_reader *r, unsigned cpu)
{
    uint64_t newest = 0; /* the CPU's last buffer found: a buffer missing after it may be its */
    bool any = false;
    for (size_t i = 0; i < r->nbufs; i++)
        if (!r->bufs[i].skip && r->bufs[i].cpu == cpu && (!any || r->bufs[i].order > newest))
            newest = r->bufs[i].order, any = true;
    if (!r->missing || (any && newest > r->missing_last)) return UINT64_MAX;
    uint8_t *scratch = NULL;
    uint64_t best = 0, below = UINT64_MAX; /* the buffers tried: SequenceNumbers below `below`, newest first */
    etl_buf_switch sw = {0};
    for (int tries = 0; tries < 4 && !(best && sw.any); tries++) {
        const etl_buf_ent *b = NULL;
        for (size_t i = 0; i < r->nbufs; i++) {
            const etl_buf_ent *x = &r->bufs[i];
            if (!x->skip && x->cpu == cpu && x->order < below && (!b || x->order > b->order)) b = x;
        }
        if (!b) break;
        below = b->order;
        if (b->compressed && !scratch && !(scratch = malloc(etl_reader_data_cap(r)))) break;
        uint64_t first, last;
        etl_buf_switch bs;
        if (etl_buf_times_sw(r, b, &scratch, &first, &last, &bs)) {
            if (!best) best = last;
            if (!sw.any) sw = bs;
        }
    }
    free(scratch);
    /* Compact batches: the CPU's switches after its last batch's last were in its next batch, which the file lost
     * (etl_reader_cpu_gaps' rule): who ran after that switch is not known, whatever records follow it. */
    if (sw.any && sw.batch && sw.ts < best) best = sw.ts;
    return best;
}

static etl_status finish_open(etl_reader *r, const etl_reader_options *opts, etl_reader **out,
                              etl_diag *diag)
{
    r->diag_mu = etl_mutex_new();
    r->walk_mu = etl_mutex_new();
    r->walk_cv = etl_cond_new();
    r->skip_mu = etl_mutex_new();
    if (!r->diag_mu || !r->walk_mu || !r->walk_cv || !r->skip_mu) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        etl_reader_close(r);
        return ETL_E_NOMEM;
    }
    r->walk_wake_at = UINT64_MAX;
    for (unsigned i = 0; i < ETL_READER_WALKERS; i++) r->walk_frontier[i] = UINT64_MAX;
    etl_opts_take(&r->opts, sizeof r->opts, opts);
    r->stats.first_problem_offset = UINT64_MAX;
    if (r->size < ETL_BUFFER_HEADER_SIZE) {
        etl_diag_set(diag, ETL_E_NOT_ETL, 0, "not an ETL file: only %zu bytes", r->size);
        etl_reader_close(r);
        return ETL_E_NOT_ETL;
    }
    etl_buffer_header h0;
    etl_buffer_header_decode((etl_span){r->data, r->size}, &h0);
    bool h0_ok = h0.buffer_size >= ETL_BUFFER_HEADER_SIZE + 0x20 && h0.buffer_size <= ETL_MAX_BUFFER_SIZE &&
                 h0.offset >= ETL_BUFFER_HEADER_SIZE + 0x20;
    bool direct = !(h0.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED);
    if (r->size < ETL_BUFFER_HEADER_SIZE + 0x20) {
        /* A buffer header, then the end before the logfile header record's own header: a trace cut as at 104 bytes on. */
        if (!(direct && h0_ok && cut_in_logfile_header(r, diag)))
            etl_diag_set(diag, ETL_E_NOT_ETL, 0, "not an ETL file: only %zu bytes", r->size);
        etl_reader_close(r);
        return ETL_E_NOT_ETL;
    }
    etl_status rc = ETL_OK;
    r->nominal_buffer_size = h0.buffer_size;
    r->compression = ETL_COMPRESSION_XPRESS; /* to read a compressed buffer 0; fixed below */
    if (direct) {
        rc = read_logfile_header_direct(r, h0_ok, diag);
        if (rc == ETL_OK && r->hdr.buffer_size >= ETL_BUFFER_HEADER_SIZE + 0x20 &&
            r->hdr.buffer_size <= ETL_MAX_BUFFER_SIZE && (!h0_ok || h0.buffer_size == r->hdr.buffer_size))
            r->nominal_buffer_size = r->hdr.buffer_size;
        r->uniform = rc == ETL_OK && !(r->hdr.log_file_mode & ETL_LOG_FILE_MODE_COMPRESSED);
    } else if (!h0_ok) {
        /* A compressed buffer 0 needs its own header to be read at all. */
        etl_diag_set(diag, ETL_E_NOT_ETL, 0, "not an ETL file: no buffer header at offset 0");
        rc = ETL_E_NOT_ETL;
    }
    if (rc == ETL_OK) rc = index_buffers(r);
    etl_map_release(&r->map, 0, r->size); /* the walks page in what they read */
    if (rc == ETL_OK && !direct) rc = read_logfile_header(r, diag);
    if (rc == ETL_OK && direct) {
        /* Read outside buffer 0's data: say so, the file is damaged there. */
        uint32_t need = ETL_BUFFER_HEADER_SIZE + etl_rd_u16(r->data + ETL_BUFFER_HEADER_SIZE + 4);
        if (r->nbufs == 0 || r->bufs[0].file_off != 0 || r->bufs[0].data_end < need) {
            r->stats.bad_buffers++;
            etl_reader_problem(r, &r->stats, ETL_E_CORRUPT, 0,
                               "buffer 0 at offset 0x0: its header does not cover the logfile header record (%u bytes); read it anyway",
                               need);
        }
    }
    if (rc != ETL_OK) {
        if (rc == ETL_E_NOMEM) etl_diag_set(diag, rc, UINT64_MAX, "out of memory");
        etl_reader_close(r);
        return rc;
    }
    /* COMPRESSION_FORMAT_* sits in the low 16 bits of buffer 0's State (snail). */
    if (r->hdr.log_file_mode & ETL_LOG_FILE_MODE_COMPRESSED) r->compression = (int)(h0.state & 0xFFFF);
    etl_clock_init(&r->clock, &r->hdr);
    judge_processors(r);
    time_window(r);
    if (missing_buffers(r) != ETL_OK || etl_reader_find_gaps(r) != ETL_OK) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        etl_reader_close(r);
        return ETL_E_NOMEM;
    }
    *out = r;
    return ETL_OK;
}

etl_status etl_reader_open_memory(const void *data, size_t size, const etl_reader_options *opts,
                                  etl_reader **out, etl_diag *diag)
{
    *out = NULL;
    if (!data && size) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "no bytes given for %zu bytes", size);
        return ETL_E_INVALID_ARG;
    }
    etl_reader *r = calloc(1, sizeof *r);
    if (!r) return ETL_E_NOMEM;
    r->map.fd = -1;
    r->data = data;
    r->size = size;
    return finish_open(r, opts, out, diag);
}

etl_status etl_reader_open(const char *path, const etl_reader_options *opts, etl_reader **out,
                           etl_diag *diag)
{
    *out = NULL;
    if (!path) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "no path given");
        return ETL_E_INVALID_ARG;
    }
    etl_reader *r = calloc(1, sizeof *r);
    if (!r) return ETL_E_NOMEM;
    etl_status rc = etl_map_open(path, &r->map, diag);
    if (rc != ETL_OK) {
        free(r);
        return rc;
    }
    r->data = r->map.data;
    r->size = r->map.size;
    return finish_open(r, opts, out, diag);
}

void etl_reader_close(etl_reader *r)
{
    if (!r) return;
    etl_map_close(&r->map);
    etl_mutex_free(r->diag_mu);
    etl_mutex_free(r->walk_mu);
    etl_cond_free(r->walk_cv);
    etl_mutex_free(r->skip_mu);
    free(r->skip_lo);
    free(r->skip_hi);
    free(r->skip_at);
    free(r->skip_n);
    free(r->skip_seen);
    free(r->bufs);
    free(r->holes);
    free(r->gaps);
    free(r->gaps_at);
    free(r);
}

bool etl_stats_damaged(const etl_stats *st)
{
    return st->bad_buffers || st->bad_records || st->truncated_buffers || st->decompress_errors ||
           st->unsupported_buffers || st->bad_times;
}

void etl_stats_add(etl_stats *into, const etl_stats *x, const etl_stats *base)
{
    into->buffers += x->buffers - base->buffers;
    into->compressed_buffers += x->compressed_buffers - base->compressed_buffers;
    into->records += x->records;
    into->bad_buffers += x->bad_buffers - base->bad_buffers;
    into->bad_records += x->bad_records - base->bad_records;
    into->skipped_bytes += x->skipped_bytes - base->skipped_bytes;
    into->decompress_errors += x->decompress_errors - base->decompress_errors;
    into->unsupported_buffers += x->unsupported_buffers - base->unsupported_buffers;
    into->truncated_buffers += x->truncated_buffers - base->truncated_buffers;
    into->bad_times += x->bad_times - base->bad_times;
    if (x->first_problem_offset != UINT64_MAX) stats_take_problem(into, x->first_problem_offset, x->first_problem);
}

const etl_logfile_header *etl_reader_header(const etl_reader *r) { return &r->hdr; }
const etl_clock *etl_reader_clock(const etl_reader *r) { return &r->clock; }
int etl_reader_compression(const etl_reader *r) { return r->compression; }
const etl_stats *etl_reader_stats_get(const etl_reader *r) { return &r->stats; }
size_t etl_reader_buffer_count(const etl_reader *r) { return r->nbufs; }
unsigned etl_reader_cpu_count(const etl_reader *r) { return r->ncpu; }

unsigned etl_reader_processors(const etl_reader *r)
{
    unsigned n = r->hdr.num_processors < ETL_MAX_PROCESSORS ? r->hdr.num_processors : ETL_MAX_PROCESSORS;
    return n > r->ncpu ? n : r->ncpu;
}
uint64_t etl_reader_file_size(const etl_reader *r) { return r->size; }

unsigned etl_reader_buffer_cpu(const etl_reader *r, size_t i)
{
    return i < r->nbufs ? r->bufs[i].cpu : UINT_MAX; /* no buffer i: no CPU, never CPU 0 */
}

unsigned etl_reader_buffer_flags(const etl_reader *r, size_t i)
{
    return i < r->nbufs ? r->bufs[i].flags : 0;
}

etl_status etl_reader_buffer(const etl_reader *r, size_t i, etl_buffer_header *h, uint64_t *file_offset)
{
    if (i >= r->nbufs) return ETL_E_INVALID_ARG;
    const etl_buf_ent *b = &r->bufs[i];
    if (file_offset) *file_offset = b->file_off;
    return etl_buffer_header_decode((etl_span){r->data + b->file_off, r->size - b->file_off}, h);
}

etl_status etl_reader_record_at(const etl_reader *r, etl_record_cache *c, uint32_t buffer, uint32_t offset,
                                etl_record *out)
{
    if (buffer >= r->nbufs) return ETL_E_INVALID_ARG;
    const etl_buf_ent *b = &r->bufs[buffer];
    if (!c->loaded || c->buffer != buffer) {
        c->loaded = false;
        if (b->compressed && c->cap < b->data_end && b->data_end <= etl_reader_data_cap(r)) {
            uint8_t *s = realloc(c->scratch, b->data_end);
            if (!s) return ETL_E_NOMEM;
            c->scratch = s;
            c->cap = b->data_end;
        }
        /* A load that fails here failed in the walk already: no stats, nothing said twice. */
        etl_status rc = etl_reader_load_buffer(r, b, c->scratch, c->cap, &c->data, NULL);
        if (rc != ETL_OK) return rc;
        if (b->truncated && !b->compressed && c->data.n > b->disk_size) c->data.n = b->disk_size;
        c->buffer = buffer;
        c->loaded = true;
    }
    size_t next;
    etl_status rc = etl_record_frame(c->data, offset, out, &next);
    if (rc != ETL_OK) return rc == ETL_END ? ETL_E_RANGE : rc;
    out->cpu = b->cpu;
    out->buffer_index = buffer;
    return ETL_OK;
}

void etl_record_cache_free(etl_record_cache *c)
{
    if (!c) return; /* as the handles' close: a cleanup path may free what it never made */
    free(c->scratch);
    memset(c, 0, sizeof *c);
}

/* Pages dropped at a time: one call covers megabytes (each call costs a TLB flush). */
#define WALK_RELEASE_BYTES (8u << 20)
/* How far a paced walker may run ahead of the slowest paced one; it waits until half of it is left. */
#define WALK_PACE_BYTES (16u << 20)
/* A walker further behind the caller than this is not waited for (paced ones stay within WALK_PACE_BYTES). */
#define WALK_LAG_BYTES (2 * (uint64_t)WALK_PACE_BYTES)

int etl_reader_walk_join(etl_reader *r)
{
    int slot = -1;
    etl_mutex_lock(r->walk_mu);
    bool alone = true; /* no walker at work: a new walk starts from the file's start */
    for (int i = 0; i < ETL_READER_WALKERS; i++) alone &= r->walk_frontier[i] == UINT64_MAX;
    if (alone) r->walk_released = 0;
    for (int i = 0; i < ETL_READER_WALKERS && slot < 0; i++)
        if (r->walk_frontier[i] == UINT64_MAX) {
            r->walk_frontier[i] = r->walk_released;
            slot = i;
        }
    etl_mutex_unlock(r->walk_mu);
    return slot;
}

void etl_reader_walk_pace(etl_reader *r, int slot)
{
    if (slot < 0) return;
    etl_mutex_lock(r->walk_mu);
    r->walk_paced[slot] = true;
    etl_mutex_unlock(r->walk_mu);
}

/* The lowest frontier of the paced walkers (the slowest never waits: they all get on). */
static uint64_t paced_low(const etl_reader *r)
{
    uint64_t low = UINT64_MAX;
    for (unsigned i = 0; i < ETL_READER_WALKERS; i++)
        if (r->walk_paced[i] && r->walk_frontier[i] < low) low = r->walk_frontier[i];
    return low;
}

void etl_reader_walk_at(etl_reader *r, int slot, uint64_t frontier)
{
    if (slot < 0) return;
    etl_mutex_lock(r->walk_mu);
    uint64_t prev = r->walk_frontier[slot];
    r->walk_frontier[slot] = frontier;
    if (frontier == UINT64_MAX) r->walk_paced[slot] = false; /* done: the slot is free again */
    if (r->walk_wake_at != UINT64_MAX && paced_low(r) >= r->walk_wake_at) {
        r->walk_wake_at = UINT64_MAX; /* who still has to wait says so again */
        etl_cond_broadcast(r->walk_cv);
    }
    /*
     * A walker far behind the caller is paused (a model opened, then a stack table built over the whole file
     * before the model reads on): waiting for it would keep every page the others read. It is left out; the
     * pages it has not read yet are dropped with the others' (read again when it gets there), and it drops
     * those it reads below the released line itself, each 8 MiB it passes.
     */
    uint64_t top = frontier < r->size ? frontier : r->size;
    uint64_t low = top;
    for (unsigned i = 0; i < ETL_READER_WALKERS; i++) {
        uint64_t f = r->walk_frontier[i] < r->size ? r->walk_frontier[i] : r->size;
        if (r->walk_frontier[i] != UINT64_MAX && f < low && top - f <= WALK_LAG_BYTES) low = f;
    }
    if (low >= r->walk_released + WALK_RELEASE_BYTES || (frontier == UINT64_MAX && low > r->walk_released)) {
        etl_map_release(&r->map, r->walk_released, low - r->walk_released);
        r->walk_released = low;
    }
    if (prev < r->walk_released) { /* a walker behind the line: what it passed, 8 MiB at a time, then the rest */
        uint64_t a = prev / WALK_RELEASE_BYTES * WALK_RELEASE_BYTES;
        uint64_t b = top >= r->walk_released ? r->walk_released : top / WALK_RELEASE_BYTES * WALK_RELEASE_BYTES;
        if (b > a) etl_map_release(&r->map, a, b - a);
    }
    if (r->walk_paced[slot] && frontier - paced_low(r) > WALK_PACE_BYTES) {
        uint64_t until = frontier - WALK_PACE_BYTES / 2;
        while (r->walk_paced[slot] && paced_low(r) < until) {
            if (until < r->walk_wake_at) r->walk_wake_at = until;
            etl_cond_wait(r->walk_cv, r->walk_mu);
        }
    }
    etl_mutex_unlock(r->walk_mu);
}
