/*
 * gen_profile_agree.c DIR - writes tests/unit/profagree.h's traces (DIR/reload.etl,
 * DIR/threads.etl, DIR/bigsize.etl, DIR/deep.etl) for tests/cli/profile_agree.sh: the
 * traces test_profile_agree.c checks in the library, here through the CLI's outputs.
 */
#include <stdio.h>
#include "profagree.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_profile_agree DIR\n");
        return 64;
    }
    static void (*const build[])(void) = {pa_build_reload, pa_build_threads, pa_build_bigsize, pa_build_deep};
    static const char *const name[] = {"reload", "threads", "bigsize", "deep"};
    char path[4096];
    for (size_t i = 0; i < sizeof build / sizeof build[0]; i++) {
        build[i]();
        snprintf(path, sizeof path, "%s/%s.etl", argv[1], name[i]);
        pb_write(path);
    }
    free(evs);
    return 0;
}
