/* opts.c - see opts.h: the option tables' parser, their --help and their one-line errors. */
#include "opts.h"

#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "out/num.h"

/* A table with its includes in place: the options in the order help lists them. */
#define MAX_OPTS 96

typedef struct flat {
    const cli_opt *o[MAX_OPTS];
    size_t n;
} flat;

static void flatten(flat *f, const cli_opt *t)
{
    for (; t && t->kind != CLI_OPT_END; t++) {
        if (t->kind == CLI_OPT_INCLUDE) flatten(f, t->sub);
        else if (f->n < MAX_OPTS) f->o[f->n++] = t;
    }
}

cli_opt *cli_opt_find(cli_opt *t, const char *name)
{
    for (; t->kind != CLI_OPT_END; t++)
        if (t->name && strcmp(t->name, name) == 0) return t;
    return NULL;
}

/* ---- help ------------------------------------------------------------------------------------- */

/* The options' text starts here; lines end by this column. */
#define HELP_COL 27
#define HELP_WIDTH 79

static void put_indent(FILE *f, int n) { fprintf(f, "%*s", n, ""); }

/* One option's help: lines as written when it has '\n', else one paragraph wrapped to the width. */
static void put_help(FILE *f, const char *h)
{
    if (strchr(h, '\n')) {
        for (const char *p = h; *p;) {
            size_t len = strcspn(p, "\n");
            fprintf(f, "%.*s\n", (int)len, p);
            p += len;
            if (*p == '\n' && *++p) put_indent(f, HELP_COL);
        }
        return;
    }
    const size_t room = HELP_WIDTH - HELP_COL;
    for (const char *p = h; *p;) {
        size_t len = strlen(p);
        if (len > room) {
            len = room;
            while (len > 0 && p[len] != ' ') len--;
            if (!len) len = strcspn(p, " "); /* one word longer than the line: whole */
        }
        fprintf(f, "%.*s\n", (int)len, p);
        p += len;
        while (*p == ' ') p++;
        if (*p) put_indent(f, HELP_COL);
    }
}

static void put_option(FILE *f, const char *left, const char *help)
{
    int n = fprintf(f, "  %s", left);
    if (n >= HELP_COL) {
        fputc('\n', f);
        n = 0;
    }
    put_indent(f, HELP_COL - n);
    put_help(f, help);
}

