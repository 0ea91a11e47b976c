/*
 * own_names OUTDIR - a program with functions of its own named as the library's internal ones (csv_field,
 * json_str, tbl_init, synth_write), linked with the static libetlkit.a: both must keep their own. It writes
 * the CSV export's header rows into OUTDIR through the library (which formats each cell with its own
 * csv_field) and prints what the program's functions return. An archive whose internal names were global
 * had the library call this csv_field: every header cell "[mine:...]".
 */
#include <etlkit/etlkit.h>
#include <etlkit/export.h>
#include <stdio.h>

void csv_field(FILE *f, const char *s);
void csv_field(FILE *f, const char *s) { fprintf(f, "[mine:%s]", s); }
/* Other signatures than the library's functions of these names. */
int json_str(int x);
int json_str(int x) { return x + 1; }
const char *tbl_init(void);
const char *tbl_init(void) { return "mine"; }
double synth_write(double x);
double synth_write(double x) { return x * 2; }

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: own_names OUTDIR\n", stderr);
        return 64;
    }
    etl_csv_sink_options o = {.sz = sizeof o, .trace_id = "t1"};
    etl_csv_sink *c;
    etl_diag d;
    if (etl_csv_sink_check(argv[1], &o, &c, &d) != ETL_OK || etl_csv_sink_create(c, &d) != ETL_OK) {
        fprintf(stderr, "own_names: %s\n", d.msg);
        return 1;
    }
    if (etl_csv_sink_close(c, true) != ETL_OK) {
        fputs("own_names: close failed\n", stderr);
        return 1;
    }
    csv_field(stdout, "x");
    printf(" %d %s %g\n", json_str(1), tbl_init(), synth_write(1.5));
    return 0;
}
