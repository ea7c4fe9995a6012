#!/usr/bin/env python3
"""Benchmark: the traceir Python package's call overhead and import time.

1. Call overhead: `exe(x)` of a tiny compiled graph (x + 1, relu, * 2 on a
   4-element f32 tensor: three ops) against calling the same nn.Module
   eagerly, torch tensors in and out, single thread, under no_grad; µs per
   call, best of --repeat timings of --calls calls. Also numpy in/out.
2. Import time (`traceir.from_torch`, torch.export) of the word language
   model (2-layer LSTM), nn.TransformerEncoderLayer (when the runtime has its
   ops: else the import alone) and a 1,000-op chain, split into torch.export's
   own time and TraceIR's (building the graph node by node through
   traceir.ir and verifying it).

Usage: bench/python_bench.py [--build build] [--calls 20000] [--repeat 5]
"""
import argparse
import os
import sys
import time
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Tiny(__import__("torch").nn.Module):
    def forward(self, x):
        import torch
        return torch.relu(x + 1) * 2


class Chain(__import__("torch").nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        for i in range(self.n // 2):
            x = (x + 1) * 0.5
        return x


def best_us(fn, calls, repeat):
    return min(timeit.repeat(fn, number=calls, repeat=repeat)) / calls * 1e6


def import_time(traceir, torch, model, args, repeat=3):
    """(from_torch s, torch.export s, TraceIR's part s, from_torch(method=
    "jit") s), best of `repeat` each. TraceIR's part is from_torch with
    torch.export answering from a cache: building the graph through
    traceir.ir and verifying it."""
    total = export = ours = jit = float("inf")
    real_export = torch.export.export
    for _ in range(repeat):
        t0 = time.perf_counter()
        ep = real_export(model, args)
        t1 = time.perf_counter()
        traceir.from_torch(model, args)
        t2 = time.perf_counter()
        traceir.from_torch(model, args, method="jit")
        t3 = time.perf_counter()
        torch.export.export = lambda *a, **k: ep
        try:
            t4 = time.perf_counter()
            traceir.from_torch(model, args)
            t5 = time.perf_counter()
        finally:
            torch.export.export = real_export
        export, total, jit = min(export, t1 - t0), min(total, t2 - t1), min(jit, t3 - t2)
        ours = min(ours, t5 - t4)
    return total, export, ours, jit


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import torch
    import traceir
    from word_lm_inputs import RNNModel
    torch.set_num_threads(1)

    x = torch.randn(4)
    model = Tiny().eval()
    exe = traceir.compile(traceir.from_torch(model, (x,)).run_passes("free-dead-tensors"))
    assert torch.equal(exe(x), model(x))
    xn = x.numpy()
    with torch.no_grad():
        eager = best_us(lambda: model(x), args.calls, args.repeat)
    ours = best_us(lambda: exe(x), args.calls, args.repeat)
    ours_np = best_us(lambda: exe(xn), args.calls, args.repeat)
    print(f"call overhead, {type(model).__name__}: relu(x + 1) * 2 on f32[4] (3 ops), CPU, "
          f"best of {args.repeat} x {args.calls} calls")
    print(f"{'':>36} | {'us/call':>8}")
    print(f"{'PyTorch eager (module call)':>36} | {eager:>8.2f}")
    print(f"{'traceir exe(x), torch in/out':>36} | {ours:>8.2f}")
    print(f"{'traceir exe(x), numpy in/out':>36} | {ours_np:>8.2f}")
    print()

    rows = []
    torch.manual_seed(0)
    lm = RNNModel().eval()
    lm_args = (torch.randint(0, 10000, (35, 20)), (torch.zeros(2, 20, 200), torch.zeros(2, 20, 200)))
    rows.append(("word LM (LSTM)", lm, lm_args))
    layer = torch.nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True).eval()
    rows.append(("TransformerEncoderLayer E256", layer, (torch.randn(8, 64, 256),)))
    rows.append(("chain of 1,000 ops", Chain(1000).eval(), (torch.randn(16),)))
    print("import time, seconds, best of 3: from_torch (torch.export + TraceIR's part), and "
          "from_torch(method='jit')")
    print(f"{'model':>30} | {'ops':>5} | {'from_torch':>10} | {'torch.export':>12} | {'TraceIR':>8} | {'jit':>6}")
    for name, m, a in rows:
        total, export, ours, jit = import_time(traceir, torch, m, a)
        ops = str(traceir.from_torch(m, a)).count(' = pyop "')
        print(f"{name:>30} | {ops:>5} | {total:>10.3f} | {export:>12.3f} | {ours:>8.3f} | {jit:>6.3f}")


if __name__ == "__main__":
    main()
