/* main.c - etlkit's entry point: dispatches to one builtin per subcommand (perf style). */
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "etlkit_gitrev.h"
#include "base/platform.h"

static const struct cmd {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} cmds[] = {
    {"info", cmd_info, "summarise a trace: logfile header, buffers, event counts, damage"},
    {"dump", cmd_dump, "print every record, as JSON lines, CSV or text"},
    {"synth", cmd_synth, "write a simulated kernel trace (seeded) and its ground truth"},
    {"convert", cmd_convert, "rewrite a trace: CSwitch events <-> compact batches, recompress"},
    {"cpu", cmd_cpu, "CPU time per CPU, process and thread (CPU Usage (Precise))"},
    {"waits", cmd_waits, "ready latency and waits per thread and per wait reason"},
    {"switches", cmd_switches, "the CPU Usage (Precise) rows: one per switch-in, WPA's columns"},
    {"export", cmd_export, "the trace as SQLite, CSV tables, a Perfetto trace or ftrace text"},
    {"waitchain", cmd_waitchain, "why a thread was slow: its waits, who readied it, what they did"},
    {"wakeups", cmd_wakeups, "who wakes idle CPUs, per process and thread, C-states left"},
    {"spinlocks", cmd_spinlocks, "spin lock contention per lock, caller and mode, with estimated totals"},
    {"pmc", cmd_pmc, "PMC counter deltas per thread and process: IPC, CPI, misses per 1000 instructions"},
    {"profile", cmd_profile, "where the CPU time went: sampled profile by process, module, function; flame graphs"},
    {"compare", cmd_compare, "cpu and waits of two traces side by side; --fail-if gates a CI"},
    {"report", cmd_report, "one self-contained HTML page: the trace and its reports in charts"},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: %s [--version] [--help] COMMAND [ARGS]\n\n"
               "Reads and writes Windows Event Trace Log (.etl) files.\n\nCommands:\n", prog);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\nRun '%s COMMAND --help' (or '%s help COMMAND') for a command's options.\nSee etlkit(1).\n"
               "Exit status: 0 ok, 1 I/O error (compare: also a --fail-if gate crossed), 2 not an ETL file\n"
               "(compare: also a trace it cannot compare), 3 input damaged (parts skipped), 4 waitchain: no\n"
               "such thread or interval, 64 usage error.\n", prog, prog);
}

static const struct cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(name, cmds[i].name) == 0) return &cmds[i];
    return NULL;
}

int main(int argc, char **argv)
{
    etl_platform_init(&argc, &argv);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *c = argv[1];
    if (strcmp(c, "help") == 0 && argc > 2 && strcmp(argv[2], "help") != 0 && !cli_is_help(argv[2])) {
        /* `etlkit help cpu`: cpu's own help, as `etlkit cpu --help` */
        const struct cmd *k = find_cmd(argv[2]);
        if (!k) return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        char *help_argv[] = {argv[2], "--help", NULL};
        return k->fn(2, help_argv);
    }
    if (cli_is_help(c) || strcmp(c, "help") == 0) {
        usage(stdout);
        return cli_stdout_done(NULL); /* a help that could not be written is a failure, as any output */
    }
    if (strcmp(c, "--version") == 0 || strcmp(c, "-V") == 0 || strcmp(c, "version") == 0) {
        /* The library's own version (the one linked) and the commit built from, in a checkout. */
        if (*ETLKIT_GIT_COMMIT) printf("etlkit %s (git %s)\n", etl_version(), ETLKIT_GIT_COMMIT);
        else printf("etlkit %s\n", etl_version());
        return cli_stdout_done(NULL);
    }
    const struct cmd *k = find_cmd(c);
    if (k) return k->fn(argc - 1, argv + 1);
    /* Before the command only --help and --version are options. */
    if (c[0] == '-' && c[1]) return cli_usage_error(NULL, "unknown option '%s' (options go after the COMMAND)", c);
    return cli_usage_error(NULL, "unknown command '%s'", c);
}
