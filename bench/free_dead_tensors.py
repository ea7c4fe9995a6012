#!/usr/bin/env python3
"""Benchmark: cost of `trace-opt --free-dead-tensors` against parse+print.

Generates trace.graph modules of 10k, 100k and 1M ops shaped like real traces
(elementwise chains, views, matmuls against parameters, values that die a few
ops after their definition) and times, for each, `trace-opt` parse+print
alone and with `--free-dead-tensors` (best of --repeat runs, wall clock,
output to /dev/null). Both include MLIR's verifier; the pass run verifies
twice (after parsing and after the pass) and prints the inserted frees.

Usage: bench/free_dead_tensors.py [--build build] [--sizes 10000,100000,1000000]
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time

T = "tensor<64x64xf32>"


def generate(n_ops, path, seed=0):
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write(f'trace.graph @bench(%w: {T} {{trace.param = "w"}}, '
                f'%x: {T} {{trace.input = "x", trace.donated}}) -> {T} {{\n')
        live = ["%x"]
        for i in range(n_ops):
            prev = live[-1]
            r = rng.random()
            if r < 0.35:
                other = rng.choice(live[-8:])
                line = f'%{i} = pyop "add"({prev}, {other}) : ({T}, {T}) -> {T}'
            elif r < 0.55:
                op = rng.choice(["relu", "tanh", "sigmoid", "neg"])
                line = f'%{i} = pyop "{op}"({prev}) : ({T}) -> {T}'
            elif r < 0.70:
                line = f'%{i} = pyop "t"({prev}) : ({T}) -> {T}'
            elif r < 0.85:
                line = f'%{i} = pyop "matmul"({prev}, %w) : ({T}, {T}) -> {T}'
            else:
                line = f'%{i} = pyop "mul"({prev}, 0.5) : ({T}) -> {T}'
            f.write("  " + line + "\n")
            live.append(f"%{i}")
            if len(live) > 64:
                live = live[-64:]
        f.write(f"  ret {live[-1]} : {T}\n}}\n")


def best_time(cmd, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def pass_time(trace_opt, path):
    """The pass's own execution time, from -mlir-timing."""
    out = subprocess.run([trace_opt, path, "--free-dead-tensors", "-o", os.devnull,
                          "-mlir-timing"], check=True, capture_output=True, text=True)
    m = re.search(r"([0-9.]+) \([ 0-9.]+%\)\s+FreeDeadTensors", out.stderr)
    return float(m.group(1)) if m else float("nan")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(root, "bench", "out"))
    args = ap.parse_args()
    trace_opt = os.path.join(args.build, "bin", "trace-opt")
    os.makedirs(args.out, exist_ok=True)

    print(f"{'ops':>9} | {'parse+print s':>13} | {'+free-dead-tensors s':>20} | {'ratio':>6} | "
          f"{'us/op base':>10} | {'us/op pass':>10} | {'pass alone s':>12}")
    print("-" * 99)
    for n in [int(s) for s in args.sizes.split(",")]:
        path = os.path.join(args.out, f"chain_{n}.mlir")
        if not os.path.exists(path):
            generate(n, path)
        base = best_time([trace_opt, path, "-o", os.devnull], args.repeat)
        withp = best_time([trace_opt, path, "--free-dead-tensors", "-o", os.devnull], args.repeat)
        alone = pass_time(trace_opt, path)
        print(f"{n:>9} | {base:>13.3f} | {withp:>20.3f} | {withp / base:>6.3f} | "
              f"{base / n * 1e6:>10.2f} | {withp / n * 1e6:>10.2f} | {alone:>12.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
