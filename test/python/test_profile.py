"""The profiler through trace-run: what the trace and the summary say, the
error paths, the validator itself, and the two-device timeline built from
recorded event times (the unit test's trace). Every other test's run is
profiled and validated too (traceir_testing.run_graph).
"""
import json
import os
import re
import subprocess
import tempfile

import pytest
import torch
from safetensors.torch import save_file

from test_graphs import transformer_layer_graph
from trace_validator import validate
from traceir_testing import BIN, DEVICE, RunError, check_trace, op_graph, run_graph

CHAIN = """trace.graph @chain(%x: tensor<4x8xf32> {trace.input = "x"}) -> tensor<4x8xf32> {
  %0 = pyop "mul"(%x, 2.0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyop "add"(%0, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyop "softmax"(%1, -1, None) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = pyop "add"(%2, 1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  ret %3 : tensor<4x8xf32>
}
"""


def trace_run(text, tensors, *flags, device=None, free=True):
    """Runs trace-run in a temporary directory; returns (process, dir
    listing, the trace or None)."""
    d = tempfile.mkdtemp()
    path = os.path.join(d, "g.mlir")
    with open(path, "w") as f:
        f.write(text)
    if free:
        freed = os.path.join(d, "g.freed.mlir")
        subprocess.run([os.path.join(BIN, "trace-opt"), path, "--free-dead-tensors", "-o", freed],
                       check=True)
        path = freed
    inputs = os.path.join(d, "in.safetensors")
    save_file(tensors, inputs)
    flags = [f.replace("@DIR", d) for f in flags]
    proc = subprocess.run([os.path.join(BIN, "trace-run"), path, "--inputs", inputs,
                           "--device", device or DEVICE, "--outputs",
                           os.path.join(d, "out.safetensors"), *flags],
                          capture_output=True, text=True)
    trace = None
    if os.path.exists(os.path.join(d, "trace.json")):
        with open(os.path.join(d, "trace.json")) as f:
            trace = json.load(f)
    return proc, sorted(os.listdir(d)), trace


def test_trace_names_every_op_with_its_scalars_and_location():
    x = torch.randn(4, 8)
    proc, _, trace = trace_run(CHAIN, {"x": x}, "--profile", "@DIR/trace.json",
                               "--memory-report=json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    ops = check_trace(trace, report)
    assert [e["name"] for e in ops] == ["mul", "add", "softmax", "add"]
    assert ops[0]["args"]["scalars"] == "2.0"
    assert ops[2]["args"]["scalars"] == "-1, None"
    assert ops[1]["args"]["operands"] == "%0, %x"
    assert re.fullmatch(r".*g\.freed\.mlir:\d+:\d+", ops[2]["args"]["location"])
    # One thread, named; ops nest in the run's range; the run is on it.
    runs = [e for e in trace["traceEvents"] if e.get("cat") == "run"]
    assert len(runs) == 1 and runs[0]["name"] == "run @chain"
    assert {e["tid"] for e in ops} == {runs[0]["tid"]}
    md = trace["otherData"]
    assert md["runs"] == 1 and md["base_time_ns"] > 0
    # Timestamps: microseconds with sub-microsecond digits.
    assert all(isinstance(e["ts"], float) for e in ops)


def test_frees_are_instants_and_the_counter_follows_them():
    x = torch.randn(4, 8)
    proc, _, trace = trace_run(CHAIN, {"x": x}, "--profile", "@DIR/trace.json",
                               "--memory-report=json", device="cpu")
    report = json.loads(proc.stdout.splitlines()[-1])
    check_trace(trace, report)
    events = trace["traceEvents"]
    frees = [e for e in events if e["ph"] == "i"]
    assert [f["args"]["value"] for f in frees] == ["%0", "%1", "%2"]
    assert all(f["args"]["bytes"] == 4 * 8 * 4 for f in frees)
    live = [e["args"]["live_bytes"] for e in events if e["ph"] == "C"]
    # 0 at the start; %0 and %1 alive together at the peak; the output at the end.
    assert live[0] == 0 and max(live) == 2 * 128 and live[-1] == 128


def test_without_frees_the_counter_only_grows():
    x = torch.randn(4, 8)
    proc, _, trace = trace_run(CHAIN, {"x": x}, "--profile", "@DIR/trace.json",
                               "--memory-report=json", device="cpu", free=False)
    report = json.loads(proc.stdout.splitlines()[-1])
    check_trace(trace, report)
    live = [e["args"]["live_bytes"] for e in trace["traceEvents"] if e["ph"] == "C"]
    assert live == sorted(live) and live[-1] == 4 * 128


def test_summary_table():
    x = torch.randn(4, 8)
    proc, _, _ = trace_run(CHAIN, {"x": x}, "--profile-summary", "--benchmark", "4")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("op "))
    assert lines[head].split()[:4] == ["op", "calls", "optimized", "CPU"]
    rows = {l.split()[0]: l.split() for l in lines[head + 1:] if l and not l[0].isdigit()}
    # Profiled: the first run and the 4 benchmark runs.
    assert rows["add"][1] == str(2 * 5) and rows["mul"][1] == "5" and rows["softmax"][1] == "5"
    # add, mul and softmax (f32, contiguous) take the optimized tier (softmax
    # through Ops.def's FAST_CPU).
    assert rows["add"][2] == rows["add"][1] and rows["softmax"][2] == "5"
    total, mean, mn, mx, pct = map(float, rows["softmax"][3:8])
    assert mn <= mean <= mx and abs(total - 5 * mean) < 0.01 and 0 < pct < 100
    assert re.search(r"^5 runs, [\d.]+ us in all$", proc.stdout, re.M)


