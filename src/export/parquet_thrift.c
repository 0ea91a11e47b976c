/*
 * parquet_thrift.c - the Thrift compact protocol, write side only, for Parquet's
 * page headers and footer (parquet.thrift). A field is a header byte (the id's
 * delta from the previous field of its struct in the high nibble when 1..15,
 * else 0 and the id as a zigzag varint after it; the type in the low nibble, a
 * bool's value being its type) and its value: integers as zigzag varints,
 * binaries as a varint length and the bytes, lists as a size/type byte (size
 * past 14: 0xF and a varint), a struct as its fields and a stop byte 0.
 */
#include "export/parquet.h"

static void field(pq_thrift *t, int16_t id, int type)
{
    int16_t d = (int16_t)(id - t->last[t->depth]);
    if (d > 0 && d <= 15) {
        pq_buf_u8(t->b, (uint8_t)(d << 4 | type));
    } else {
        pq_buf_u8(t->b, (uint8_t)type);
        pq_buf_varint(t->b, pq_zigzag(id));
    }
    t->last[t->depth] = id;
}

static void push(pq_thrift *t)
{
    /* The footer nests 5 deep at most: deeper is this file's bug, marked as a failed buffer. */
    if (t->depth + 1 >= PQ_THRIFT_DEPTH) {
        t->b->oom = true;
        return;
    }
    t->last[++t->depth] = 0;
}

void pq_t_begin(pq_thrift *t, pq_buf *b)
{
    t->b = b;
    t->depth = 0;
    t->last[0] = 0;
}

void pq_t_i32(pq_thrift *t, int16_t id, int32_t v)
{
    field(t, id, PQ_T_I32);
    pq_buf_varint(t->b, pq_zigzag(v));
}

void pq_t_i64(pq_thrift *t, int16_t id, int64_t v)
{
    field(t, id, PQ_T_I64);
    pq_buf_varint(t->b, pq_zigzag(v));
}

void pq_t_byte(pq_thrift *t, int16_t id, int8_t v)
{
    field(t, id, PQ_T_BYTE);
    pq_buf_u8(t->b, (uint8_t)v);
}

void pq_t_bool(pq_thrift *t, int16_t id, bool v) { field(t, id, v ? PQ_T_TRUE : PQ_T_FALSE); }

void pq_t_binary(pq_thrift *t, int16_t id, const void *p, size_t n)
{
    field(t, id, PQ_T_BINARY);
    pq_buf_varint(t->b, n);
    pq_buf_put(t->b, p, n);
}

void pq_t_string(pq_thrift *t, int16_t id, const char *s) { pq_t_binary(t, id, s, strlen(s)); }

void pq_t_struct(pq_thrift *t, int16_t id)
{
    field(t, id, PQ_T_STRUCT);
    push(t);
}

void pq_t_end(pq_thrift *t)
{
    pq_buf_u8(t->b, 0);
    if (t->depth > 0) t->depth--;
}

void pq_t_list(pq_thrift *t, int16_t id, int elem, uint32_t n)
{
    field(t, id, PQ_T_LIST);
    if (n < 15) {
        pq_buf_u8(t->b, (uint8_t)(n << 4 | (unsigned)elem));
    } else {
        pq_buf_u8(t->b, (uint8_t)(0xF0 | elem));
        pq_buf_varint(t->b, n);
    }
}

void pq_t_elem_i32(pq_thrift *t, int32_t v) { pq_buf_varint(t->b, pq_zigzag(v)); }

void pq_t_elem_string(pq_thrift *t, const char *s)
{
    size_t n = strlen(s);
    pq_buf_varint(t->b, n);
    pq_buf_put(t->b, s, n);
}

void pq_t_elem_struct(pq_thrift *t) { push(t); }
