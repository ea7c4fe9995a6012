#!/usr/bin/env python3
"""Benchmark: whole models, TraceIR's CPU runtime against PyTorch eager.

Every model of the zoo (test/python/zoo_models.py, at its own sizes: batch
1 at 64x64 for torchvision, tiny configs at 2 x 8 tokens for transformers)
and four larger ones the kernel-tier issue measured: a
`nn.TransformerEncoderLayer` at B8 S64 E256, resnet18 at batch 8 x 224^2,
an MLP 256x1024-4096-1024 and the word LM (2-layer LSTM, 35 x 20 tokens).
Each goes through traceir.from_torch -> free-dead-tensors ->
compile("cpu"); a run is one call of the compiled graph, torch tensors in
and out (what a user times), against the eager module's call under
no_grad. Both are the best of N calls after two warm-up calls (N adapts
so that a model takes about a second, at least 3). The column "top op" is
the op with the largest share of TraceIR's time in a profiled call.

Each thread count runs in its own process with OMP_WAIT_POLICY=PASSIVE,
torch.set_num_threads and traceir.set_num_threads set to the same count.

Usage: TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/model_bench.py \
           [--threads 1,2] [--models resnet18,bert] [--tier optimized|portable]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def large_models():
    """(name, build) pairs in the zoo's form: build() -> (model, args)."""
    import torch

    def layer():
        torch.manual_seed(0)
        m = torch.nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True).eval()
        return m, (torch.randn(8, 64, 256),)

    def resnet():
        import torchvision
        torch.manual_seed(0)
        return torchvision.models.resnet18(weights=None).eval(), (torch.randn(8, 3, 224, 224),)

    def mlp():
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 1024)).eval()
        return m, (torch.randn(256, 1024),)

    def word_lm():
        sys.path.insert(0, os.path.join(ROOT, "examples"))
        from word_lm_inputs import RNNModel
        torch.manual_seed(0)
        m = RNNModel().eval()
        return m, (torch.randint(0, 10000, (35, 20)),
                   (torch.zeros(2, 20, 200), torch.zeros(2, 20, 200)))

    return [("transformer layer B8 S64 E256", layer), ("resnet18 8x224^2", resnet),
            ("MLP 256x1024-4096-1024", mlp), ("word LM 35x20", word_lm)]


def best_of(fn, budget_s=1.0, most=20):
    fn()
    fn()
    t = time.perf_counter()
    fn()
    once = time.perf_counter() - t
    n = max(3, min(most, int(budget_s / max(once, 1e-6))))
    best = once
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def top_op(traceir, compiled, args):
    with traceir.profile() as prof:
        compiled(*args)
    total = {}
    for e in prof.trace()["traceEvents"]:
        if e.get("cat") == "cpu_op":
            total[e["name"]] = total.get(e["name"], 0) + e["dur"]
    if not total:
        return ""
    name, us = max(total.items(), key=lambda kv: kv[1])
    return f"{name} {100 * us / sum(total.values()):.0f}%"


def worker(threads, names, tier):
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    sys.path.insert(0, os.path.join(os.environ.get("TRACEIR_BUILD", os.path.join(ROOT, "build")),
                                    "python"))
    warnings.filterwarnings("ignore")
    import torch
    import traceir
    from zoo_models import MODELS
    torch.set_num_threads(threads)
    traceir.set_num_threads(threads)
    traceir.set_kernel_tier(tier)
    for name, build in large_models() + MODELS:
        if names and name not in names:
            continue
        row = {"name": name}
        try:
            model, args = build()
            compiled = traceir.compile(
                traceir.from_torch(model, args).run_passes("free-dead-tensors"), "cpu")
            with torch.no_grad():
                row["eager"] = best_of(lambda: model(*args))
            row["traceir"] = best_of(lambda: compiled(*args))
            row["top"] = top_op(traceir, compiled, args)
        except Exception as e:  # a model that does not run is a row, not a crash
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
        print(json.dumps(row), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", help="comma-separated names (default: all)")
    ap.add_argument("--tier", default="optimized", choices=("optimized", "portable"))
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    names = set(a.models.split(",")) if a.models else set()
    if a.worker:
        return worker(a.worker, names, a.tier)
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    for t in (int(x) for x in a.threads.split(",")):
        cmd = [sys.executable, __file__, "--worker", str(t), "--tier", a.tier]
        if a.models:
            cmd += ["--models", a.models]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode:
            sys.stderr.write(proc.stderr[-2000:])
        print(f"\n{t} thread{'s' if t > 1 else ''}, {a.tier} tier (best of N calls, ms; "
              "ratio = TraceIR / eager)\n")
        print("| model | TraceIR | PyTorch eager | ratio | top op in TraceIR |")
        print("| --- | ---: | ---: | ---: | --- |")
        ratios = []
        for r in rows:
            if "error" in r:
                print(f"| {r['name']} | - | - | - | {r['error']} |")
                continue
            ratio = r["traceir"] / r["eager"]
            ratios.append(ratio)
            print(f"| {r['name']} | {1e3 * r['traceir']:.2f} | {1e3 * r['eager']:.2f} | "
                  f"{ratio:.2f} | {r['top']} |")
        if ratios:
            geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            print(f"\n{len(ratios)} models: geometric mean {geo:.2f}, "
                  f"median {sorted(ratios)[len(ratios) // 2]:.2f}, max {max(ratios):.2f}")


if __name__ == "__main__":
    main()
