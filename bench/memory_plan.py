#!/usr/bin/env python3
"""Benchmark: the memory plan's arena against its lower bound (issue 17).

For every model of the zoo (test/python/zoo_models.py: forward graphs at
its sizes) and the training steps of test_joint_models.py (resnet18, a
BERT encoder, GPT-2, the word LM: method="joint"), through from_torch ->
trace-opt --free-dead-tensors ->
--test-print-memory-plan: the buffers planned, the arena the planner keeps
(the best of its orders), the lower bound (the most aligned planned bytes
alive at once), greedy by size's own arena, the order kept, and
StorageLiveness's predicted peak (unaligned, returned values included).
Then the planner's time on the synthetic graphs of free_dead_tensors.py
(10k and 100k ops): trace-opt with --free-dead-tensors alone, and with the
plan printed too (its output to /dev/null), best of --repeat runs.

Usage: TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/memory_plan.py [--sizes 10000,100000] [--repeat 3]
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TRACEIR_BUILD", os.path.join(ROOT, "build"))
OPT = os.path.join(BUILD, "bin", "trace-opt")
LINE = re.compile(r"arena (\d+) bytes, lower bound (\d+), greedy by size (\d+), "
                  r"order ([a-z x]+); predicted peak (\d+)")


def plan(text):
    freed = subprocess.run([OPT, "-free-dead-tensors"], input=text, capture_output=True,
                           text=True, check=True).stdout
    out = subprocess.run([OPT, "-test-print-memory-plan", "-o", os.devnull], input=freed,
                         capture_output=True, text=True, check=True).stderr
    m = LINE.search(out)
    if not m or "verified" not in out:
        raise RuntimeError(out[-500:])
    return out.count("buffer "), int(m[1]), int(m[2]), int(m[3]), m[4], int(m[5])


def table(title, graphs):
    """Plans each (name, graph text) and prints a row, then a summary."""
    print(f"\n{title}\n")
    print("| graph | buffers | arena | lower bound | arena / bound | greedy by size / bound "
          "| order kept | predicted peak |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    ratios, greedy = [], []
    for name, text in graphs:
        n, arena, bound, by_size, order, peak = plan(text)
        ratios.append(arena / bound)
        greedy.append(by_size / bound)
        print(f"| {name} | {n} | {arena} | {bound} | {arena / bound:.3f} | "
              f"{by_size / bound:.3f} | {order} | {peak} |", flush=True)
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
    print(f"\n{len(ratios)} graphs: arena / bound geometric mean {gm(ratios):.4f}, worst "
          f"{max(ratios):.3f}; greedy by size alone {gm(greedy):.4f}, worst {max(greedy):.3f}")


def models():
    sys.path.insert(0, os.path.join(BUILD, "python"))
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    import traceir
    import test_joint_models
    import zoo_models
    table("Forward graphs (the zoo):",
          ((name, str(traceir.from_torch(*build()))) for name, build in zoo_models.MODELS))
    table("Training steps (method=\"joint\", test_joint_models.py's):",
          ((name, str(traceir.from_torch(*build(), method="joint")))
           for name, build in test_joint_models.MODELS))


def timing(sizes, repeat):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from free_dead_tensors import generate
    print("\n| ops | free-dead-tensors (s) | + memory plan (s) |")
    print("| ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"g{n}.mlir")
            generate(n, path)
            best = {}
            for key, extra in (("free", []), ("plan", ["-test-print-memory-plan"])):
                for _ in range(repeat):
                    t = time.perf_counter()
                    subprocess.run([OPT, path, "-free-dead-tensors", *extra, "-o", os.devnull],
                                   check=True, stderr=subprocess.DEVNULL)
                    best[key] = min(best.get(key, 1e30), time.perf_counter() - t)
            print(f"| {n} | {best['free']:.2f} | {best['plan']:.2f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    models()
    sizes = [int(s) for s in a.sizes.split(",") if s]
    if sizes:
        timing(sizes, a.repeat)


if __name__ == "__main__":
    main()
