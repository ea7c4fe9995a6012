#!/usr/bin/env python3
"""Checks a Chrome/Perfetto trace against the Trace Event Format rules the
profiler promises (docs/Profiler.md). The test suite runs it on every trace
the tests produce; `trace_validator.py FILE` checks one file and prints the
problems, one per line.

What it checks:
- the file is a JSON object with `traceEvents` and `otherData` (base time,
  devices with their clock sync and skew);
- every event has a known phase, a name, integer pid and tid, a timestamp
  (all but metadata), `dur >= 0` on ranges, `s` on instants;
- every pid has a `process_name` and every thread with events a
  `thread_name` metadata event;
- ranges nest properly per thread (no partial overlaps: viewers drop them);
- every flow start `s` has exactly one finish `f` with the same id and vice
  versa, ids unique; `s` lies inside a range of its thread; `f` has
  `bp: "e"` and lies inside a kernel range on a GPU track;
- a kernel starts no earlier than its launch minus the skew the trace
  reports for its device;
- counters are never negative;
- CPU and GPU pids and tids are distinct.
"""
import json
import sys
from collections import defaultdict

PHASES = {"X", "i", "C", "s", "f", "M"}
META = {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}


def ns(value):
    """A trace time (microseconds) as integer nanoseconds."""
    return round(float(value) * 1000)


def validate(trace):
    """Returns a list of problems (empty when the trace is valid)."""
    errors = []
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["not a JSON object with a traceEvents list"]
    other = trace.get("otherData")
    if not isinstance(other, dict) or "base_time_ns" not in other:
        errors.append("otherData.base_time_ns (the base of every ts) is missing")
        other = {}
    skew = {}
    for d in other.get("devices", []):
        if "pid" not in d or "max_launch_skew_us" not in d or "sync" not in d:
            errors.append(f"device entry {d} lacks pid, sync or max_launch_skew_us")
            continue
        skew[d["pid"]] = ns(d["max_launch_skew_us"])
        if ns(d["sync"].get("error_bound_us", -1)) < 0:
            errors.append(f"device {d.get('device')}: no clock-sync error bound")

    named_pids, named_threads = set(), set()
    ranges = defaultdict(list)  # (pid, tid) -> [(begin, end, event)]
    starts, finishes = {}, {}
    used_pids, used_threads = set(), set()
    cpu_pids, gpu_pids, cpu_tids, gpu_tids = set(), set(), set(), set()
    for i, e in enumerate(trace["traceEvents"]):
        where = f"event #{i} ({e.get('ph')} {e.get('name')!r})"
        ph = e.get("ph")
        if ph not in PHASES:
            errors.append(f"{where}: unknown phase")
            continue
        if not isinstance(e.get("name"), str):
            errors.append(f"{where}: no name")
        pid, tid = e.get("pid"), e.get("tid")
        if not isinstance(pid, int) or not isinstance(tid, int):
            errors.append(f"{where}: pid and tid must be integers")
            continue
        if ph == "M":
            if e["name"] not in META:
                errors.append(f"{where}: unknown metadata event")
            if e["name"] == "process_name":
                named_pids.add(pid)
            if e["name"] == "thread_name":
                named_threads.add((pid, tid))
            continue
        if not isinstance(e.get("ts"), (int, float)):
            errors.append(f"{where}: no timestamp")
            continue
        ts = ns(e["ts"])
        used_pids.add(pid)
        if ph != "C":
            used_threads.add((pid, tid))
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                errors.append(f"{where}: a range needs dur >= 0")
                continue
            ranges[(pid, tid)].append((ts, ts + ns(e["dur"]), e))
            if e.get("cat") == "kernel":
                gpu_pids.add(pid)
                gpu_tids.add(tid)
            else:
                cpu_pids.add(pid)
                cpu_tids.add(tid)
        elif ph == "i":
            if e.get("s") not in ("t", "p", "g"):
                errors.append(f"{where}: an instant needs scope s = t, p or g")
        elif ph == "C":
            for k, v in (e.get("args") or {}).items():
                if not isinstance(v, (int, float)) or v < 0:
                    errors.append(f"{where}: counter {k} = {v} is negative or not a number")
        elif ph in ("s", "f"):
            fid = e.get("id")
            if fid is None:
                errors.append(f"{where}: a flow event needs an id")
                continue
            table = starts if ph == "s" else finishes
            if fid in table:
                errors.append(f"{where}: flow id {fid} used by two '{ph}' events")
            table[fid] = (ts, e)
            if ph == "f" and e.get("bp") != "e":
                errors.append(f"{where}: a flow finish must bind to its enclosing slice (bp: e)")

    for pid in sorted(used_pids - named_pids):
        errors.append(f"pid {pid} has events but no process_name")
    for pid, tid in sorted(used_threads - named_threads):
        errors.append(f"thread {pid}/{tid} has events but no thread_name")
    if cpu_pids & gpu_pids:
        errors.append(f"pids {sorted(cpu_pids & gpu_pids)} hold both CPU ranges and kernels")
    if cpu_tids & gpu_tids:
        errors.append(f"tids {sorted(cpu_tids & gpu_tids)} hold both CPU ranges and kernels")

    # Proper nesting per thread: sorted by start (longest first on ties),
    # each range must end inside every range still open around it.
    for (pid, tid), rs in ranges.items():
        stack = []
        for begin, end, e in sorted(rs, key=lambda r: (r[0], -r[1])):
            while stack and stack[-1][1] <= begin:
                stack.pop()
            if stack and end > stack[-1][1]:
                errors.append(f"ranges {stack[-1][2]['name']!r} and {e['name']!r} on thread "
                              f"{pid}/{tid} overlap partially")
            stack.append((begin, end, e))

    def enclosing(pid, tid, ts, kernel):
        for begin, end, e in ranges.get((pid, tid), []):
            if begin <= ts <= end and (not kernel or e.get("cat") == "kernel"):
                return e, begin
        return None, None

    for fid in sorted(set(starts) | set(finishes), key=str):
        if fid not in finishes:
            errors.append(f"flow {fid}: a start without a finish")
            continue
        if fid not in starts:
            errors.append(f"flow {fid}: a finish without a start")
            continue
        (sts, s), (fts, f) = starts[fid], finishes[fid]
        if enclosing(s["pid"], s["tid"], sts, kernel=False)[0] is None:
            errors.append(f"flow {fid}: its start lies in no range of thread {s['pid']}/{s['tid']}")
        kernel, kbegin = enclosing(f["pid"], f["tid"], fts, kernel=True)
        if kernel is None:
            errors.append(f"flow {fid}: its finish lies in no kernel range")
        elif f["pid"] not in gpu_pids:
            errors.append(f"flow {fid}: its finish is not on a GPU track")
        elif kbegin < sts - skew.get(f["pid"], 0):
            errors.append(f"flow {fid}: kernel {kernel['name']!r} starts "
                          f"{(sts - kbegin) / 1000:.3f} us before its launch, more than the "
                          f"reported skew")
    return errors


def validate_file(path):
    with open(path) as f:
        try:
            trace = json.load(f)
        except json.JSONDecodeError as e:
            return [f"{path}: not JSON: {e}"]
    return validate(trace)


if __name__ == "__main__":
    problems = [p for path in sys.argv[1:] for p in validate_file(path)]
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)
