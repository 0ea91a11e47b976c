/*
 * pb.h - the few protobuf encoding primitives the Perfetto writer needs (spec
 * perfetto.md §2): varints, tags, zigzag. Messages are small and built
 * innermost first into caller buffers, so every length is known before it is
 * written (no back-patching).
 */
#ifndef ETLKIT_EXPORT_PB_H
#define ETLKIT_EXPORT_PB_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_LEN = 2 };

/* Bytes of v as a varint. */
static inline size_t pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *pb_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *pb_tag(uint8_t *p, unsigned field, unsigned wire) { return pb_varint(p, (uint64_t)field << 3 | wire); }

/* A varint field (uint32/uint64/int32 >= 0/enum/bool). */
static inline uint8_t *pb_uint(uint8_t *p, unsigned field, uint64_t v) { return pb_varint(pb_tag(p, field, PB_VARINT), v); }

/* An int32 field: negative values take ten bytes, as protobuf sign-extends them. */
static inline uint8_t *pb_int32(uint8_t *p, unsigned field, int32_t v)
{
    return pb_varint(pb_tag(p, field, PB_VARINT), (uint64_t)(int64_t)v);
}

static inline uint32_t pb_zigzag32(int32_t n) { return ((uint32_t)n << 1) ^ (uint32_t)(n >> 31); }

/* A sint32 field. */
static inline uint8_t *pb_sint32(uint8_t *p, unsigned field, int32_t v) { return pb_uint(p, field, pb_zigzag32(v)); }

/* The head of a length-delimited field of len bytes (the bytes follow). */
static inline uint8_t *pb_len(uint8_t *p, unsigned field, size_t len) { return pb_varint(pb_tag(p, field, PB_LEN), len); }

/* Bytes of a length-delimited field with a payload of len bytes, head included. */
static inline size_t pb_len_size(unsigned field, size_t len)
{
    return pb_varint_len((uint64_t)field << 3 | PB_LEN) + pb_varint_len(len) + len;
}

#endif
