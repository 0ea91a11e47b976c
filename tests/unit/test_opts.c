/*
 * test_opts.c - the CLI's option tables (cli/opts.c): --opt value and --opt=value, short
 * options, `--`, operands, every kind (flag, count, time, text, words, START END, custom),
 * repeated options, required ones, an action, and the one-line errors word for word.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "common.h"
#include "opts.h"

/* One command line's result: the status, its variables and what it printed. */
typedef struct res {
    int rc;
    char err[1024];
    char out[4096];
} res;

typedef struct vars {
    int json, quiet, seen_top, action;
    unsigned top;
    long long thread;
    int64_t interval;
    const char *out, *title;
    int order;
    cli_range range;
    char collected[256];
    const char *ops[2];
} vars;

static int collect(const cli_opt *o, const char *v, char *err, size_t cap)
{
    char *c = o->dst;
    if (strcmp(v, "bad") == 0) return snprintf(err, cap, "--gate '%s': not an expression", v);
    if (strcmp(v, "quiet") == 0) return -1; /* no text: the usual "needs" */
    strncat(c, v, 255 - strlen(c));
    strncat(c, ";", 255 - strlen(c));
    return 0;
}

static const char *const orders[] = {"time", "file", NULL};
static const int order_vals[] = {10, 20};

static const cli_cmd tcmd = {"t", "FILE [OPTIONS]", "A command for the test.\n", {"FILE", "MORE"}, 1, 2,
                             "Exit status: 0 ok.\n"};

/* Reads what fd 1 or 2 got into a tmpfile back into buf. */
static void drain(FILE *f, char *buf, size_t cap)
{
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
}

static res run(vars *v, const char *line)
{
    memset(v, 0, sizeof *v);
    v->thread = -1;
    const cli_opt table[] = {
        CLI_FLAG("json", 0, "one JSON object", &v->json, 1),
        CLI_FLAG("quiet", 'q', "no warnings", &v->quiet, 1),
        {.kind = CLI_OPT_UINT, .name = "top", .arg = "N", .help = "the N biggest", .need = "a count (0 = all)",
         .dst = &v->top, .size = sizeof v->top, .max = 1000, .seen = &v->seen_top},
        {.kind = CLI_OPT_UINT, .name = "thread", .arg = "TID", .help = "a thread", .dst = &v->thread,
         .size = sizeof v->thread, .max = UINT32_MAX, .flags = CLI_OPT_BASE0},
        {.kind = CLI_OPT_DURATION, .name = "interval", .arg = "T", .help = "a length", .need = "a positive time",
         .dst = &v->interval, .min = 1},
        {.kind = CLI_OPT_STRING, .name = "output", .short_name = 'o', .arg = "FILE", .help = "where",
         .need = "a file name", .dst = &v->out, .flags = CLI_OPT_REQUIRED | CLI_OPT_NONEMPTY},
        {.kind = CLI_OPT_STRING, .name = "title", .arg = "TEXT", .help = "a title", .dst = &v->title},
        {.kind = CLI_OPT_ENUM, .name = "order", .arg = "time|file", .help = "the order", .need = "time or file",
         .dst = &v->order, .words = orders, .vals = order_vals},
        {.kind = CLI_OPT_RANGE, .name = "range", .arg = "START END", .help = "a window", .need = "START and END",
         .dst = &v->range},
        {.kind = CLI_OPT_CUSTOM, .name = "gate", .arg = "EXPR", .help = "repeatable", .need = "an expression",
         .dst = v->collected, .parse = collect},
        {.kind = CLI_OPT_FLAG, .name = "schema", .help = "print and exit", .dst = &v->action, .min = 1,
         .flags = CLI_OPT_ACTION},
        CLI_END};
    static char buf[512]; /* the values point into it: it outlives the call */
    char *argv[32];
    snprintf(buf, sizeof buf, "t %s", line);
    int argc = 0;
    for (char *p = strtok(buf, " "); p && argc < 31; p = strtok(NULL, " ")) argv[argc++] = strcmp(p, "''") ? p : "";
    argv[argc] = NULL;
    FILE *e = tmpfile(), *o = tmpfile();
    assert_non_null(e);
    assert_non_null(o);
    fflush(stdout);
    fflush(stderr);
    int se = dup(2), so = dup(1);
    dup2(fileno(e), 2);
    dup2(fileno(o), 1);
    res r;
    r.rc = cli_opts_parse(&tcmd, table, argc, argv, v->ops);
    fflush(stdout);
    fflush(stderr);
    dup2(se, 2);
    dup2(so, 1);
    close(se);
    close(so);
    drain(e, r.err, sizeof r.err);
    drain(o, r.out, sizeof r.out);
    fclose(e);
    fclose(o);
    return r;
}

/* The error line the command printed, without the pointer to --help (checked once, below). */
static void assert_error(const res *r, const char *line)
{
    assert_int_equal(r->rc, EXIT_USAGE);
    char want[512];
    snprintf(want, sizeof want, "etlkit t: %s\nTry 'etlkit t --help'.\n", line);
    assert_string_equal(r->err, want);
}

