#!/usr/bin/env python3
"""Runs a GPU bundle's cases (scripts/gpu-bundle.sh) with the runtime-only
build: every case through trace-exec and through the Python module, outputs
compared with the expected ones, the memory report (measured == predicted)
and the profile (trace_validator.py, one launch arrow per op on CUDA)
checked; a subset again under compute-sanitizer where it works. Prints one
table and writes results.json (for --only FAILED).

    run_cases.py --bundle DIR --build DIR --device cuda [--only FAILED] [--jobs N]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import torch
from safetensors.torch import load_file, save_file


def generated_tensors(meta, kind):
    """The tensors a big case ships as seeds, drawn with the same mean and
    standard deviation as the originals (same seed on every machine)."""
    out = {}
    for g in meta.get("generated", []):
        if g["kind"] != kind:
            continue
        gen = torch.Generator().manual_seed(1000 + g["seed"])
        t = torch.randn(g["shape"], generator=gen, dtype=torch.float64) * g["std"] + g["mean"]
        out[g["name"]] = t.to(getattr(torch, g["dtype"]))
    return out


def tensors(case, meta, kind):
    path = os.path.join(case, kind + "s.safetensors")
    out = load_file(path) if os.path.exists(path) else {}
    out.update(generated_tensors(meta, kind))
    return out


def compare(got, want, rtol, atol):
    """'' when the outputs agree, else what differs."""
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"output{i}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if w.dtype.is_floating_point:
            try:
                torch.testing.assert_close(g.double(), w.double(), rtol=rtol, atol=atol,
                                           equal_nan=True)
            except AssertionError as e:
                return f"output{i}: " + str(e).splitlines()[0] + " " + \
                    " ".join(str(e).split("\n")[1:3])
        elif not torch.equal(g, w):
            return f"output{i}: integer values differ"
    return ""


class Runner:
    def __init__(self, args):
        self.args = args
        self.exec = os.path.join(args.build, "bin", "trace-exec")
        sys.path.insert(0, os.path.join(args.bundle, "src", "test", "python"))
        from trace_validator import validate
        self.validate = validate
        self.device = "cuda:0" if args.device == "cuda" else args.device

    def trace_exec(self, trx, d, inputs, params, meta, outputs, device, profile=None,
                   wrapper=()):
        cmd = [*wrapper, self.exec, trx, "--device", device, "--memory-report=json",
               "--seed", str(meta.get("seed", 0)), "--outputs", outputs]
        if meta.get("check_frees"):
            cmd.append("--check-frees")
        extra = meta.get("extra", [])
        if "--memory-limit" in extra:
            i = extra.index("--memory-limit")
            cmd += ["--memory-limit", extra[i + 1]]
        for flag, ts in (("--inputs", inputs), ("--params", params)):
            if ts:
                p = os.path.join(d, flag[2:] + ".safetensors")
                if not os.path.exists(p):
                    save_file({k: v.contiguous() for k, v in ts.items()}, p)
                cmd += [flag, p]
        if profile:
            cmd += ["--profile", profile]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    def run_case(self, name):
        case = os.path.join(self.args.cases, name)
        with open(os.path.join(case, "case.json")) as f:
            meta = json.load(f)
        r = {"case": name, "test": meta["test"], "kind": meta["kind"], "result": "PASS",
             "why": "", "kernel_us": 0.0, "ops": 0, "generated_ops": 0, "python": ""}
        cuda = self.device.startswith("cuda")
        trx = os.path.join(case, "cuda.trx" if cuda else "cpu.trx")
        if not os.path.exists(trx):
            if meta["kind"] == "error" and not cuda:
                # It failed when it was built (no kernel, a bad type): the
                # error the CPU run gave there.
                r["result"], r["why"] = "ERROR AS EXPECTED", meta["error"].splitlines()[-1][:160]
                return r
            if meta.get("cuda_build_error") and cuda:
                r["result"], r["why"] = "NOT BUILT", meta["cuda_build_error"].splitlines()[0]
                return r
            r["result"], r["why"] = "FAIL", "no saved executable in the case"
            return r
        inputs, params = tensors(case, meta, "input"), tensors(case, meta, "param")
        with tempfile.TemporaryDirectory() as d:
            out, trace = os.path.join(d, "out.safetensors"), os.path.join(d, "trace.json")
            proc = self.trace_exec(trx, d, inputs, params, meta, out, self.device, trace)
            if meta["kind"] == "error":
                if proc.returncode == 0:
                    r["result"], r["why"] = "FAIL", "ran; the CPU run failed: " + meta["error"]
                else:
                    r["result"] = "ERROR AS EXPECTED"
                    r["why"] = proc.stderr.strip().splitlines()[-1][:160]
                    if meta.get("recover"):
                        why = self.recovery(trx, case, params, inputs, meta, proc.stderr)
                        if why:
                            r["result"], r["why"] = "FAIL", why
                return r
            if proc.returncode != 0:
                r["result"], r["why"] = "FAIL", proc.stderr.strip()[-300:]
                return r
            got = load_file(out)
            got = [got[f"output{i}"] for i in range(len(got))]
            want = self.expected(case, meta, trx, d, inputs, params)
            if isinstance(want, str):
                r["result"], r["why"] = "FAIL", want
                return r
            why = compare(got, want, meta.get("rtol", 1e-4), meta.get("atol", 1e-5))
            report = json.loads(proc.stdout.strip().splitlines()[-1])["devices"][0]
            if not why and report["peak_bytes"] != report["predicted_peak_bytes"]:
                why = f"peak {report['peak_bytes']} measured, {report['predicted_peak_bytes']} predicted"
            if not why:
                why = self.check_trace(trace, report, r)
            if why:
                r["result"], r["why"] = "FAIL", why
                return r
            r["python"] = self.python_path(trx, params, inputs, want, meta)
            if r["python"] != "ok":
                r["result"], r["why"] = "FAIL", "Python module: " + r["python"]
        return r

    def expected(self, case, meta, trx, d, inputs, params):
        path = os.path.join(case, "expected.safetensors")
        if os.path.exists(path):
            e = load_file(path)
            return [e[f"output{i}"] for i in range(len(e))]
        # A generated case: the reference is the runtime's CPU run here.
        out = os.path.join(d, "cpu-out.safetensors")
        proc = self.trace_exec(os.path.join(case, "cpu.trx"), d, inputs, params, meta, out, "cpu")
        if proc.returncode != 0:
            return "the CPU reference run failed: " + proc.stderr.strip()[-200:]
        e = load_file(out)
        return [e[f"output{i}"] for i in range(len(e))]

    def check_trace(self, path, report, r):
        with open(path) as f:
            trace = json.load(f)
        errors = self.validate(trace)
        if errors:
            return "invalid trace: " + "; ".join(errors[:3])
        events = trace["traceEvents"]
        ops = [e for e in events if e.get("cat") == "cpu_op"]
        kernels = [e for e in events if e.get("cat") == "kernel"]
        r["ops"] = len(ops)
        r["generated_ops"] = sum(1 for e in ops if e.get("args", {}).get("generated_kernels"))
        times = kernels if kernels else ops
        r["kernel_us"] = sum(float(e.get("dur", 0)) for e in times)
        live = [e["args"]["live_bytes"] for e in events if e["ph"] == "C"]
        if max(live, default=0) != report["peak_bytes"]:
            return f"live-bytes counter peaks at {max(live, default=0)}, report {report['peak_bytes']}"
        frees = [e for e in events if e["ph"] == "i" and e["name"] == "free"]
        if len(frees) != report["frees"]:
            return f"{len(frees)} free instants, {report['frees']} frees"
        if report["device"].startswith("cuda"):
            flows = [e for e in events if e["ph"] == "s"]
            if len(flows) != len(ops):
                return f"{len(flows)} launch arrows for {len(ops)} ops"
        return ""

    def recovery(self, trx, case, params, inputs, meta, stderr):
        """A device-error case (test_device_errors.py): the run failed with
        the CPU run's message, naming the op; through the Python module the
        same executable fails those inputs again, then runs the good ones
        twice (the device's error record is cleared per run). "" or why
        not."""
        found = re.search(r"op '.*", meta["error"])
        want_msg = found.group(0).strip() if found else ""
        if want_msg not in stderr:
            return f"not the CPU's error {want_msg[:100]!r}: {stderr.strip()[-120:]}"
        import traceir
        try:
            exe = traceir.load_executable(trx, params=params, device=self.device)
            try:
                exe(**inputs)
                return "the Python module ran the failing inputs"
            except Exception as e:  # the error this case is about
                if want_msg not in str(e):
                    return f"the Python module's error is not the CPU's: {str(e)[-120:]}"
            good = load_file(os.path.join(case, "recover-inputs.safetensors"))
            e = load_file(os.path.join(case, "recover-expected.safetensors"))
            want = [e[f"output{i}"] for i in range(len(e))]
            for _ in range(2):
                outs = exe(**good)
                outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
                outs = [o if isinstance(o, torch.Tensor) else torch.from_numpy(o) for o in outs]
                why = compare([o.cpu() for o in outs], want, meta.get("rtol", 1e-4),
                              meta.get("atol", 1e-5))
                if why:
                    return "the good run after the error: " + why
            return ""
        except Exception as e:  # reported in the table, not raised
            return f"the good run after the error: {type(e).__name__}: {e}"[:200]

    def python_path(self, trx, params, inputs, want, meta):
        import traceir
        try:
            exe = traceir.load_executable(trx, params=params, device=self.device)
            exe.check_frees = bool(meta.get("check_frees"))
            exe.seed = meta.get("seed", 0)
            cuda = self.device.startswith("cuda") and torch.cuda.is_available()
            if cuda:  # lent through DLPack where they lie, no host copy
                inputs = {k: v.to(self.device) for k, v in inputs.items()}
            outs = exe(**inputs) if inputs else exe()
            outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            outs = [o if isinstance(o, torch.Tensor) else torch.from_numpy(o) for o in outs]
            if cuda and inputs:
                where = [str(o.device) for o in outs if o.device != torch.device(self.device)]
                if where:
                    return f"outputs came back on {', '.join(where)}, not {self.device}"
                outs = [o.cpu() for o in outs]
            why = compare(outs, want, meta.get("rtol", 1e-4), meta.get("atol", 1e-5))
            return why or "ok"
        except Exception as e:  # reported in the table, not raised
            return f"{type(e).__name__}: {e}"[:200]


def sanitize(runner, results, limit):
    """The first `limit` passing cases again under compute-sanitizer's
    memcheck, where it works on this machine."""
    tool = shutil.which("compute-sanitizer") or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "compute-sanitizer")
    cuda = runner.device.startswith("cuda")
    if not cuda or not os.path.exists(tool):
        print("compute-sanitizer: skipped (" + ("a CPU run" if not cuda else "not found") + ")")
        return
    passing = [r for r in results if r["result"] == "PASS"][:limit]
    bad = 0
    for n, r in enumerate(passing):
        case = os.path.join(runner.args.cases, r["case"])
        with open(os.path.join(case, "case.json")) as f:
            meta = json.load(f)
        with tempfile.TemporaryDirectory() as d:
            proc = runner.trace_exec(os.path.join(case, "cuda.trx"), d,
                                     tensors(case, meta, "input"), tensors(case, meta, "param"),
                                     meta, os.path.join(d, "o.safetensors"), runner.device,
                                     wrapper=(tool, "--tool", "memcheck", "--error-exitcode", "99"))
        if n == 0 and proc.returncode not in (0, 99):
            print("compute-sanitizer: skipped (it does not run here: " +
                  (proc.stderr.strip().splitlines() or ["?"])[-1][:120] + ")")
            return
        if proc.returncode != 0:
            bad += 1
            r["result"], r["why"] = "FAIL", "compute-sanitizer memcheck: " + proc.stdout[-200:]
    print(f"compute-sanitizer memcheck: {len(passing) - bad} of {len(passing)} cases clean")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--cases", help="the unpacked cases (default: BUNDLE/cases)")
    p.add_argument("--device", default="cuda", help="cpu, cuda (cuda:0) or cuda:N")
    p.add_argument("--only", choices=("FAILED",))
    p.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    p.add_argument("--sanitize", type=int, default=40,
                   help="cases to rerun under compute-sanitizer (0: none)")
    args = p.parse_args()
    args.cases = args.cases or os.path.join(args.bundle, "cases")
    sys.path.insert(0, os.path.join(args.build, "python"))
    runner = Runner(args)
    results_path = os.path.join(args.bundle, f"results-{args.device}.json")
    names = sorted(os.listdir(args.cases))
    if args.only:
        with open(results_path) as f:
            names = [r["case"] for r in json.load(f) if r["result"] == "FAIL"]
    start = time.time()
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(runner.run_case, names))
    if args.sanitize:
        sanitize(runner, results, args.sanitize)
    with open(results_path, "w") as f:
        json.dump(results, f, indent=1)

    print(f"{'case':<17} {'result':<18} {'ops':>4} {'gen':>4} {'kernel us':>10}  test / why")
    for r in sorted(results, key=lambda r: (r["result"] == "PASS", r["test"])):
        note = r["test"] + (f"  -- {r['why']}" if r["why"] else "")
        print(f"{r['case']:<17} {r['result']:<18} {r['ops']:>4} {r['generated_ops']:>4} "
              f"{r['kernel_us']:>10.1f}  {note}")
    counts = {}
    for r in results:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    errors = sum(1 for r in results if r["kind"] == "error")
    gen = sum(r["generated_ops"] for r in results)
    ops = sum(r["ops"] for r in results)
    print(f"\n{len(results)} cases on {runner.device} in {time.time() - start:.0f} s: " +
          ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) +
          f"; {errors} error cases ({counts.get('ERROR AS EXPECTED', 0)} failed as expected); "
          f"{ops} ops run, {gen} by generated kernels, {ops - gen} by the runtime's")
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
