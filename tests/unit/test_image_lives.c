/*
 * test_image_lives.c - the image map's lives at the edges the real samples show (explore15):
 *   F2: an Unload with no Load or DCStart before it at its (process, base) is a life from
 *       the trace's start (or the end of the last life there) until the Unload, as a DCEnd
 *       listing an image no event announced is (kernel-shutdown-x64: 120 images of three
 *       processes that exit while the start rundown runs; a lost Load);
 *   F3: a rundown DCStart of the image live since its Load at the same (process, base,
 *       size, file) is that life, not a second one from the rundown: the Load's time and
 *       fields stay, the DCStart fills only what the Load lacked (kernel-shutdown-x64's
 *       coml2.dll in pid 7064: one row, TimeDateStamp 1814063486 throughout).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/kernel.h"
#include "stacks/images.h"
#include "stacks/strtab.h"

static uint8_t name16[512];

static etl_image img(uint64_t base, uint64_t size, uint32_t pid, const char *path, uint32_t tds, uint32_t sum)
{
    etl_image im;
    memset(&im, 0, sizeof im);
    im.image_base = base;
    im.image_size = size;
    im.process_id = pid;
    im.time_date_stamp = tds;
    im.image_checksum = sum;
    size_t n = 0;
    for (const char *s = path; *s; s++, n += 2) {
        name16[n] = (uint8_t)*s;
        name16[n + 1] = 0;
    }
    im.file_name.text = (etl_span){name16, n};
    im.file_name.terminated = true;
    return im;
}

#define ADD(m, hook, ts, base, size, pid, path, tds, sum)                                                          \
    do {                                                                                                           \
        etl_image i_ = img(base, size, pid, path, tds, sum);                                                       \
        assert_int_equal(etl_image_map_add(m, hook, ts, &i_), ETL_OK);                                             \
    } while (0)

enum { LOAD = ETL_HOOK_PROCESS_LOAD_IMAGE, UNLOAD = ETL_HOOK_IMAGE_UNLOAD, DCSTART = ETL_HOOK_IMAGE_DC_START,
       DCEND = ETL_HOOK_IMAGE_DC_END };

static const char *name_at(const etl_image_map *m, uint32_t pid, uint64_t addr, uint64_t ts)
{
    uint32_t i = etl_image_map_find(m, pid, addr, ts, NULL);
    return i == ETL_IMAGE_NONE ? NULL : etl_strtab_get(m->names, m->v[i].name);
}

static void test_unload_only(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    /* clr.dll whose Load was lost: its Unload at 5000 says it held [base, base + size) until then */
    ADD(&m, UNLOAD, 5000, 0x7ff800000000ull, 0x10000, 10, "\\x\\clr.dll", 111, 7);
    /* the same Unload again (a duplicate record) adds nothing */
    ADD(&m, UNLOAD, 5000, 0x7ff800000000ull, 0x10000, 10, "\\x\\clr.dll", 111, 7);
    /* a.dll loaded and unloaded, then unloaded again at 9000: a life lost in between, from its last end */
    ADD(&m, LOAD, 2000, 0x10000, 0x1000, 10, "\\x\\a.dll", 0, 0);
    ADD(&m, UNLOAD, 3000, 0x10000, 0x1000, 10, "\\x\\a.dll", 0, 0);
    ADD(&m, UNLOAD, 9000, 0x10000, 0x1000, 10, "\\x\\a.dll", 0, 0);
    /* a kernel driver unloaded with no load: every process's */
    ADD(&m, UNLOAD, 7000, 0xfffff80000000000ull, 0x8000, 4, "\\x\\drv.sys", 0, 0);
    assert_int_equal(m.n, 4);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);

    assert_string_equal(name_at(&m, 10, 0x7ff800000100ull, 1), "clr.dll"); /* from before the trace */
    assert_string_equal(name_at(&m, 10, 0x7ff80000ffffull, 4999), "clr.dll");
    assert_null(name_at(&m, 10, 0x7ff800000100ull, 5000)); /* the Unload ends it */
    assert_null(name_at(&m, 11, 0x7ff800000100ull, 100));  /* its process's only */
    uint32_t i = etl_image_map_find(&m, 10, 0x7ff800000100ull, 1, NULL);
    assert_int_equal(m.v[i].from_ts, 0);
    assert_int_equal(m.v[i].to_ts, 5000);
    assert_int_equal(m.v[i].time_date_stamp, 111);
    assert_int_equal(m.v[i].checksum, 7);
    assert_int_equal(m.v[i].logged_size, 0x10000);

    assert_null(name_at(&m, 10, 0x10010, 1999));
    assert_string_equal(name_at(&m, 10, 0x10010, 2500), "a.dll");
    assert_string_equal(name_at(&m, 10, 0x10010, 3000), "a.dll"); /* the second life, from the first's end */
    assert_string_equal(name_at(&m, 10, 0x10010, 8999), "a.dll");
    assert_null(name_at(&m, 10, 0x10010, 9000));

    assert_string_equal(name_at(&m, 77, 0xfffff80000000010ull, 10), "drv.sys");
    assert_null(name_at(&m, 77, 0xfffff80000000010ull, 7000));
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

static void test_dcstart_of_live_load(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    /* coml2.dll: Load (TimeDateStamp, no checksum), the rundown's DCStart (no TimeDateStamp), Unload */
    ADD(&m, LOAD, 1000, 0x75610000, 385024, 7064, "\\Windows\\SysWOW64\\coml2.dll", 1814063486, 0);
    ADD(&m, DCSTART, 1500, 0x75610000, 385024, 7064, "\\Windows\\SysWOW64\\coml2.dll", 0, 419214);
    ADD(&m, UNLOAD, 2000, 0x75610000, 385024, 7064, "\\Windows\\SysWOW64\\coml2.dll", 1814063486, 419214);
    assert_int_equal(m.n, 1);
    /* a DCStart of another file or size at a live image's base is another image: it replaces the one there */
    ADD(&m, LOAD, 1000, 0x20000, 0x1000, 7064, "\\x\\b.dll", 5, 0);
    ADD(&m, DCSTART, 1500, 0x20000, 0x1000, 7064, "\\x\\other.dll", 0, 0);
    ADD(&m, LOAD, 1000, 0x30000, 0x1000, 7064, "\\x\\c.dll", 6, 0);
    ADD(&m, DCSTART, 1500, 0x30000, 0x2000, 7064, "\\x\\c.dll", 0, 0);
    assert_int_equal(m.n, 5);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);

    uint32_t i = etl_image_map_find(&m, 7064, 0x75610010, 1700, NULL);
    assert_int_not_equal(i, ETL_IMAGE_NONE);
    assert_int_equal(m.v[i].from_ts, 1000);
    assert_int_equal(m.v[i].to_ts, 2000);
    assert_int_equal(m.v[i].time_date_stamp, 1814063486);
    assert_int_equal(m.v[i].checksum, 419214); /* what the Load lacked */
    assert_int_equal(etl_image_map_find(&m, 7064, 0x75610010, 1200, NULL), i);

    assert_string_equal(name_at(&m, 7064, 0x20010, 1200), "b.dll");
    assert_string_equal(name_at(&m, 7064, 0x20010, 1500), "other.dll");
    i = etl_image_map_find(&m, 7064, 0x30010, 1600, NULL);
    assert_int_equal(m.v[i].from_ts, 1500);
    assert_int_equal(m.v[i].logged_size, 0x2000);
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unload_only),
        cmocka_unit_test(test_dcstart_of_live_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