/* "-o, --output FILE", "--range START END", "-q, --quiet". */
static void option_left(const cli_opt *o, char *out, size_t cap)
{
    char s[8] = "";
    if (o->short_name) snprintf(s, sizeof s, "-%c, ", o->short_name);
    snprintf(out, cap, "%s--%s%s%s", s, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void cli_opts_help(const cli_cmd *cmd, const cli_opt *t, FILE *f)
{
    const char *u = cmd->usage;
    const char *lead = "Usage:";
    while (*u) {
        size_t len = strcspn(u, "\n");
        fprintf(f, "%s %s %s %.*s\n", lead, prog, cmd->name, (int)len, u);
        lead = "      ";
        u += len;
        if (*u) u++;
    }
    fprintf(f, "\n%s\n", cmd->about);
    flat fl = {{0}, 0};
    flatten(&fl, t);
    for (size_t i = 0; i < fl.n; i++) {
        char left[96];
        option_left(fl.o[i], left, sizeof left);
        put_option(f, left, fl.o[i]->help);
    }
    put_option(f, "-h, --help", "this help");
    if (cmd->epilogue) fprintf(f, "\n%s", cmd->epilogue);
}

/* ---- parsing ---------------------------------------------------------------------------------- */

/* The value as a count: digits only (no sign, no space), base 10 or strtoull's base 0. */
static int parse_uint(const cli_opt *o, const char *v, unsigned long long *out)
{
    if (!v || *v < '0' || *v > '9') return -1;
    char *e;
    unsigned long long n = strtoull(v, &e, o->flags & CLI_OPT_BASE0 ? 0 : 10);
    if (*e || n < o->min || n > o->max) return -1;
    *out = n;
    return 0;
}

static void store_uint(const cli_opt *o, unsigned long long n)
{
    switch (o->size) {
    case 1: *(uint8_t *)o->dst = (uint8_t)n; break;
    case 2: *(uint16_t *)o->dst = (uint16_t)n; break;
    case 4: *(uint32_t *)o->dst = (uint32_t)n; break;
    default: *(uint64_t *)o->dst = (uint64_t)n; break;
    }
}

/* A time with a part of a nanosecond (0.5ns): its own line, not the usual "needs" (times are whole ns). */
static int sub_ns(const char *spelled, const char *v, char *err, size_t cap)
{
    int64_t ns;
    if (num_parse_dur(v, &ns) != NUM_DUR_SUB_NS) return 0;
    snprintf(err, cap, "%s: '%s' has a part of a nanosecond: times are whole nanoseconds", spelled, v);
    return -1;
}

/*
 * Stores the value(s) v[0..] of o as its kind says. 0: done; else nonzero, with err
 * holding the line or empty for the option's usual "needs".
 */
static int store(const cli_opt *o, const char *spelled, const char *const *v, char *err, size_t cap)
{
    unsigned long long n;
    int64_t ns;
    switch (o->kind) {
    case CLI_OPT_FLAG:
        *(int *)o->dst = (int)o->min;
        return 0;
    case CLI_OPT_UINT:
        if (parse_uint(o, v[0], &n)) return -1;
        store_uint(o, n);
        return 0;
    case CLI_OPT_DURATION:
        if (sub_ns(spelled, v[0], err, cap)) return -1;
        if (num_parse_dur(v[0], &ns) || ns < (int64_t)o->min) return -1;
        *(int64_t *)o->dst = ns;
        return 0;
    case CLI_OPT_STRING:
        if ((o->flags & CLI_OPT_NONEMPTY) && !*v[0]) return -1;
        *(const char **)o->dst = v[0];
        return 0;
    case CLI_OPT_ENUM:
        for (size_t k = 0; o->words[k]; k++)
            if (strcmp(v[0], o->words[k]) == 0) {
                *(int *)o->dst = o->vals ? o->vals[k] : (int)k;
                return 0;
            }
        return -1;
    case CLI_OPT_RANGE: {
        cli_range *r = o->dst;
        int64_t a, b;
        if (sub_ns(spelled, v[0], err, cap) || sub_ns(spelled, v[1], err, cap)) return -1;
        if (num_parse_dur(v[0], &a) || num_parse_dur(v[1], &b)) return -1;
        if (b <= a) {
            snprintf(err, cap, "%s END must be after START", spelled);
            return -1;
        }
        *r = (cli_range){1, a, b, {v[0], v[1]}};
        return 0;
    }
    case CLI_OPT_CUSTOM:
        return o->parse(o, v[0], err, cap);
    default:
        return -1;
    }
}

static const cli_opt *find(const flat *f, const char *a, size_t *len)
{
    if (a[1] != '-') { /* -o: one letter; -oFILE: its value attached (an option that takes one) */
        *len = a[2] ? strlen(a) : 2;
        for (size_t i = 0; i < f->n; i++)
            if (f->o[i]->short_name == a[1] && (!a[2] || (f->o[i]->arg && f->o[i]->kind != CLI_OPT_RANGE))) {
                *len = 2;
                return f->o[i];
            }
        return NULL;
    }
    *len = strcspn(a, "=");
    for (size_t i = 0; i < f->n; i++)
        if (strlen(f->o[i]->name) == *len - 2 && strncmp(f->o[i]->name, a + 2, *len - 2) == 0) return f->o[i];
    return NULL;
}

static int usage(const cli_cmd *cmd, const char *msg) { return cli_usage_error(cmd->name, "%s", msg); }

int cli_opts_parse(const cli_cmd *cmd, const cli_opt *t, int argc, char **argv, const char **operands)
{
    flat f = {{0}, 0};
    flatten(&f, t);
    unsigned char given[MAX_OPTS] = {0};
    unsigned nops = 0;
    for (unsigned k = 0; k < cmd->max_operands; k++) operands[k] = NULL;
    char err[320];
    int only_operands = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_operands && strcmp(a, "--") == 0) {
            only_operands = 1;
            continue;
        }
        if (only_operands || a[0] != '-' || !a[1]) {
            if (nops == cmd->max_operands) {
                snprintf(err, sizeof err, "unexpected argument '%s'", a);
                return usage(cmd, err);
            }
            operands[nops++] = a;
            continue;
        }
        if (cli_is_help(a)) {
            cli_opts_help(cmd, t, stdout);
            return cli_stdout_done(cmd->name); /* a help not written: exit 1 and why, as every output */
        }
        size_t len;
        const cli_opt *o = find(&f, a, &len);
        char spelled[80];
        snprintf(spelled, sizeof spelled, "%.*s", (int)len, a);
        if (!o) {
            snprintf(err, sizeof err, "unknown option '%s'", spelled);
            return usage(cmd, err);
        }
        /* --name=value, or -oVALUE (find took the letter alone) */
        const char *eq = a[1] != '-' && a[len] ? a + len : a[len] == '=' ? a + len + 1 : NULL;
        const char *v[2] = {NULL, NULL};
        unsigned nargs = !o->arg ? 0 : o->kind == CLI_OPT_RANGE ? 2 : 1;
        if (!nargs && eq) {
            snprintf(err, sizeof err, "%s takes no value", spelled);
            return usage(cmd, err);
        }
        for (unsigned k = 0; k < nargs; k++) {
            if (k == 0 && eq) v[k] = eq;
            else if (i + 1 < argc) v[k] = argv[++i];
        }
        err[0] = 0;
        int bad = nargs && !v[nargs - 1];
        if (!bad) bad = store(o, spelled, v, err, sizeof err);
        if (!bad && o->check) bad = o->check(o, v[0], err, sizeof err);
        if (bad) {
            if (!err[0]) snprintf(err, sizeof err, "%s needs %s", spelled, o->need ? o->need : o->arg);
            return usage(cmd, err);
        }
        if (o->seen) *o->seen = 1;
        if (o->flags & CLI_OPT_ACTION) return CLI_OPTS_ACTION;
        for (size_t k = 0; k < f.n; k++)
            if (f.o[k] == o) given[k] = 1;
    }
    if (nops < cmd->min_operands) {
        snprintf(err, sizeof err, "no %s given", cmd->operands[nops]);
        return usage(cmd, err);
    }
    for (size_t k = 0; k < f.n; k++) {
        if (!(f.o[k]->flags & CLI_OPT_REQUIRED) || given[k]) continue;
        char left[96];
        if (f.o[k]->short_name) snprintf(left, sizeof left, "-%c %s", f.o[k]->short_name, f.o[k]->arg);
        else option_left(f.o[k], left, sizeof left);
        snprintf(err, sizeof err, "%s is required", left);
        return usage(cmd, err);
    }
    return CLI_OPTS_RUN;
}
