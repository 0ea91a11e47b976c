# perfetto_samples.awk - reads `protoc --decode=perfetto.protos.Trace etw.proto` text of an
# `etlkit export --to perfetto` file and checks its sampled profile as trace_processor would
# import it: every PerfSample's callstack, every callstack's frames and every frame's mapping
# and function name were interned before (file order) on the samples' sequence, whose first
# packet clears the incremental state; prints "MODULE COUNT" per module of the samples' leaf
# frames (the function name "module+0xoffset" up to its last '+'), then "ERROR ..." lines.
function fail(m) { errors[++nerr] = m }
function top() { return depth ? stack[depth] : "" }
/\{$/ {
  name = $1; stack[++depth] = name
  if (name == "packet") { seq = 0; flags = -1 }
  if (name == "callstacks") { cs_iid = 0; cs_leaf = 0 }
  if (name == "frames") { fr_iid = 0; fr_fn = 0; fr_map = 0 }
  if (name == "perf_sample") { ps_cs = 0 }
  if (name == "function_names" || name == "mapping_paths") { is_iid = 0 }
  next
}
/^ *\}$/ {
  name = top(); depth--
  if (name == "callstacks") {
    if (!cs_iid) fail("a callstack without iid")
    leaf[cs_iid] = cs_leaf
    if (!cs_leaf) fail("callstack " cs_iid " without frames")
  } else if (name == "frames") {
    frame_fn[fr_iid] = fr_fn
    pending[++npending] = fr_iid; pending_map[npending] = fr_map
    if (!(fr_fn in fname)) fail("frame " fr_iid ": function name " fr_fn " not interned")
  } else if (name == "interned_data") {
    # protoc prints mappings (19) after frames (6): a packet's interned data is checked whole.
    for (i = 1; i <= npending; i++)
      if (!(pending_map[i] in mapping)) fail("frame " pending[i] ": mapping " pending_map[i] " not interned")
    npending = 0
  } else if (name == "perf_sample") {
    samples++
    if (seq != 2) fail("a perf_sample off sequence 2")
    if (!(ps_cs in leaf)) { fail("perf_sample: callstack " ps_cs " not interned before"); next }
    fn = fname[frame_fn[leaf[ps_cs]]]
    sub(/\+0x[0-9a-f]+$/, "", fn)
    bymod[fn]++
  } else if (name == "packet" && seq == 2) {
    if (!seen2) { seen2 = 1; if (flags != 3) fail("first packet of sequence 2: sequence_flags " flags ", not 3") }
    else if (flags != 2) fail("a packet of sequence 2 with sequence_flags " flags)
  }
  next
}
{
  key = $1; sub(/:$/, "", key); val = $2
  t = top()
  if (t == "packet" && key == "trusted_packet_sequence_id") seq = val
  else if (t == "packet" && key == "sequence_flags") flags = val
  else if (t == "callstacks" && key == "iid") cs_iid = val
  else if (t == "callstacks" && key == "frame_ids") {
    if (!(val in frame_fn)) fail("callstack " cs_iid ": frame " val " not interned")
    cs_leaf = val
  } else if (t == "frames" && key == "iid") fr_iid = val
  else if (t == "frames" && key == "function_name_id") fr_fn = val
  else if (t == "frames" && key == "mapping_id") fr_map = val
  else if (t == "mappings" && key == "iid") mapping[val] = 1
  else if (t == "function_names" && key == "iid") is_iid = val
  else if (t == "function_names" && key == "str") { s = $0; sub(/^ *str: "/, "", s); sub(/"$/, "", s); fname[is_iid] = s }
  else if (t == "perf_sample" && key == "callstack_iid") ps_cs = val
}
END {
  for (m in bymod) print m, bymod[m]
  for (i = 1; i <= nerr && i <= 20; i++) print "ERROR " errors[i]
  if (!samples) print "ERROR no perf_sample"
}
