"""Helpers for the PyTorch-oracle tests: build a one-op (or small) TraceIR
graph as text, run it with trace-run on safetensors files, read the outputs
back as torch tensors.

The tools come from $TRACEIR_BUILD/bin (default: build/ at the repo root).
Every run is profiled and its trace checked by trace_validator.py, so every
op and graph test is also a profiler test (on CUDA under gpu-check.sh: every
kernel's launch arrow).
"""
import functools
import hashlib
import json
import os
import re
import struct
import subprocess
import tempfile

import torch
from safetensors.torch import load_file, save_file

import bundle_record
from trace_validator import validate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TRACEIR_BUILD", os.path.join(ROOT, "build"))
BIN = os.path.join(BUILD, "bin")
# The device run_graph and check_op use unless told: TRACEIR_DEVICE (cuda when
# gpu-bundle.sh records), or, for a test taking the `device` fixture
# (conftest.py), that test's device.
DEVICE = os.environ.get("TRACEIR_DEVICE", "cpu")

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
          torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
          torch.int16: "i16", torch.int8: "i8", torch.uint8: "ui8", torch.bool: "i1"}


def mlir_type(t):
    """The MLIR tensor type of a torch tensor (or of a shape/dtype pair)."""
    shape = "x".join(str(d) for d in t.shape)
    return f"tensor<{shape + 'x' if shape else ''}{DTYPES[t.dtype]}>"


def py_literal(v):
    """A Python scalar as TraceIR's custom form prints it."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        r = repr(v)
        if r in ("inf", "-inf", "nan"):  # the bits in hexadecimal, as printed
            return "0x" + struct.pack(">d", v).hex().upper() + " : f64"
        if "." not in r:
            e = r.find("e")
            r = r[:e] + ".0" + r[e:] if e >= 0 else r + ".0"
        return r
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, tuple):
        inner = ", ".join(py_literal(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(py_literal(x) for x in v) + "]"
    raise TypeError(f"not a Python scalar: {v!r}")


class Fn(torch.nn.Module):
    """A module whose forward calls `fn`: one op (or a few) for
    traceir.from_torch, which takes modules."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


class Transposed:
    """An argument passed as a non-contiguous view: stored transposed and
    transposed back inside the graph (last two dims)."""

    def __init__(self, tensor):
        self.tensor = tensor


class Sliced:
    """An argument passed as a strided view: stored with every other element
    of dim 0 (stored size 2n), then sliced with step 2 inside the graph."""

    def __init__(self, tensor):
        self.tensor = tensor


