/*
 * cpu_usage.c - CPU time per process, as `etlkit cpu` counts it, on the library's
 * scheduler model and usage API: the time-ordered source feeds the model, whose
 * rows (one per interval a thread ran) feed the aggregation.
 *   cc cpu_usage.c $(pkg-config --cflags --libs etlkit) -o cpu_usage
 *   ./cpu_usage trace.etl      # "PID NAME CPU_NS" per process, most CPU first
 */
#include <stdio.h>
#include <string.h>
#include <etlkit/etlkit.h>
#include <etlkit/sched.h>
#include <etlkit/usage.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cpu_usage FILE.etl\n");
        return 64;
    }
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open(argv[1], NULL, &r, &d) != ETL_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], d.msg);
        return 2;
    }
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1};
    etl_usage_options uo = {.sz = sizeof uo, .no_latency = true};
    etl_usage u;
    memset(&u, 0, sizeof u); /* etl_usage_free is safe on it from here */
    etl_sched_source *src = NULL;
    etl_sched *model = NULL;
    int rc = 1;
    /* The model hands each row to the usage, which reads the model's threads: open both, then tie them. */
    etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_usage_add, .ctx = &u};
    if (etl_sched_source_open(r, &so, &src) != ETL_OK ||
        etl_sched_open(etl_reader_clock(r), etl_reader_cpu_count(r), &mo, &model) != ETL_OK ||
        etl_usage_init(&u, model, &uo) != ETL_OK) {
        fprintf(stderr, "%s: out of memory\n", argv[1]);
        goto out;
    }
    const etl_sched_event *ev;
    while (etl_sched_source_next_ref(src, &ev) == ETL_OK) etl_sched_push(model, ev);
    uint64_t end_ts = etl_sched_end_ts(r, etl_sched_source_stats_get(src)->last_ts);
    if (etl_sched_finish(model, end_ts) != ETL_OK ||
        etl_usage_finish(&u, etl_clock_ns(etl_reader_clock(r), end_ts)) != ETL_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], etl_usage_diag(&u)->msg[0] ? etl_usage_diag(&u)->msg : "out of memory");
        goto out;
    }
    for (size_t i = 0; i < u.nprocesses; i++) {
        const etl_usage_process *p = &u.processes[i];
        if (p->process == ETL_SCHED_NONE) continue; /* threads of no known process */
        const etl_sched_process *sp = etl_sched_process_at(model, p->process);
        printf("%u %s %lld\n", sp->pid, etl_sched_names(model) + sp->name, (long long)p->cpu_ns);
    }
    rc = 0;
out:
    etl_usage_free(&u);
    if (model) etl_sched_close(model);
    if (src) etl_sched_source_close(src);
    etl_reader_close(r);
    return rc;
}
