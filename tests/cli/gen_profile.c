/*
 * gen_profile.c DIR - writes the profile test traces of tests/unit/profbuild.h
 * (DIR/p64.etl, DIR/p32.etl, DIR/names.etl) for tests/cli/profile.sh: the same
 * traces test_profile.c checks number by number, here run through the CLI.
 */
#include <stdio.h>
#include "profbuild.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_profile DIR\n");
        return 64;
    }
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
