/*
 * cswitch.c - WMI_CONTEXTSWAP, the data of a CSwitch event (hook 0x0524).
 *
 * v1 (5.1-5.2) is 16 bytes; v2 (6.0-1607), v3 (1703) and v4 (1709+) are 24.
 * v3 and v4 reuse byte 0x0D, the v1/v2 OldThreadWaitMode, as a flag byte whose
 * bit 0 is still the wait mode. Versions outside 1..4 use the nearest layout.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"

enum { V1_SIZE = 0x10, V2_SIZE = 0x18 };

/* The layout a version number selects: 1..4. */
static unsigned layout_of(unsigned version)
{
    return version < 1 ? 1 : version > 4 ? 4 : version;
}

size_t etl_cswitch_size(unsigned version)
{
    return layout_of(version) == 1 ? V1_SIZE : V2_SIZE;
}

/*
 * Byte 0x0D of v3/v4: bit 0 wait mode, then the old and the new thread's BAM
 * field, 1 bit each in v3 (EppImportant) and 3 bits each in v4 (QosLevel).
 * The bits above them are reserved.
 */
static unsigned bam_bits(unsigned layout) { return layout == 3 ? 1 : 3; }

static uint8_t defined_bits(unsigned layout)
{
    return (uint8_t)((1u << (1 + 2 * bam_bits(layout))) - 1);
}

/* The bits a switch's header fills; the decoder must not touch them. */
#define HEADER_BITS (ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_PMC | ETL_CSW_PEBS)

etl_status etl_cswitch_decode(etl_span payload, unsigned version, etl_cswitch *out)
{
    if (!out) return ETL_E_INVALID_ARG;
    unsigned layout = layout_of(version);
    if (!etl_span_has(payload, 0, etl_cswitch_size(version))) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p;

    uint32_t known = ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_NEW_PRIORITY |
                     ETL_CSW_OLD_PRIORITY | ETL_CSW_PREVIOUS_CSTATE | ETL_CSW_SPARE_BYTE |
                     ETL_CSW_WAIT_REASON | ETL_CSW_WAIT_MODE | ETL_CSW_STATE |
                     ETL_CSW_IDEAL_PROCESSOR;
    out->version = (uint8_t)(version > 255 ? 255 : version);
    out->source = ETL_CSW_SRC_CSWITCH;
    out->new_tid = etl_rd_u32(p);
    out->old_tid = etl_rd_u32(p + 4);
    out->new_priority = (int8_t)p[8];
    out->old_priority = (int8_t)p[9];
    out->previous_cstate = p[0x0A];
    out->spare_byte = p[0x0B];
    out->old_wait_reason = p[0x0C];
    out->old_state = p[0x0E];
    out->old_ideal_processor = p[0x0F];
    out->old_wait_mode = p[0x0D];
    out->flags = 0;
    out->old_bam = 0;
    out->new_bam = 0;
    out->new_wait_time = 0;
    out->old_remaining_quantum = 0;
    if (layout >= 2) {
        out->new_wait_time = etl_rd_u32(p + 0x10);
        out->old_remaining_quantum = (int32_t)etl_rd_u32(p + 0x14);
        known |= ETL_CSW_NEW_WAIT_TIME | ETL_CSW_REMAINING_QUANTUM;
    }
    if (layout >= 3) {
        unsigned b = bam_bits(layout);
        uint8_t f = p[0x0D], mask = (uint8_t)((1u << b) - 1);
        out->flags = f;
        out->old_wait_mode = f & 1;
        out->old_bam = (uint8_t)((f >> 1) & mask);
        out->new_bam = (uint8_t)((f >> (1 + b)) & mask);
        known |= ETL_CSW_FLAGS;
    }
    /* All ones is what convert writes for a field a compact batch does not carry (README: convert), a value no
       kernel writes: unknown. The bytes whose all-ones a kernel may write (v2's Reserved quantum, SpareByte, v1's
       quanta, v3/v4's flag byte) stay as they are. */
    if (out->new_tid == UINT32_MAX) known &= ~(uint32_t)ETL_CSW_NEW_TID;
    if (out->old_tid == UINT32_MAX) known &= ~(uint32_t)ETL_CSW_OLD_TID;
    if (out->new_priority == -1) known &= ~(uint32_t)ETL_CSW_NEW_PRIORITY;
    if (out->old_priority == -1) known &= ~(uint32_t)ETL_CSW_OLD_PRIORITY;
    if (out->old_wait_reason == 0xFF) known &= ~(uint32_t)ETL_CSW_WAIT_REASON;
    if (out->old_state == 0xFF) known &= ~(uint32_t)ETL_CSW_STATE;
    if (layout < 3 && out->old_wait_mode == 0xFF) known &= ~(uint32_t)ETL_CSW_WAIT_MODE;
    if (layout >= 2 && out->previous_cstate == 0xFF) known &= ~(uint32_t)ETL_CSW_PREVIOUS_CSTATE;
    if (out->old_ideal_processor == 0xFF) known &= ~(uint32_t)ETL_CSW_IDEAL_PROCESSOR;
    if (layout >= 2 && out->new_wait_time == UINT32_MAX) known &= ~(uint32_t)ETL_CSW_NEW_WAIT_TIME;
    out->known = (out->known & HEADER_BITS) | known;
    return ETL_OK;
}

etl_status etl_cswitch_encode(const etl_cswitch *in, unsigned version, uint8_t *out, size_t cap,
                              size_t *len)
{
    if (!in || !len) return ETL_E_INVALID_ARG;
    unsigned layout = layout_of(version);
    size_t need = etl_cswitch_size(version);
    *len = 0;

    uint8_t mode = in->old_wait_mode;
    if (layout >= 3) {
        unsigned b = bam_bits(layout);
        if (in->old_wait_mode > 1 || in->old_bam >> b || in->new_bam >> b) return ETL_E_RANGE;
        mode = (uint8_t)(in->old_wait_mode | in->old_bam << 1 | in->new_bam << (1 + b) |
                         (in->flags & ~defined_bits(layout)));
    }
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_u32(out, in->new_tid);
    etl_wr_u32(out + 4, in->old_tid);
    out[8] = (uint8_t)in->new_priority;
    out[9] = (uint8_t)in->old_priority;
    out[0x0A] = in->previous_cstate;
    out[0x0B] = in->spare_byte;
    out[0x0C] = in->old_wait_reason;
    out[0x0D] = mode;
    out[0x0E] = in->old_state;
    out[0x0F] = in->old_ideal_processor;
    if (layout >= 2) {
        etl_wr_u32(out + 0x10, in->new_wait_time);
        etl_wr_u32(out + 0x14, (uint32_t)in->old_remaining_quantum);
    }
    *len = need;
    return ETL_OK;
}
