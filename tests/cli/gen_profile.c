/*
 * gen_profile.c DIR [BUFFER_SIZE] - writes the profile test traces of
 * tests/unit/profbuild.h (DIR/p64.etl, DIR/p32.etl, DIR/names.etl) for
 * tests/cli/profile.sh: the same traces test_profile.c checks number by number,
 * here run through the CLI. BUFFER_SIZE (bytes; 4096 makes them small enough to
 * seed fuzz_profile) is the writer's default when absent.
 */
#include <stdio.h>
#include "profbuild.h"

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: gen_profile DIR [BUFFER_SIZE]\n");
        return 64;
    }
    if (argc == 3) pb_buffer_size = (uint32_t)strtoul(argv[2], NULL, 10);
    char path[4096];
    pb_build64();
    snprintf(path, sizeof path, "%s/p64.etl", argv[1]);
    pb_write(path);
    pb_build32();
    snprintf(path, sizeof path, "%s/p32.etl", argv[1]);
    pb_write(path);
    pb_build_names();
    snprintf(path, sizeof path, "%s/names.etl", argv[1]);
    pb_write(path);
    free(evs);
    return 0;
}