static void test_values(void **state)
{
    (void)state;
    vars v;
    res r = run(&v, "--top 5 -o out.html --title=A=B f.etl --json");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_string_equal(r.err, "");
    assert_int_equal(v.top, 5);
    assert_true(v.seen_top);
    assert_string_equal(v.out, "out.html");
    assert_string_equal(v.title, "A=B"); /* only the first '=' splits */
    assert_true(v.json);
    assert_string_equal(v.ops[0], "f.etl");
    assert_null(v.ops[1]);
    /* --opt=value is --opt value, for every kind that takes one. */
    r = run(&v, "--top=7 --output=x --thread=0x10 --interval=250ms --order=file --gate=a f");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_int_equal(v.top, 7);
    assert_string_equal(v.out, "x");
    assert_int_equal(v.thread, 16);
    assert_int_equal(v.interval, 250000000);
    assert_int_equal(v.order, 20);
    assert_string_equal(v.collected, "a;");
    /* Short options: a flag and a value. */
    r = run(&v, "-q -o y f");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_true(v.quiet);
    assert_string_equal(v.out, "y");
    /* A value is the next argument whatever it looks like; - is an operand. */
    r = run(&v, "-o --json -");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_string_equal(v.out, "--json");
    assert_false(v.json);
    assert_string_equal(v.ops[0], "-");
}

static void test_range(void **state)
{
    (void)state;
    vars v;
    res r = run(&v, "-o x --range 1.5 2500ms f");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_true(v.range.set);
    assert_int_equal(v.range.v0, 1500000000);
    assert_int_equal(v.range.v1, 2500000000);
    assert_string_equal(v.range.text[0], "1.5");
    assert_string_equal(v.range.text[1], "2500ms");
    r = run(&v, "-o x --range=-1 5 f"); /* the first value attached, the second the next argument */
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_int_equal(v.range.v0, -1000000000);
    assert_int_equal(v.range.v1, 5000000000);
    r = run(&v, "-o x f --range 2 1");
    assert_error(&r, "--range END must be after START");
    r = run(&v, "-o x f --range 1");
    assert_error(&r, "--range needs START and END");
    r = run(&v, "-o x f --range 1 2parsec");
    assert_error(&r, "--range needs START and END");
}

static void test_operands(void **state)
{
    (void)state;
    vars v;
    /* `--` ends the options: what follows is an operand, even --json. */
    res r = run(&v, "-o x -- --json");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_false(v.json);
    assert_string_equal(v.ops[0], "--json");
    r = run(&v, "-o x a b");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_string_equal(v.ops[1], "b");
    r = run(&v, "-ox.html a"); /* a short option's value attached, as getopt reads it */
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_string_equal(v.out, "x.html");
    assert_string_equal(v.ops[0], "a");
    r = run(&v, "-o x a b c");
    assert_error(&r, "unexpected argument 'c'");
    r = run(&v, "-o x");
    assert_error(&r, "no FILE given");
    r = run(&v, "f");
    assert_error(&r, "-o FILE is required");
}

static void test_errors(void **state)
{
    (void)state;
    vars v;
    res r = run(&v, "--nope f");
    assert_error(&r, "unknown option '--nope'");
    r = run(&v, "--nope=3 f");
    assert_error(&r, "unknown option '--nope'");
    r = run(&v, "-x f");
    assert_error(&r, "unknown option '-x'");
    r = run(&v, "-qo f");
    assert_error(&r, "unknown option '-qo'");
    r = run(&v, "f --top");
    assert_error(&r, "--top needs a count (0 = all)"); /* missing */
    r = run(&v, "f --top x");
    assert_error(&r, "--top needs a count (0 = all)"); /* bad: the same line */
    r = run(&v, "f --top=1001");
    assert_error(&r, "--top needs a count (0 = all)");
    r = run(&v, "f --top -1");
    assert_error(&r, "--top needs a count (0 = all)");
    r = run(&v, "f --thread");
    assert_error(&r, "--thread needs TID"); /* no need text: the argument's name */
    r = run(&v, "f --interval 0");
    assert_error(&r, "--interval needs a positive time");
    r = run(&v, "f -o");
    assert_error(&r, "-o needs a file name"); /* as the user spelled it */
    r = run(&v, "f -o ''");
    assert_error(&r, "-o needs a file name");
    r = run(&v, "f --order sideways");
    assert_error(&r, "--order needs time or file");
    r = run(&v, "f --json=1");
    assert_error(&r, "--json takes no value");
    r = run(&v, "f --gate bad");
    assert_error(&r, "--gate 'bad': not an expression"); /* a custom parser's own line */
    r = run(&v, "f --gate quiet");
    assert_error(&r, "--gate needs an expression");
}

static void test_repeated(void **state)
{
    (void)state;
    vars v;
    res r = run(&v, "-o a -o b --top 1 --top=2 --gate x --gate=y f");
    assert_int_equal(r.rc, CLI_OPTS_RUN);
    assert_string_equal(v.out, "b"); /* the last value counts */
    assert_int_equal(v.top, 2);
    assert_string_equal(v.collected, "x;y;"); /* a custom parser sees each */
}

static void test_help_and_action(void **state)
{
    (void)state;
    vars v;
    /* --help wins wherever it is, before the checks of what follows it. */
    res r = run(&v, "--top 3 --help --nope");
    assert_int_equal(r.rc, EXIT_OK);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "Usage: etlkit t FILE [OPTIONS]\n\nA command for the test.\n\n"));
    assert_non_null(strstr(r.out, "\n  --top N                  the N biggest\n"));
    assert_non_null(strstr(r.out, "\n  -o, --output FILE        where\n"));
    assert_non_null(strstr(r.out, "\n  --range START END        a window\n"));
    assert_non_null(strstr(r.out, "\n  -h, --help               this help\n\nExit status: 0 ok.\n"));
    r = run(&v, "-h");
    assert_int_equal(r.rc, EXIT_OK);
    /* An action stops the parse: no operand or required option is asked for. */
    r = run(&v, "--schema --nope");
    assert_int_equal(r.rc, CLI_OPTS_ACTION);
    assert_true(v.action);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),          cmocka_unit_test(test_range),
        cmocka_unit_test(test_operands),        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_repeated),        cmocka_unit_test(test_help_and_action),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
