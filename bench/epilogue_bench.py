#!/usr/bin/env python3
"""Benchmark: what fusing in-place activations into the call before them
saves (lib/Runtime/Epilogues.cpp).

For torchvision models whose blocks end in batch_norm -> relu_ or
batch_norm -> hardtanh_ (relu6), at batch 8 x 224^2 and one thread: the
profile's time per op name (the activations, and the producers that now
clamp as they write) and the whole call, with fusion on and with
TRACEIR_FUSE_EPILOGUES=0, each the best of N profiled calls after two
warm-up calls. Both executables are built in one process, fusion being
planned at an executable's first run.

Usage: TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/epilogue_bench.py [--runs 5] [--models resnet18,mobilenet_v2]
"""
import argparse
import collections
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = ("batch_norm", "conv2d", "relu_", "hardtanh_")


def measure(compiled, x, runs):
    """The best time per op name (us, summed over a call) and their sum."""
    import traceir
    for _ in range(2):
        compiled(x)
    best = {}
    for _ in range(runs):
        with traceir.profile() as prof:
            compiled(x)
        per_op = collections.Counter()
        for e in prof.trace()["traceEvents"]:
            if e.get("cat") == "cpu_op":
                per_op[e["name"]] += e["dur"]
        for k, v in per_op.items():
            best[k] = min(best.get(k, float("inf")), v)
    return best, sum(best.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(os.environ.get("TRACEIR_BUILD", os.path.join(ROOT, "build")),
                                    "python"))
    import torch
    import torchvision
    import traceir
    torch.manual_seed(0)
    torch.set_num_threads(1)
    traceir.set_num_threads(1)
    print("1 thread, batch 8 x 224^2 (each op name's time summed over a call, best of %d profiled "
          "calls, ms; all ops: the sum of the bests)\n" % a.runs)
    print("| model | fusion | " + " | ".join(OPS) + " | all ops |")
    print("| --- | --- |" + " ---: |" * (len(OPS) + 1))
    for name in a.models.split(","):
        m = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(8, 3, 224, 224)
        graph = traceir.from_torch(m, (x,))
        for fuse in ("1", "0"):
            os.environ["TRACEIR_FUSE_EPILOGUES"] = fuse
            per_op, total = measure(traceir.compile(graph, "cpu"), x, a.runs)
            cells = " | ".join("%.2f" % (per_op[o] / 1e3) if o in per_op else "-" for o in OPS)
            print(f"| {name} | {'on' if fuse == '1' else 'off'} | {cells} | {total / 1e3:.1f} |")
    os.environ.pop("TRACEIR_FUSE_EPILOGUES", None)


if __name__ == "__main__":
    main()