def op_graph(op, args, results):
    """A graph calling `op` once. `args` mixes torch tensors (or Transposed /
    Sliced wrappers) and Python scalars in the original order; `results` are
    reference tensors giving the result types. Returns (text, inputs)."""
    params, body, operands, operand_types, inputs = [], [], [], [], {}
    pieces = []
    for i, a in enumerate(args):
        if isinstance(a, (torch.Tensor, Transposed, Sliced)):
            name = f"a{i}"
            t = a.tensor if isinstance(a, (Transposed, Sliced)) else a
            if isinstance(a, Transposed):
                stored = t.transpose(-1, -2).contiguous()
                params.append(f"%{name}_s: {mlir_type(stored)} {{trace.input = \"{name}\"}}")
                body.append(f"%{name} = pyop \"transpose\"(%{name}_s, -2, -1) : "
                            f"({mlir_type(stored)}) -> {mlir_type(t)}")
                inputs[name] = stored
            elif isinstance(a, Sliced):
                stored = torch.zeros((2 * t.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype)
                stored[::2] = t
                params.append(f"%{name}_s: {mlir_type(stored)} {{trace.input = \"{name}\"}}")
                body.append(f"%{name} = pyop \"slice\"(%{name}_s, 0, 0, {stored.shape[0]}, 2) : "
                            f"({mlir_type(stored)}) -> {mlir_type(t)}")
                inputs[name] = stored
            else:
                params.append(f"%{name}: {mlir_type(t)} {{trace.input = \"{name}\"}}")
                inputs[name] = t.contiguous()
            pieces.append(f"%{name}")
            operand_types.append(mlir_type(t))
        else:
            pieces.append(py_literal(a))
    res_types = [mlir_type(r) for r in results]
    names = ", ".join(f"%r#{i}" for i in range(len(results))) if len(results) > 1 else "%r"
    lhs = f"%r:{len(results)}" if len(results) > 1 else "%r"
    rt = res_types[0] if len(res_types) == 1 else "(" + ", ".join(res_types) + ")"
    body.append(f"{lhs} = pyop {json.dumps(op)}({', '.join(pieces)}) : "
                f"({', '.join(operand_types)}) -> {rt}")
    body.append(f"ret {names} : {', '.join(res_types)}")
    sig = ", ".join(params)
    text = (f"trace.graph @g({sig}) -> ({', '.join(res_types)}) {{\n  " +
            "\n  ".join(body) + "\n}\n")
    return text, inputs


class RunError(Exception):
    pass


def _check_round_trip(text):
    """Text -> objects -> text for a graph a test runs (see
    ir_roundtrip.py); text the parser refuses is a test of the tools'
    errors, which trace-run reports."""
    import traceir
    if not traceir.HAS_COMPILER:
        return
    try:
        module = traceir.Module.parse(text)
    except traceir.TraceIRError:
        return
    import ir_roundtrip
    ir_roundtrip.check_round_trip(module)


def run_graph(text, inputs=None, params=None, free=True, check_frees=True,
              device=None, seed=0, extra=(), profile=True):
    """Runs a graph; returns (outputs, memory report dict). With `profile`,
    also checks the run's trace (see check_trace)."""
    _check_round_trip(text)
    seeds = os.environ.get("TRACEIR_FUZZ_SEED_DIR")
    if seeds:  # fuzz/seed_corpora.py: every graph the tests run seeds the fuzzers
        os.makedirs(seeds, exist_ok=True)
        with open(os.path.join(seeds, hashlib.sha1(text.encode()).hexdigest()), "w") as f:
            f.write(text)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.mlir")
        with open(path, "w") as f:
            f.write(text)
        if free:
            # A separate output file: trace-opt maps its input into memory.
            freed = os.path.join(d, "g.freed.mlir")
            # Reordered for memory first (the traced order where none is
            # better; not a graph that comes with frees, which pin its
            # order), elementwise ops run in the storage of an operand that
            # dies there (--reinplace), and planned: every run takes its
            # storages from one arena, and --check-frees checks its owner
            # map.
            has_frees = re.search(r"^\s*(trace\.)?free ", text, re.M)
            reorder = [] if has_frees else ["--reorder-for-memory", "--reinplace"]
            proc = subprocess.run([os.path.join(BIN, "trace-opt"), path, *reorder,
                                   "--free-dead-tensors", "--plan-memory", "-o", freed],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise RunError(proc.stderr.strip())
            path = freed
        if bundle_record.recording(device or DEVICE):
            # Recording a GPU bundle: the case is saved for cuda, and the
            # test goes on with the CPU's results.
            def run_cpu(save, cpu_extra):
                more = ["--save-executable", save] if save else []
                return _run(path, d, inputs, params, check_frees, "cpu", seed,
                            [*cpu_extra, *more], profile)
            return bundle_record.record_graph(BIN, path, text, inputs, params, check_frees,
                                              device or DEVICE, seed, extra, run_cpu)
        return _run(path, d, inputs, params, check_frees, device or DEVICE, seed, extra,
                    profile)


def _run(path, d, inputs, params, check_frees, device, seed, extra, profile):
    """trace-run on the graph file `path` in the temporary folder `d`."""
    cmd = [os.path.join(BIN, "trace-run"), path, "--device", device,
           "--memory-report=json", "--seed", str(seed), *extra]
    if check_frees:
        cmd.append("--check-frees")
    for flag, tensors in (("--inputs", inputs), ("--params", params)):
        if tensors:
            p = os.path.join(d, flag[2:] + ".safetensors")
            # Clones: safetensors refuses tensors that share memory.
            save_file({k: v.contiguous().clone() for k, v in tensors.items()}, p)
            cmd += [flag, p]
    out = os.path.join(d, "out.safetensors")
    cmd += ["--outputs", out]
    trace_path = os.path.join(d, "trace.json")
    if profile:
        cmd += ["--profile", trace_path]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(proc.stderr.strip())
    loaded = load_file(out)
    outputs = [loaded[f"output{i}"] for i in range(len(loaded))]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if profile:
        with open(trace_path) as f:
            check_trace(json.load(f), report)
    return outputs, report


def check_trace(trace, report=None):
    """Validates a trace and checks it against the run's memory report: the
    live-bytes counter peaks at the measured peak, one free instant per
    free, and on a device with its own clock one launch arrow per op."""
    errors = validate(trace)
    assert not errors, "invalid trace:\n" + "\n".join(errors)
    events = trace["traceEvents"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    if report is not None:
        dev = report["devices"][0]
        live = [e["args"]["live_bytes"] for e in events if e["ph"] == "C"]
        assert max(live, default=0) == dev["peak_bytes"], (max(live, default=0), dev)
        # A planned run's counter shows the arena's occupancy, which peaks
        # at the bound the report gives.
        arena = [e["args"]["arena_bytes"] for e in events
                 if e["ph"] == "C" and "arena_bytes" in e["args"]]
        if dev["arena_allocations"]:
            assert max(arena) == dev["lower_bound_bytes"] <= dev["planned_arena_bytes"], dev
        frees = [e for e in events if e["ph"] == "i" and e["name"] == "free"]
        assert len(frees) == dev["frees"], (len(frees), dev)
        if dev["device"].startswith("cuda"):
            flows = [e for e in events if e["ph"] == "s"]
            assert len(flows) == len(ops), (len(flows), len(ops))
    return ops


def check_op(op, args, expected, rtol=1e-5, atol=1e-6, **kwargs):
    """Runs `op` on `args` through TraceIR and compares with `expected` (a
    tensor or a list of tensors, PyTorch's results). Also checks that the
    measured peak equals the predicted one."""
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    text, inputs = op_graph(op, args, expected)
    bundle_record.expectation = (expected, rtol, atol)
    try:
        outputs, report = run_graph(text, inputs, **kwargs)
    finally:
        bundle_record.expectation = None
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype, (op, got.dtype, want.dtype)
        assert got.shape == want.shape, (op, got.shape, want.shape)
        if want.dtype.is_floating_point:
            # NaN where PyTorch has NaN, and only there.
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            assert torch.equal(got, want), (op, got, want)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], (op, report)
    return outputs


def reported_device(device=None):
    """The device a run on `device` (default DEVICE) names in its memory
    report: cuda:0 for cuda. While gpu-bundle.sh records, every run is on
    the CPU."""
    device = device or DEVICE
    if bundle_record.REDIRECT:
        return "cpu"
    return "cuda:0" if device == "cuda" else device


@functools.cache
def cuda_status():
    """(available, reason): whether trace-run can use cuda:0 here (asked
    once a session)."""
    text, inputs = op_graph("neg", [torch.ones(1)], [torch.ones(1)])
    try:
        run_graph(text, inputs, device="cuda", free=False, check_frees=False)
        return True, ""
    except RunError as e:
        return False, str(e).replace("trace-run: error: ", "")
