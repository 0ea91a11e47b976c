-- fleet.sql - the README's fleet queries (section "Fleets") over a Parquet dataset DS written by
-- `etlkit export A.etl B.etl ... --to parquet -o DS`, run by tests/export/dataset.sh in DuckDB with DS
-- replaced by the dataset's path (and, for a CSV dataset, each read_parquet by the read_csv below).
-- Statements end with ";" at a line's end; "-- name:" names a query. The path holds the trace_id:
-- hive_types keeps it text (an ID "2024" would otherwise become a number). A CSV dataset reads as
--   read_csv('DS/slice/*/*.csv', hive_partitioning = true, hive_types = {'trace_id': VARCHAR},
--            quote = '"', escape = '"')   (RFC 4180's quoting: a '\' in a name is no escape)
CREATE VIEW slice AS SELECT * FROM read_parquet('DS/slice/*/*.parquet', hive_partitioning = true,
  hive_types = {'trace_id': VARCHAR});
CREATE VIEW thread AS SELECT * FROM read_parquet('DS/thread/*/*.parquet', hive_partitioning = true,
  hive_types = {'trace_id': VARCHAR});
CREATE VIEW process AS SELECT * FROM read_parquet('DS/process/*/*.parquet', hive_partitioning = true,
  hive_types = {'trace_id': VARCHAR});

-- name: cpu_by_process
-- CPU time by process per trace (= `etlkit cpu` of each trace, processes by PID).
SELECT s.trace_id, p.pid, p.name AS process, SUM(s.end_ns - s.start_ns) AS cpu_ns
FROM slice s
JOIN thread t ON t.trace_id = s.trace_id AND t.utid = s.utid
JOIN process p ON p.trace_id = t.trace_id AND p.upid = t.upid
GROUP BY ALL
ORDER BY s.trace_id, cpu_ns DESC, p.pid;

-- name: ready_p99
-- Ready latency per trace: from the ReadyThread to the switch-in, for each switch-in that had one.
SELECT trace_id, COUNT(*) AS readied, quantile_disc(start_ns - ready_time_ns, 0.5) AS p50_ns,
       quantile_disc(start_ns - ready_time_ns, 0.99) AS p99_ns, MAX(start_ns - ready_time_ns) AS max_ns
FROM slice
WHERE head = 0 AND ready_time_ns IS NOT NULL
GROUP BY trace_id
ORDER BY trace_id;

-- name: slower_than_median
-- The traces where a process (by image name) used more than 1.5 times its median CPU time across
-- the traces that run it.
WITH per AS (
  SELECT s.trace_id, p.name AS process, SUM(s.end_ns - s.start_ns) AS cpu_ns
  FROM slice s
  JOIN thread t ON t.trace_id = s.trace_id AND t.utid = s.utid
  JOIN process p ON p.trace_id = t.trace_id AND p.upid = t.upid
  GROUP BY ALL),
med AS (SELECT process, median(cpu_ns) AS median_ns, COUNT(*) AS traces FROM per GROUP BY process)
SELECT per.trace_id, per.process, per.cpu_ns, med.median_ns, round(per.cpu_ns / med.median_ns, 2) AS ratio
FROM per JOIN med USING (process)
WHERE med.traces >= 3 AND per.cpu_ns > 1.5 * med.median_ns
ORDER BY ratio DESC, per.trace_id, per.process;
