/*
 * opts.h - the one option table of every subcommand: each declares its options once
 * (long name, short name, argument, help, kind, where the value goes) and this module
 * parses the command line from it, writes --help from it and says every usage error in
 * one way (the model: perf's parse-options and babeltrace2's argpar, not getopt_long,
 * which permutes argv and prints messages that are not ours).
 *
 * Syntax, the same for every command: `--name value`, `--name=value`, `-o value`,
 * `-ovalue` (as getopt reads it), flags `--name` and `-q` (one letter each); `--` ends the options; `-` and anything not starting with a dash
 * are operands, collected in order. A value is the next argument whatever it looks like
 * (`--range -1 5`). An option given twice: the last value counts (a custom parser may
 * collect every one, as compare's --fail-if does). -h and --help print the help and
 * stop, wherever they are met.
 *
 * Errors, one line and then the pointer to --help (cli_usage_error, exit 64):
 *   unknown option '--nope'
 *   --top needs a count (0 = all)           (a missing or bad value: the option's `need`)
 *   --json takes no value                   (--flag=value)
 *   no FILE given                           (fewer operands than the command needs)
 *   unexpected argument 'b.etl'             (more operands than it takes)
 *   -o FILE is required                     (an option marked CLI_OPT_REQUIRED)
 * and the messages custom parsers and checks write themselves (--range END must be after START).
 */
#ifndef ETLKIT_CLI_OPTS_H
#define ETLKIT_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_opt_kind {
    CLI_OPT_END = 0,  /* ends a table */
    CLI_OPT_INCLUDE,  /* .sub: another table (a shared fragment), its options in this place */
    CLI_OPT_FLAG,     /* no value: stores .min into the int at .dst */
    CLI_OPT_UINT,     /* an unsigned decimal .min..max (hex/octal too with CLI_OPT_BASE0) into .dst (.size bytes) */
    CLI_OPT_DURATION, /* a time (1.5, 250ms, 10us, 42ns; seconds without a unit) of at least .min ns, into the int64_t at .dst */
    CLI_OPT_STRING,   /* the value itself into the const char * at .dst; CLI_OPT_NONEMPTY refuses "" */
    CLI_OPT_ENUM,     /* one of .words (NULL-terminated): .vals[i] into the int at .dst */
    CLI_OPT_RANGE,    /* START END: two times, END after START, into the cli_range at .dst */
    CLI_OPT_CUSTOM    /* .parse(opt, value) (value NULL when .arg is: a flag) */
} cli_opt_kind;

enum {
    CLI_OPT_REQUIRED = 1u << 0, /* the command refuses to run without it */
    CLI_OPT_BASE0 = 1u << 1,    /* CLI_OPT_UINT: 0x1f and 017 as strtoull's base 0 reads them */
    CLI_OPT_NONEMPTY = 1u << 2, /* CLI_OPT_STRING: "" is a bad value */
    CLI_OPT_ACTION = 1u << 3    /* once given, parsing stops: the command does it instead of running (export --schema) */
};

/* --range START END as given: ns from the trace start, and the text for messages. */
typedef struct cli_range {
    int set;
    int64_t v0, v1;
    const char *text[2];
} cli_range;

typedef struct cli_opt cli_opt;

/*
 * A custom parser or a check: 0 when the value is good; else nonzero, with the whole
 * error line in err (or err left empty: the usual "--name needs NEED").
 */
typedef int (*cli_opt_fn)(const cli_opt *o, const char *value, char *err, size_t cap);

struct cli_opt {
    cli_opt_kind kind;
    const char *name;          /* long name, without "--" */
    char short_name;           /* 'o' for -o, 0 for none */
    const char *arg;           /* the value as help shows it ("N", "START END"); NULL: a flag */
    const char *help;          /* one paragraph, wrapped at 79 columns; with '\n' in it, lines as written */
    const char *need;          /* what a value must be, for the error ("a count (0 = all)"); NULL: .arg */
    void *dst;                 /* where the value goes */
    size_t size;               /* CLI_OPT_UINT: sizeof *dst (1, 2, 4 or 8) */
    unsigned long long min, max; /* UINT bounds; DURATION: min; FLAG: the value stored */
    const char *const *words;  /* ENUM */
    const int *vals;           /* ENUM: the value of each word */
    cli_opt_fn parse;          /* CUSTOM */
    cli_opt_fn check;          /* optional, any kind: after the value is stored (value: as given) */
    void *ctx;                 /* for parse and check */
    int *seen;                 /* optional: set to 1 when the option is given */
    unsigned flags;            /* CLI_OPT_* */
    const cli_opt *sub;        /* INCLUDE */
};

/* Table entries (designated initializers keep the tables readable). */
#define CLI_FLAG(n, s, h, p, v) {.kind = CLI_OPT_FLAG, .name = n, .short_name = s, .help = h, .dst = p, .min = v}
#define CLI_UINT(n, a, h, need_, p, lo, hi) \
    {.kind = CLI_OPT_UINT, .name = n, .arg = a, .help = h, .need = need_, .dst = p, .size = sizeof *(p), .min = lo, .max = hi}
#define CLI_STRING(n, s, a, h, need_, p) \
    {.kind = CLI_OPT_STRING, .name = n, .short_name = s, .arg = a, .help = h, .need = need_, .dst = p, .flags = CLI_OPT_NONEMPTY}
#define CLI_INCLUDE(t) {.kind = CLI_OPT_INCLUDE, .sub = t}
#define CLI_END {.kind = CLI_OPT_END}

/* What the command is: its synopsis, what it does, what follows the options. */
typedef struct cli_cmd {
    const char *name;            /* "cpu" */
    const char *usage;           /* after "Usage: etlkit cpu ": "FILE [OPTIONS]"; '\n' starts another synopsis */
    const char *about;           /* the paragraph(s) before the options, lines as written */
    const char *operands[3];     /* the operands' names in order ("FILE"), for "no FILE given" */
    unsigned min_operands, max_operands;
    const char *epilogue;        /* after the options (notes, exit statuses); may be NULL */
} cli_cmd;

/* cli_opts_parse: the command line is good, run the command; or do the CLI_OPT_ACTION option met. */
#define CLI_OPTS_RUN (-1)
#define CLI_OPTS_ACTION (-2)

/*
 * Parses argv[1..argc) against the table t: values stored, operands into operands[]
 * (room for cmd->max_operands, the rest NULL). Returns CLI_OPTS_RUN, or the exit status
 * to return: EXIT_OK after printing --help, EXIT_USAGE after the one-line error; or
 * CLI_OPTS_ACTION when a CLI_OPT_ACTION option was met (what follows it is not read).
 */
int cli_opts_parse(const cli_cmd *cmd, const cli_opt *t, int argc, char **argv, const char **operands);
/* The command's --help from its table. */
void cli_opts_help(const cli_cmd *cmd, const cli_opt *t, FILE *f);
/* The entry named name in t (not in its includes), to adjust a shared fragment's help or seen; NULL if none. */
cli_opt *cli_opt_find(cli_opt *t, const char *name);

#endif
