#!/usr/bin/env python3
"""Benchmark: the profiler's cost on the CPU timeline, in microseconds per op.

A chain of N tiny ops (add of a scalar to a 1-element f32 tensor, each result
freed after its use: bench/runtime_bench.py's dispatch chain) is timed with
`trace-run --benchmark R`, without and with `--profile` (every run is then
recorded: a CPU range per op, the frees, the live-bytes counter). Writing the
trace happens after the timed runs and is reported on its own line. The
overhead is (profiled - unprofiled) / ops; each figure is the best of
--repeat alternating measurements, so both see the same machine state.

Usage: bench/profiler_bench.py [--build build] [--ops 10000] [--runs 20] [--repeat 5]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runtime_bench import ROOT, chain_us_per_op  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    plain, profiled = [], []
    for _ in range(args.repeat):
        plain.append(chain_us_per_op(args.build, args.ops, args.runs))
        profiled.append(chain_us_per_op(args.build, args.ops, args.runs,
                                        ["--profile", "@DIR/trace.json"]))
    base, prof = min(plain), min(profiled)
    print(f"profiler overhead, chain of {args.ops} tiny ops x {args.runs} runs (CPU), best of {args.repeat}")
    print(f"{'':>28} | {'us/op':>8}")
    print(f"{'unprofiled':>28} | {base:>8.3f}")
    print(f"{'profiled (--profile)':>28} | {prof:>8.3f}")
    print(f"{'overhead':>28} | {prof - base:>8.3f}")
    print(f"(all runs: unprofiled {', '.join(f'{v:.3f}' for v in plain)}; "
          f"profiled {', '.join(f'{v:.3f}' for v in profiled)})")


if __name__ == "__main__":
    main()
