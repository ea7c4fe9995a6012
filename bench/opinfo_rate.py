"""The OpInfo pass rate through TraceIR's default path, as issue 15 counts
it: PyTorch's own operator samples (torch.testing._internal's op_db), each
sample a one-op torch.nn.Module, imported with traceir.from_torch (the
default decomposition), compiled for the CPU, run, and compared with eager.

Denominator: every op_db entry (each variant) that supports float32 on the
CPU and has at least one float32 sample whose arguments are tensors and
Python scalars (numbers, bools, strings, None, and tuples or lists of
numbers) and that torch.export captures; up to 3 such samples an entry. An
entry passes when all of its samples import, compile, run and match eager
(rtol 1e-4, atol 1e-5, NaN equal to NaN, integers and bools exactly, the
dtype and shape the same); it fails when any does not.

    TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/opinfo_rate.py [--ops a,b] [--failures] [--dtypes]

Prints the pass rate, the reasons entries fail (the first failure of each),
grouped, and with --failures every failing entry with its reason.

--dtypes measures dtype coverage instead: every entry that passes in
float32 runs again at each dtype of bool, uint8, int8, int16, int32, int64,
float16, bfloat16 and float64 that its OpInfo supports on the CPU (up to 3
samples each, the same rules; float16 and bfloat16 at assert_close's own
tolerances for them), and a table counts the passes per dtype.

A float16 or bfloat16 result that misses eager at those tolerances gets a
second look, the rule torch.compile's own accuracy checks use
(torch._dynamo.utils.same with fp64_ref): the module runs again in float64
on the same values, and the sample passes "against float64" when TraceIR's
error from that reference is no worse than eager's own (within same()'s
multiplier). Half-precision kernels that accumulate in float32 where eager
rounds each step (or the reverse) differ from eager by more than a few ulps
without being any less accurate; the table counts those passes in a column
of their own so the stricter count stays visible.
"""
import argparse
import collections
import os
import re
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(os.environ.get("TRACEIR_BUILD", os.path.join(ROOT, "build")),
                                "python"))

import torch  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

import traceir  # noqa: E402

SAMPLES = 3
SCALARS = (bool, int, float, str, type(None))


def plain(v):
    """Whether `v` is a Python scalar argument (or a tuple/list of numbers)."""
    if isinstance(v, SCALARS):
        return True
    return isinstance(v, (tuple, list)) and all(isinstance(x, (bool, int, float)) for x in v)


class OneOp(torch.nn.Module):
    """fn(*args, **kwargs) with the tensors as the forward's inputs."""

    def __init__(self, fn, args, kwargs):
        super().__init__()
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def forward(self, *tensors):
        it = iter(tensors)
        args = [next(it) if isinstance(a, torch.Tensor) else a for a in self.args]
        kwargs = {k: next(it) if isinstance(v, torch.Tensor) else v
                  for k, v in self.kwargs.items()}
        return self.fn(*args, **kwargs)


def samples(info, dtype=torch.float32):
    """Up to SAMPLES (module, tensors) for `info` in `dtype` that torch.export
    captures."""
    out = []
    try:
        it = info.sample_inputs("cpu", dtype)
        for s in it:
            if len(out) == SAMPLES:
                break
            if not isinstance(s.input, torch.Tensor):
                continue
            args = [s.input] + list(s.args)
            if not all(isinstance(a, torch.Tensor) or plain(a) for a in args):
                continue
            if not all(isinstance(v, torch.Tensor) or plain(v) for v in s.kwargs.values()):
                continue
            m = OneOp(info.op, args, dict(s.kwargs))
            tensors = tuple(a for a in args if isinstance(a, torch.Tensor)) + tuple(
                v for v in s.kwargs.values() if isinstance(v, torch.Tensor))
            try:
                with torch.no_grad():
                    want = m(*[t.clone() for t in tensors])
                    torch.export.export(m, tuple(t.clone() for t in tensors))
            except Exception:  # noqa: BLE001 - not captured: not counted
                continue
            leaves = want if isinstance(want, (tuple, list)) else [want]
            if not leaves or not all(isinstance(t, torch.Tensor) for t in leaves):
                continue
            out.append((m, tensors, list(leaves)))
    except Exception:  # noqa: BLE001 - an OpInfo whose samples fail to build
        return out
    return out


# torch.testing.assert_close's own tolerances for the half types (OpInfo's
# defaults); float32 and float64 keep the pass rate's rtol 1e-4, atol 1e-5.
TOLERANCES = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5)}


# check()'s verdict for a half-precision sample that misses eager but is as
# accurate as eager against a float64 run of the same module.
AS_ACCURATE = "as accurate as eager against float64"


def fp64_reference(m, tensors):
    """The module's eager results on float64 copies of the half-precision
    inputs (other tensors as they are), or None when it cannot run so."""
    def widen(t):
        return t.double() if t.dtype in TOLERANCES else t.clone()
    try:
        with torch.no_grad():
            r = m(*[widen(t) for t in tensors])
    except Exception:  # noqa: BLE001 - no float64 path: no second look
        return None
    return list(r) if isinstance(r, (tuple, list)) else [r]


def as_accurate(m, tensors, want, got):
    """Whether every half-precision result of TraceIR is as close to the
    float64 reference as eager's (torch.compile's accuracy rule)."""
    ref64 = fp64_reference(m, tensors)
    if ref64 is None or len(ref64) != len(want):
        return False
    from torch._dynamo.utils import same
    for g, w, r in zip(got, want, ref64):
        if w.dtype not in TOLERANCES:
            continue
        if not isinstance(r, torch.Tensor) or r.shape != w.shape:
            return False
        if not same(w, g, fp64_ref=r, tol=TOLERANCES[w.dtype][0], equal_nan=True,
                    log_error=lambda *a, **k: None):
            return False
    return True


