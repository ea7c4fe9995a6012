#!/usr/bin/env python3
"""Benchmark: the GPU lowering (issue 6).

1. Compile time of `trace-translate g.mlir --emit-gpu-binary --chip=C` (the
   whole pipeline: linalg, bufferization, GPU mapping, NVVM, ptxas and
   fatbinary; best of --repeat runs, wall clock) for the MLP, the transformer
   encoder layer (hand-written and torch.export forms) and the word LM (the
   2017 trace in eval form, and the GRU variant), on sm_80 and sm_90, in
   both modes: per op (the default, the kernels trace-run --gpu-binary
   launches) and the whole graph as one function (--per-op=false, which
   needs every op lowered). "covered" is how many ops get generated kernels
   (trace-run --print-kernel-plan).
2. Where a GPU answers (trace-run --device cuda), kernel time per op name of
   the generated kernels vs the runtime's hand-written ones, from profiles
   of --runs runs each (`trace-run --benchmark N --profile`).

Usage: bench/lowering_bench.py [--build build] [--repeat 3] [--runs 20]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))


def graphs(bin_dir):
    import test_graphs
    import test_word_lm
    from gpu_models import MLP_TEXT

    with open(os.path.join(ROOT, "examples", "word_lm.trace")) as f:
        word_lm = test_word_lm.eval_trace_text(f.read())
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "word_lm.trace")
        with open(path, "w") as f:
            f.write(word_lm)
        word_lm_mlir = subprocess.run([os.path.join(bin_dir, "trace-translate"), "--import-anf", path],
                                      check=True, capture_output=True, text=True).stdout
    return {
        "MLP 8x32-64-10": MLP_TEXT,
        "transformer layer B2 S7 E32 (hand)": test_graphs.transformer_layer_graph(2, 7, 32, 4, 64),
        "transformer layer B2 S7 E32 (export)": test_graphs.transformer_layer_export_graph(2, 7, 32, 4, 64),
        "transformer layer B8 S64 E256 (hand)": test_graphs.transformer_layer_graph(8, 64, 256, 8, 1024),
        "word LM eval (2017 trace, LSTM)": word_lm_mlir,
        "word LM GRU (export)": test_graphs.word_lm_gru_graph(35, 20, 10000, 200, 200),
    }


def compile_time(bin_dir, path, chip, per_op, repeat):
    best, err = None, None
    for _ in range(repeat):
        out = path + ".fatbin"
        start = time.perf_counter()
        proc = subprocess.run([os.path.join(bin_dir, "trace-translate"), path, "--emit-gpu-binary",
                               f"--chip={chip}", f"--per-op={'true' if per_op else 'false'}", "-o", out],
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            m = re.search(r"op '(\w+)' was not lowered", proc.stderr)
            err = f"not lowered: {m.group(1)}" if m else proc.stderr.strip().splitlines()[-1][:60]
            return None, err
        best = elapsed if best is None else min(best, elapsed)
    return best, err


def coverage(bin_dir, path):
    plan = subprocess.run([os.path.join(bin_dir, "trace-run"), path, "--print-kernel-plan"],
                          capture_output=True, text=True)
    m = re.search(r": (\d+) of (\d+) ops, (\d+) kernels", plan.stdout)
    return f"{m.group(1)}/{m.group(2)} ops, {m.group(3)} kernels" if m else "?"


def kernel_times(bin_dir, path, inputs, params, runs, generated):
    """Mean kernel microseconds per op name over `runs` profiled runs."""
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.json")
        cmd = [os.path.join(bin_dir, "trace-run"), path, "--device", "cuda", "--inputs", inputs,
               "--params", params, "--benchmark", str(runs), "--profile", trace]
        if generated:
            cmd.append("--compile-gpu-kernels")
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
    total = collections.defaultdict(float)
    for e in events:
        if e.get("cat") == "kernel":
            total[e["name"]] += e["dur"]
    return {k: v / (runs + 1) for k, v in total.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    sys.path.insert(0, os.path.join(args.build, "python"))

    print("## Compile time of --emit-gpu-binary (seconds, best of %d)\n" % args.repeat)
    print("| graph | covered (per op) | per op sm_90 | per op sm_80 | whole graph sm_90 | whole graph sm_80 |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for name, text in graphs(bin_dir).items():
            path = os.path.join(d, re.sub(r"\W+", "_", name) + ".mlir")
            with open(path, "w") as f:
                f.write(text)
            cells = [coverage(bin_dir, path)]
            for per_op in (True, False):
                for chip in ("sm_90", "sm_80"):
                    t, err = compile_time(bin_dir, path, chip, per_op, args.repeat)
                    cells.append(f"{t:.2f}" if t is not None else err)
            print(f"| {name} | " + " | ".join(cells) + " |")

    from gpu_models import GRAPHS
    from safetensors.torch import save_file
    status = subprocess.run([os.path.join(bin_dir, "trace-run"), "--device", "cuda",
                             os.path.join(ROOT, "test", "Runtime", "mlp.mlir")],
                            capture_output=True, text=True)
    if "no CUDA device" in status.stderr or "cudaError" in status.stderr:
        print("\n(no GPU here: kernel times need one: " + status.stderr.strip().splitlines()[-1] + ")")
        return
    print("\n## Kernel time per op, generated vs runtime (microseconds per run, mean of %d)\n" % (args.runs + 1))
    print("| graph | op | runtime | generated | generated / runtime |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for name, build in GRAPHS.items():
            text, inputs, params = build()
            path = os.path.join(d, "g.mlir")
            with open(path, "w") as f:
                f.write(text)
            ip, pp = os.path.join(d, "in.st"), os.path.join(d, "p.st")
            save_file({k: v.contiguous() for k, v in inputs.items()}, ip)
            save_file({k: v.contiguous().clone() for k, v in params.items()}, pp)
            rt = kernel_times(bin_dir, path, ip, pp, args.runs, False)
            gen = kernel_times(bin_dir, path, ip, pp, args.runs, True)
            for op in sorted(rt, key=lambda k: -rt[k]):
                g = gen.get(op, 0.0)
                print(f"| {name} | {op} | {rt[op]:.1f} | {g:.1f} | {g / rt[op]:.2f} |")
            print(f"| {name} | **all** | {sum(rt.values()):.1f} | {sum(gen.values()):.1f} | "
                  f"{sum(gen.values()) / sum(rt.values()):.2f} |")


if __name__ == "__main__":
    main()
