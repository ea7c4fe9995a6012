#!/usr/bin/env python3
"""Benchmark: runtime dispatch overhead and peak memory, against PyTorch.

1. Dispatch: a chain of N tiny ops (add of a scalar to a 1-element f32
   tensor), each result freed right after its use. TraceIR: `trace-run
   --benchmark` times whole runs of the built Executable (no build, no I/O);
   the 1-element kernel's own work is a few nanoseconds, so the figure is the
   per-op dispatch cost (call + allocation + free). PyTorch: the same chain
   run eagerly from C++ through ATen (bench/torch_dispatch.cpp, compiled
   here against the pip wheel's libtorch, InferenceMode) and from Python
   (`x = x + 1.0`, under torch.no_grad()).
2. Peak memory of whole graphs: TraceIR without frees (the 2017 leak), with
   frees, the analysis' prediction, and PyTorch eager's own peak on the same
   model (torch.profiler's CPU memory events, live bytes at their maximum),
   all counting only the tensors created by the forward pass.

Usage: bench/runtime_bench.py [--build build] [--ops 10000]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
import traceir_testing  # noqa: E402
from test_graphs import transformer_layer_graph  # noqa: E402
from test_word_lm import eval_trace_text, import_anf  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "examples"))
from word_lm_inputs import RNNModel  # noqa: E402


def chain_us_per_op(build, n, runs=50, extra=()):
    """trace-run --benchmark on a chain of n `add(x, 1.0)` on a 1-element
    tensor, each result freed after its use: microseconds per op."""
    lines = ['trace.graph @chain(%x: tensor<1xf32> {trace.input = "x"}) -> tensor<1xf32> {']
    prev = "%x"
    for i in range(n):
        lines.append(f'  %{i} = pyop "add"({prev}, 1.0) : (tensor<1xf32>) -> tensor<1xf32>')
        prev = f"%{i}"
    lines += [f"  ret {prev} : tensor<1xf32>", "}"]
    with tempfile.TemporaryDirectory() as d:
        g = os.path.join(d, "chain.mlir")
        open(g, "w").write("\n".join(lines) + "\n")
        freed = os.path.join(d, "chain.freed.mlir")  # never -o the input: it is mmapped
        subprocess.run([os.path.join(build, "bin", "trace-opt"), g, "--free-dead-tensors", "-o", freed],
                       check=True)
        g = freed
        from safetensors.torch import save_file
        inp = os.path.join(d, "in.safetensors")
        save_file({"x": torch.zeros(1)}, inp)
        extra = [a.replace("@DIR", d) for a in extra]
        out = subprocess.run([os.path.join(build, "bin", "trace-run"), g, "--inputs", inp,
                              "--benchmark", str(runs), *extra],
                             check=True, capture_output=True, text=True).stdout
    ms = float(out.split(" ms per run")[0].split()[-1])
    return ms * 1e3 / n


def dispatch(build, n):
    traceir_us = chain_us_per_op(build, n)
    x = torch.zeros(1)
    with torch.no_grad():
        for _ in range(1000):  # warm-up
            x = x + 1.0
        best = float("inf")
        for _ in range(5):
            x = torch.zeros(1)
            start = time.perf_counter()
            for _ in range(n):
                x = x + 1.0
            best = min(best, time.perf_counter() - start)
    return traceir_us, torch_cpp_dispatch(build, n), best * 1e6 / n


def torch_cpp_dispatch(build, n):
    """PyTorch eager's cost per op from C++ (bench/torch_dispatch.cpp)."""
    torch_dir = os.path.dirname(torch.__file__)
    src = os.path.join(ROOT, "bench", "torch_dispatch.cpp")
    exe = os.path.join(build, "bench", "torch_dispatch")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
        lib = os.path.join(torch_dir, "lib")
        subprocess.run(["g++", "-O2", "-std=c++20", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", src,
                        "-I", os.path.join(torch_dir, "include"), "-L", lib, "-ltorch_cpu", "-lc10",
                        f"-Wl,-rpath,{lib}", "-o", exe], check=True)
    out = subprocess.run([exe, str(n)], check=True, capture_output=True, text=True).stdout
    return float(out)


def torch_peak(fn):
    """Peak live bytes of CPU tensors allocated while `fn` runs."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted((e for e in prof.events() if e.cpu_memory_usage != 0),
                    key=lambda e: e.time_range.start)
    live = peak = 0
    for e in events:
        live += e.cpu_memory_usage
        peak = max(peak, live)
    return peak


def graph_peaks(text, inputs, params):
    out = {}
    for free in (False, True):
        _, report = traceir_testing.run_graph(text, inputs, params, free=free, check_frees=False)
        dev = report["devices"][0]
        out[free] = (dev["peak_bytes"], dev["predicted_peak_bytes"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ops", type=int, default=10000)
    args = ap.parse_args()
    traceir_testing.BIN = os.path.join(args.build, "bin")
    torch.set_num_threads(1)

    t_us, c_us, p_us = dispatch(args.build, args.ops)
    print(f"dispatch overhead, chain of {args.ops} tiny ops (CPU)")
    print(f"{'':>32} | {'us/op':>8}")
    print(f"{'TraceIR (Executable, C++)':>32} | {t_us:>8.3f}")
    print(f"{'PyTorch eager (from C++, ATen)':>32} | {c_us:>8.3f}")
    print(f"{'PyTorch eager (from Python)':>32} | {p_us:>8.3f}")
    print()

    rows = []
    torch.manual_seed(0)
    B, S, E, H, F = 8, 64, 256, 8, 1024
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.1, batch_first=True).eval()
    x = torch.randn(B, S, E)
    peaks = graph_peaks(transformer_layer_graph(B, S, E, H, F), {"src": x}, dict(layer.state_dict()))

    def run_layer():
        with torch.no_grad():
            layer(x)
    rows.append((f"transformer layer B{B} S{S} E{E}", peaks, torch_peak(run_layer)))

    torch.manual_seed(0)
    model = RNNModel().eval()
    tokens = torch.randint(0, 10000, (35, 20))
    hidden = (torch.zeros(2, 20, 200), torch.zeros(2, 20, 200))
    with open(os.path.join(ROOT, "examples", "word_lm.trace")) as f:
        text = import_anf(eval_trace_text(f.read()))
    peaks = graph_peaks(text, {"tokens": tokens, "hidden.0": hidden[0], "hidden.1": hidden[1]},
                        dict(model.state_dict()))

    def run_lm():
        with torch.no_grad():
            model(tokens, hidden)
    rows.append(("word LM (eval) 35x20", peaks, torch_peak(run_lm)))

    print("peak memory of the forward pass, bytes (CPU)")
    print(f"{'graph':>32} | {'no frees':>10} | {'frees':>10} | {'predicted':>10} | {'PyTorch eager':>13}")
    for name, p, tp in rows:
        print(f"{name:>32} | {p[False][0]:>10} | {p[True][0]:>10} | {p[True][1]:>10} | {tp:>13}")


if __name__ == "__main__":
    main()