def check(m, tensors, want):
    """None when TraceIR matches eager, AS_ACCURATE when a half-precision
    result misses eager but not the float64 reference, else the reason (one
    line)."""
    try:
        module = traceir.from_torch(m, tuple(t.clone() for t in tensors))
    except Exception as e:  # noqa: BLE001
        return "import: " + first_line(e)
    try:
        compiled = traceir.compile(module, "cpu")
    except Exception as e:  # noqa: BLE001
        return "compile: " + first_line(e)
    try:
        got = compiled(*[t.clone() for t in tensors])
    except Exception as e:  # noqa: BLE001
        return "run: " + first_line(e)
    got = [torch.as_tensor(g) for g in (got if isinstance(got, (tuple, list)) else [got])]
    if len(got) != len(want):
        return f"match: {len(got)} results, eager has {len(want)}"
    half_missed = False
    for g, w in zip(got, want):
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"match: {g.dtype}{list(g.shape)} where eager has {w.dtype}{list(w.shape)}"
        try:
            if w.dtype.is_floating_point or w.dtype.is_complex:
                rtol, atol = TOLERANCES.get(w.dtype, (1e-4, 1e-5))
                torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)
            elif not torch.equal(g, w):
                return "match: integer or bool values differ"
        except AssertionError:
            if w.dtype not in TOLERANCES:
                return "match: values differ"
            half_missed = True
    if not half_missed:
        return None
    if as_accurate(m, tensors, want, got):
        return AS_ACCURATE
    return "match: values differ, and further from a float64 run than eager's"


def first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def reason_key(reason):
    """The reason with names of ops kept and numbers, shapes and locations
    dropped, to group entries failing the same way."""
    r = re.sub(r"\(at [^)]*\)", "", reason)
    r = re.sub(r"tensor<[^>]*>", "tensor<..>", r)
    r = re.sub(r"\d+", "N", r)
    return r[:110]


def first_failure(cases):
    """The first case's reason for failing, or None when all match eager, or
    AS_ACCURATE when all pass and some only against float64."""
    verdict = None
    for m, tensors, want in cases:
        reason = check(m, tensors, want)
        if reason == AS_ACCURATE:
            verdict = AS_ACCURATE
        elif reason:
            return reason
    return verdict


# The dtypes the issue names; complex ones are out of scope.
DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float64)


def dtype_coverage(info, name, coverage):
    """Records, for an entry that passes in float32, the reason each other
    dtype its OpInfo supports on the CPU fails (None: passes; absent: no
    sample torch.export captures)."""
    supported = info.supported_dtypes("cpu")
    for dtype in DTYPES:
        if dtype in supported:
            cases = samples(info, dtype)
            if cases:
                coverage.setdefault(dtype, []).append((name, first_failure(cases)))


def print_dtype_coverage(coverage, failures, seconds):
    print(f"dtype coverage of the entries that pass in float32 ({seconds:.0f} s)\n")
    print("| dtype | entries run | match eager | as accurate against float64 | fail |\n"
          "| --- | ---: | ---: | ---: | ---: |")
    for dtype in DTYPES:
        runs = coverage.get(dtype, [])
        close = [n for n, r in runs if r == AS_ACCURATE]
        bad = [n for n, r in runs if r and r != AS_ACCURATE]
        print(f"| {str(dtype).removeprefix('torch.')} | {len(runs)} "
              f"| {len(runs) - len(bad) - len(close)} | {len(close)} | {len(bad)} |")
    if failures:
        print()
        for dtype in DTYPES:
            for name, r in coverage.get(dtype, []):
                if r:
                    print(f"{name} {str(dtype).removeprefix('torch.')}: {r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", help="comma-separated OpInfo names to run (default: all)")
    ap.add_argument("--failures", action="store_true", help="list every failing entry")
    ap.add_argument("--dtypes", action="store_true",
                    help="dtype coverage instead: each entry passing in float32, at every "
                         "other dtype its OpInfo supports on the CPU")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    wanted = set(a.ops.split(",")) if a.ops else None
    start = time.time()
    passed, failed, skipped = [], [], 0
    coverage = {}
    for info in op_db:
        name = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
        if wanted and info.name not in wanted and name not in wanted:
            continue
        if torch.float32 not in info.supported_dtypes("cpu"):
            continue
        cases = samples(info)
        if not cases:
            skipped += 1
            continue
        reason = first_failure(cases)
        (failed if reason else passed).append((name, reason))
        if a.dtypes and not reason:
            dtype_coverage(info, name, coverage)
    if a.dtypes:
        return print_dtype_coverage(coverage, a.failures, time.time() - start)
    total = len(passed) + len(failed)
    print(f"OpInfo entries counted: {total} ({skipped} more support float32 but have no "
          f"sample of tensors and scalars that torch.export captures)")
    print(f"passed: {len(passed)} / {total} = {100.0 * len(passed) / max(total, 1):.1f}%  "
          f"({time.time() - start:.0f} s)")
    groups = collections.Counter(reason_key(r) for _, r in failed)
    print("\n| entries | first failure (grouped) |\n| ---: | --- |")
    for key, n in groups.most_common(40):
        print(f"| {n} | {key.replace('|', '/')} |")
    if a.failures:
        print()
        for name, r in failed:
            print(f"{name}: {r}")


if __name__ == "__main__":
    main()