def test_profile_of_several_runs_is_valid():
    x = torch.randn(4, 8)
    proc, _, trace = trace_run(CHAIN, {"x": x}, "--profile", "@DIR/trace.json", "--benchmark", "3")
    assert proc.returncode == 0, proc.stderr
    assert not validate(trace)
    assert trace["otherData"]["runs"] == 4
    assert len([e for e in trace["traceEvents"] if e.get("cat") == "cpu_op"]) == 16


def test_unwritable_trace_path_is_an_error_before_running():
    x = torch.randn(4, 8)
    proc, listing, _ = trace_run(CHAIN, {"x": x}, "--profile", "@DIR/no/such/dir/trace.json")
    assert proc.returncode == 1
    assert "cannot write the trace" in proc.stderr and "no/such/dir/trace.json" in proc.stderr
    assert "out.safetensors" not in listing


def test_failed_run_leaves_no_trace():
    a, b = torch.tensor([4, 2]), torch.tensor([2, 0])
    text, inputs = op_graph("div", [a, b, "floor"], [a])
    proc, listing, _ = trace_run(text, inputs, "--profile", "@DIR/trace.json", device="cpu")
    assert proc.returncode == 1 and "integer division by zero" in proc.stderr
    # Neither the trace nor its temporary file, nor any output.
    assert listing == ["g.freed.mlir", "g.mlir", "in.safetensors"], listing


def test_transformer_layer_trace():
    B, S, E, H, F = 2, 7, 32, 4, 64
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.1, batch_first=True).eval()
    _, report = run_graph(transformer_layer_graph(B, S, E, H, F), {"src": torch.randn(B, S, E)},
                          dict(layer.state_dict()))
    assert report["devices"][0]["frees"] > 0


# The validator must catch what it claims to: each broken trace below is a
# valid one with one thing wrong.
def valid_trace():
    x = torch.randn(4, 8)
    _, _, trace = trace_run(CHAIN, {"x": x}, "--profile", "@DIR/trace.json", device="cpu")
    assert not validate(trace)
    return trace


def add_kernel_with_flow(trace, kernel_ts, launch_ts, skew_us=0.0):
    pid, gpu = trace["otherData"]["pid"], 1 << 30
    op = next(e for e in trace["traceEvents"] if e.get("cat") == "cpu_op")
    trace["otherData"]["devices"] = [{"device": "cuda:0", "pid": gpu, "max_launch_skew_us": skew_us,
                                      "sync": {"error_bound_us": 1.0}}]
    trace["traceEvents"] += [
        {"ph": "M", "name": "process_name", "pid": gpu, "tid": gpu, "args": {"name": "cuda:0"}},
        {"ph": "M", "name": "thread_name", "pid": gpu, "tid": gpu, "args": {"name": "stream"}},
        {"ph": "X", "name": "k", "cat": "kernel", "pid": gpu, "tid": gpu, "ts": kernel_ts, "dur": 1.0},
        {"ph": "s", "name": "launch", "id": 7, "pid": pid, "tid": op["tid"], "ts": launch_ts},
        {"ph": "f", "name": "launch", "id": 7, "bp": "e", "pid": gpu, "tid": gpu, "ts": kernel_ts}]
    return op


