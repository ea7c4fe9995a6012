#!/usr/bin/env python3
"""Benchmark: the CPU kernel tiers per op, against PyTorch eager.

For each case (elementwise ops and shapes of the zoo's models: resnet's
activations and residual adds, a transformer's GELU, scaled adds and
layout copies; the fused row and channel kernels: attention's softmax,
layer_norm, eval batch_norm; reductions; training dropout; resnet's and mobilenet's convolutions and
resnet's pools; linear, attention, embedding and cat at a transformer's
and resnet's shapes), the op's own time in TraceIR's profile (its kernel plus
its result's allocation) at the optimized tier and at the portable tier,
the library TraceIR calls for it, called directly where that can be done
from Python (OpenBLAS's sgemm for linear: the library's floor), and eager's
time for the same call (also allocating its result), each the best of N
runs after warm-up. Each thread count runs in its own process
with OMP_WAIT_POLICY=PASSIVE (torch.set_num_threads and
traceir.set_num_threads to the same count), so one pool's spinning threads
do not slow the other's. With --separate, TraceIR and eager each run in a
process of their own under the environment's wait policy (OpenMP's
default: threads spin a while between parallel loops), as each would run
alone: passive threads sleep after every loop, and the two OpenMP runtimes
in one process (torch's own libgomp and the system's) then pay wake-ups of
different cost.

Usage: TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/kernel_bench.py [--runs 20] [--threads 1,2] [--only REGEX] [--separate]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cases(torch):
    F = torch.nn.functional
    r = lambda *s: torch.randn(*s)  # noqa: E731
    act = r(8, 64, 56, 56)         # resnet18's first stage at batch 8
    tok = r(8, 64, 1024)           # an MLP's hidden activations, B8 S64
    emb = r(8, 64, 256)            # an encoder's residual stream
    bn = torch.nn.BatchNorm2d(64).eval()
    with torch.no_grad():
        bn.running_mean.copy_(r(64))
        bn.running_var.copy_(r(64).abs() + 0.5)
    return [
        ("relu", "8x64x56x56", torch.relu, (act,)),
        # In place: the kernel alone, without its result's allocation.
        ("relu_ (in place)", "8x64x56x56", torch.relu_, (act.clone(),)),
        ("add (residual)", "8x64x56x56", torch.add, (act, r(8, 64, 56, 56))),
        ("mul (channel bcast)", "8x64x56x56 * 64x1x1", torch.mul, (act, r(64, 1, 1))),
        ("hardtanh (relu6)", "8x64x56x56", F.relu6, (act,)),
        ("gelu", "8x64x1024", F.gelu, (tok,)),
        ("gelu tanh", "8x64x1024", lambda x: F.gelu(x, approximate="tanh"), (tok,)),
        ("silu", "8x64x1024", F.silu, (tok,)),
        ("sigmoid", "8x64x1024", torch.sigmoid, (tok,)),
        ("tanh", "8x64x1024", torch.tanh, (tok,)),
        ("add alpha", "8x64x256", lambda a, b: torch.add(a, b, alpha=0.5), (emb, r(8, 64, 256))),
        ("mul number", "8x64x256", lambda a: a * 0.125, (emb,)),
        ("mul_ number (in place)", "8x64x256", lambda a: a.mul_(1.0), (emb.clone(),)),
        ("add (bias bcast)", "8x64x256 + 256", torch.add, (emb, r(256))),
        ("contiguous (transpose)", "8x64x256 -> 8x256x64",
         lambda a: a.transpose(1, 2).contiguous(), (emb,)),
        ("exp", "8x64x1024", torch.exp, (tok,)),
        # The fused row and channel kernels (CPU/Optimized/Norm.cpp).
        ("softmax (attention)", "8x8x64x64 dim=-1", lambda a: F.softmax(a, -1),
         (r(8, 8, 64, 64),)),
        ("softmax (dim=1)", "8x64x256 dim=1", lambda a: F.softmax(a, 1), (emb,)),
        ("layer_norm", "8x64x256 over 256",
         lambda a, w, b: F.layer_norm(a, (256,), w, b), (emb, r(256), r(256))),
        ("batch_norm (eval)", "8x64x56x56", bn, (act,)),
        # Reductions (Norm.cpp's ReduceRows): RMSNorm's mean over the hidden
        # dim (llama, mistral, qwen2), a sum over the sequence, a row max.
        ("mean (RMSNorm)", "8x64x1024 over 1024", lambda a: a.mean(-1, keepdim=True), (tok,)),
        ("sum (dim=1)", "8x64x256 over 64", lambda a: a.sum(1), (emb,)),
        ("amax", "8x8x64x64 dim=-1", lambda a: torch.amax(a, -1), (r(8, 8, 64, 64),)),
        # Training dropout (NN.cpp's dropoutDense): the draws, then the
        # scaling; each library draws with its own generator.
        ("dropout (train)", "8x64x1024 p=0.1", lambda a: F.dropout(a, 0.1, True), (tok,)),
        # Convolution and pooling (oneDNN at the optimized tier, 1x1s as
        # BLAS products; im2col + BLAS at the portable one): resnet18's stem
        # and stages at batch 8, a resnet50 bottleneck's 1x1, a mobilenet
        # depthwise 3x3, resnet's stem pool.
        ("conv2d 7x7 s2 (stem)", "8x3x224x224 -> 64",
         lambda x, w: F.conv2d(x, w, stride=2, padding=3), (r(8, 3, 224, 224), r(64, 3, 7, 7))),
        ("conv2d 3x3", "8x64x56x56 -> 64",
         lambda x, w: F.conv2d(x, w, padding=1), (act, r(64, 64, 3, 3))),
        ("conv2d 3x3", "8x128x28x28 -> 128",
         lambda x, w: F.conv2d(x, w, padding=1), (r(8, 128, 28, 28), r(128, 128, 3, 3))),
        ("conv2d 1x1", "8x256x56x56 -> 64",
         lambda x, w: F.conv2d(x, w), (r(8, 256, 56, 56), r(64, 256, 1, 1))),
        ("conv2d 3x3 depthwise", "8x96x56x56 g96",
         lambda x, w: F.conv2d(x, w, padding=1, groups=96), (r(8, 96, 56, 56), r(96, 1, 3, 3))),
        ("max_pool2d 3x3 s2 p1", "8x64x112x112",
         lambda x: F.max_pool2d(x, 3, 2, 1), (r(8, 64, 112, 112),)),
        ("avg_pool2d 2x2 s2", "8x256x28x28", lambda x: F.avg_pool2d(x, 2), (r(8, 256, 28, 28),)),
        # Matrix products (OpenBLAS at both tiers; "library" is its sgemm
        # alone into a preallocated result): a transformer's projections at
        # B8 S64, the same on a [S, B, E] view seen as [B, S, E], an MLP.
        ("linear", "8x64x256 -> 768", F.linear, (emb, r(768, 256), r(768)),
         openblas_linear(512, 256, 768)),
        ("linear (transposed batch)", "64x8x256^T -> 768",
         lambda x, w, b: F.linear(x.transpose(0, 1), w, b), (r(64, 8, 256), r(768, 256), r(768)),
         openblas_linear(512, 256, 768)),
        ("linear", "256x1024 -> 4096", F.linear, (r(256, 1024), r(4096, 1024), r(4096)),
         openblas_linear(256, 1024, 4096)),
        ("scaled_dot_product_attention", "8x8x64x32",
         F.scaled_dot_product_attention, (r(8, 8, 64, 32), r(8, 8, 64, 32), r(8, 8, 64, 32))),
        ("embedding", "8x64 of 30522x256",
         F.embedding, (torch.randint(0, 30522, (8, 64)), r(30522, 256))),
        ("cat", "2 x 8x64x56x56 dim=1", lambda a, b: torch.cat([a, b], 1), (act, act)),
    ]


def openblas_linear(M, K, N):
    """OpenBLAS's cblas_sgemm of [M, K] @ [N, K]^T into a preallocated [M,
    N], called directly (the library TraceIR's products call): a callable,
    or None where the library is not found."""
    import ctypes
    import ctypes.util
    import numpy as np
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
    except OSError:
        return None
    f = ctypes.POINTER(ctypes.c_float)
    lib.cblas_sgemm.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, f, ctypes.c_int, f,
                                                      ctypes.c_int, ctypes.c_float, f,
                                                      ctypes.c_int]
    a, w = np.random.rand(M, K).astype(np.float32), np.random.rand(N, K).astype(np.float32)
    c = np.empty((M, N), np.float32)
    ptr = lambda t: t.ctypes.data_as(f)  # noqa: E731

    def call():
        # On its own threads, the count of this run; back to one after,
        # where TraceIR keeps it (its pool splits its products itself).
        lib.openblas_set_num_threads(LIBRARY_THREADS)
        # 101 row-major, 111 no transpose, 112 transpose.
        lib.cblas_sgemm(101, 111, 112, M, N, K, 1.0, ptr(a), K, ptr(w), K, 0.0, ptr(c), N)
        lib.openblas_set_num_threads(1)
    return call


# The thread count the library column's calls run at (worker sets it).
LIBRARY_THREADS = 1


def worker(threads, runs, only, side="both"):
    sys.path.insert(0, os.path.join(os.environ.get("TRACEIR_BUILD", os.path.join(ROOT, "build")),
                                    "python"))
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    import torch
    import traceir
    from traceir_testing import Fn
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    traceir.set_num_threads(threads)
    global LIBRARY_THREADS
    LIBRARY_THREADS = threads
    rows = []
    for name, shape, fn, args, *lib in cases(torch):
        if only and not re.search(only, name):
            continue
        best = {"optimized": None, "portable": None}
        tiers = ("optimized", "portable") if side != "eager" else ()
        if tiers:
            compiled = traceir.compile(traceir.from_torch(Fn(fn), args), "cpu")
        for tier in tiers:
            traceir.set_kernel_tier(tier)
            for _ in range(2):
                compiled(*args)
            with traceir.profile() as prof:
                for _ in range(runs):
                    compiled(*args)
            # The op doing the work: the graph's longest (views take ~0).
            per_run = {}
            for e in prof.trace()["traceEvents"]:
                if e.get("cat") == "cpu_op":
                    per_run.setdefault(e["name"], []).append(e["dur"])
            best[tier] = max(min(d) for d in per_run.values())
        traceir.set_kernel_tier("optimized")
        eager = None
        if side != "traceir":
            eager = 1e30
            with torch.no_grad():
                for _ in range(2):
                    fn(*args)
                for _ in range(runs):
                    t = time.perf_counter()
                    fn(*args)
                    eager = min(eager, (time.perf_counter() - t) * 1e6)
        direct = None
        if lib and lib[0] and side != "eager":
            direct = 1e30
            for _ in range(runs + 2):
                t = time.perf_counter()
                lib[0]()
                direct = min(direct, (time.perf_counter() - t) * 1e6)
        rows.append((name, shape, best["optimized"], best["portable"], direct, eager))
    print(json.dumps(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="",
                    help="run only the ops whose name matches this regular expression")
    ap.add_argument("--separate", action="store_true",
                    help="TraceIR and eager in separate processes, under the environment's "
                         "OpenMP wait policy")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--side", default="both", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.runs, a.only, a.side)
    env = dict(os.environ) if a.separate else dict(os.environ, OMP_WAIT_POLICY="PASSIVE")

    def run_worker(threads, side):
        out = subprocess.run([sys.executable, __file__, "--worker", str(threads), "--runs",
                              str(a.runs), "--only", a.only, "--side", side],
                             env=env, check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    for t in (int(x) for x in a.threads.split(",")):
        if a.separate:
            # TraceIR's columns from one process, eager's from another.
            rows = [r[:5] + e[5:] for r, e in zip(run_worker(t, "traceir"), run_worker(t, "eager"))]
        else:
            rows = run_worker(t, "both")
        how = "separate processes" if a.separate else "one process, OMP_WAIT_POLICY=PASSIVE"
        print(f"\n{t} thread{'s' if t > 1 else ''} ({how}; best of {a.runs} runs, us; ratio = "
              "optimized / eager)\n")
        print("| op | shape | TraceIR optimized | TraceIR portable | library | PyTorch eager "
              "| ratio |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for name, shape, opt, port, direct, eager in rows:
            lib = "-" if direct is None else f"{direct:.0f}"
            print(f"| {name} | {shape} | {opt:.0f} | {port:.0f} | {lib} | {eager:.0f} "
                  f"| {opt / eager:.2f} |")


if __name__ == "__main__":
    main()