def test_validator_catches_partial_overlap():
    trace = valid_trace()
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "cpu_op"]
    ops[0]["dur"] = ops[1]["ts"] - ops[0]["ts"] + ops[1]["dur"] / 2 + 0.001
    assert any("overlap partially" in p for p in validate(trace))


def test_validator_catches_negative_counter_and_unnamed_thread():
    trace = valid_trace()
    next(e for e in trace["traceEvents"] if e["ph"] == "C")["args"]["live_bytes"] = -1
    trace["traceEvents"] = [e for e in trace["traceEvents"] if e["name"] != "thread_name"]
    problems = validate(trace)
    assert any("negative" in p for p in problems)
    assert any("no thread_name" in p for p in problems)


def test_validator_checks_flows_and_skew():
    trace = valid_trace()
    op = add_kernel_with_flow(trace, 0, 0)
    op_ts = op["ts"]
    # A launch inside the op, its kernel after it: valid.
    trace["traceEvents"][-3]["ts"] = trace["traceEvents"][-1]["ts"] = op_ts + 5
    trace["traceEvents"][-2]["ts"] = op_ts
    assert not validate(trace), validate(trace)
    # The kernel 2 us before its launch with no skew reported: invalid;
    # with 2 us of reported skew: valid.
    trace["traceEvents"][-3]["ts"] = trace["traceEvents"][-1]["ts"] = op_ts - 2
    assert any("before its launch" in p for p in validate(trace))
    trace["otherData"]["devices"][0]["max_launch_skew_us"] = 2.0
    assert not validate(trace)
    # An unmatched start, and a finish outside any kernel.
    trace["traceEvents"].pop()
    assert any("without a finish" in p for p in validate(trace))
    add_kernel_with_flow(trace, op_ts + 5, op_ts)
    trace["traceEvents"][-1]["ts"] = op_ts + 9
    assert any("no kernel range" in p for p in validate(trace))


def unit_test_trace(gtest_filter, name):
    """The trace a unit test writes (unittests/TestTrace.h), validated."""
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.run([os.path.join(BIN, "TraceIRUnitTests"), f"--gtest_filter={gtest_filter}"],
                              env={**os.environ, "TRACEIR_TEST_TRACE_DIR": d},
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout
        with open(os.path.join(d, name + ".json")) as f:
            trace = json.load(f)
    assert not validate(trace), validate(trace)
    return trace


def test_two_devices_from_recorded_event_times():
    """The unit test feeds the profiler recorded times of two devices whose
    clocks start at different CPU times; its trace must be valid, with one
    process per device, and report the skew it found."""
    trace = unit_test_trace("TwoDevices.KernelsLandOnTheirDevicesCPUTime", "two-devices")
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert len({e["pid"] for e in kernels}) == 2
    skews = [d["max_launch_skew_us"] for d in trace["otherData"]["devices"]]
    assert skews == [0.0, 0.4]


def test_two_threads_into_one_profile():
    """The unit test's trace of two threads running at once is valid: each
    thread has its own named track and its ranges nest on it."""
    trace = unit_test_trace("RuntimeTest.ProfileTwoThreads", "two-threads")
    tids = {e["tid"] for e in trace["traceEvents"] if e.get("cat") == "cpu_op"}
    assert len(tids) == 2


@pytest.mark.devices("cuda")
def test_cuda_profile_where_present(device):
    """On a GPU: kernels on the device's own track, one arrow per launch."""
    x = torch.randn(4, 8)
    proc, _, trace = trace_run(CHAIN, {"x": x}, "--profile", "@DIR/trace.json",
                               "--memory-report=json", device=device)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    check_trace(trace, report)
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert [k["name"] for k in kernels] == ["mul", "add", "softmax", "add"]
    dev = trace["otherData"]["devices"][0]
    assert dev["device"].startswith("cuda") and dev["sync"]["error_bound_us"] >= 0
