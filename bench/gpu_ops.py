#!/usr/bin/env python3
"""Benchmark: the CUDA kernel tiers per op, against PyTorch eager, on the GPU.

The ops and shapes are kernel_bench.py's (the zoo models' own). The GPU
machine has no LLVM or MLIR, so this runs in two halves:

  --save DIR   here (the full build): traces each case and saves it for
               cuda as DIR/NN/cuda.trx with its parameters
               (scripts/gpu-bundle.sh calls it; a few hundred KiB in all:
               the inputs are drawn there, by kernel_bench.cases with the
               same seed);
  --run DIR    there (the runtime-only build, scripts/bundle/run.sh;
               `--device cpu` runs the same table on the CPU, a check of
               this script where there is no GPU):
               for each case, the op's kernel time in TraceIR's profile
               (CUDA events) at the optimized tier and at the portable
               tier, and eager's for the same call (CUDA events around
               it: its kernels and their launches), each the best of N runs
               after warm-up; for the memory-bound ops, the bytes the op's
               inputs and outputs hold over the optimized kernel's time
               (GB/s: the achieved bandwidth); and whether both tiers'
               outputs match eager's (a mismatch fails the run; dropout,
               drawn from another generator, by the fraction it keeps and
               the scaling of what it keeps).

Usage: TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/gpu_ops.py --save DIR
       python3 gpu_ops.py --run DIR [--runs 20]       (on the GPU machine)
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _cases(torch):
    sys.path.insert(0, HERE)
    import kernel_bench
    torch.manual_seed(0)
    return kernel_bench.cases(torch)


def save(out):
    import torch
    from safetensors.torch import save_file
    root = os.path.dirname(HERE)
    sys.path.insert(0, os.path.join(os.environ.get("TRACEIR_BUILD", os.path.join(root, "build")),
                                    "python"))
    sys.path.insert(0, os.path.join(root, "test", "python"))
    import traceir
    from traceir_testing import Fn
    os.makedirs(out, exist_ok=True)
    saved = 0
    for i, (name, shape, fn, args, *_) in enumerate(_cases(torch)):
        d = os.path.join(out, f"{i:02d}")
        os.makedirs(d, exist_ok=True)
        module = traceir.from_torch(Fn(fn), args)
        module.save_executable(os.path.join(d, "cuda.trx"), device="cuda")
        module.save_executable(os.path.join(d, "cpu.trx"), device="cpu")
        params = {k: (v if isinstance(v, torch.Tensor) else torch.from_numpy(v)).contiguous()
                  for k, v in module.params.items()}
        save_file(params, os.path.join(d, "params.safetensors"))
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"name": name, "shape": shape}, f)
        saved += 1
    print(f"gpu_ops: saved {saved} cases in {out}")


# Bound by arithmetic (products, convolutions) or reading a fraction of an
# input (embedding's rows): no bandwidth column.
NOT_MEMORY_BOUND = ("conv2d", "linear", "scaled_dot_product_attention", "embedding")


# Drawn from TraceIR's own generator, not eager's: compared by the fraction
# kept and the scaling of what is kept instead of element by element.
RANDOM = ("dropout",)


def _check(name, got, want, x, torch):
    """Raises AssertionError where TraceIR's output is not eager's."""
    if not name.startswith(RANDOM):
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)
        return
    kept, kept_eager = got != 0, want != 0
    if abs(kept.float().mean().item() - kept_eager.float().mean().item()) > 0.02:
        raise AssertionError(f"{name} keeps {kept.float().mean().item():.3f} of the elements, "
                             f"eager {kept_eager.float().mean().item():.3f}")
    scale = (want[kept_eager] / x[kept_eager]).mean()
    torch.testing.assert_close(got[kept], x[kept] * scale, rtol=1e-3, atol=1e-3)


def _nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts if hasattr(t, "element_size"))


def run(path, runs, device):
    import time
    import torch
    import traceir
    cuda = device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("gpu_ops: skipped: no CUDA device")
        return 0
    dev = torch.device(device)
    cases = _cases(torch)
    where = torch.cuda.get_device_name() if cuda else "the CPU"
    print(f"\nPer op on {where} (kernel time, best of {runs} runs, us; "
          "GB/s = bytes of inputs and outputs / optimized time; ratio = optimized / eager)\n")
    print("| op | shape | TraceIR optimized | TraceIR portable | PyTorch eager | ratio | GB/s "
          "| matches eager |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    failed = 0
    for i, (name, shape, fn, args, *_) in enumerate(cases):
        d = os.path.join(path, f"{i:02d}")
        trx = os.path.join(d, f"{device}.trx")
        if not os.path.isfile(trx):
            continue
        args = tuple(a.to(dev) if isinstance(a, torch.Tensor) else a for a in args)
        if isinstance(fn, torch.nn.Module):
            fn = fn.to(dev)
        exe = traceir.load_executable(trx, params=os.path.join(d, "params.safetensors"))
        with torch.no_grad():
            want = fn(*[a.clone() for a in args])
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        best, ok = {}, []
        for tier in ("optimized", "portable"):
            traceir.set_kernel_tier(tier)
            # In-place cases change their argument: run on copies.
            got = exe(*[a.clone() for a in args])
            got = list(got) if isinstance(got, (list, tuple)) else [got]
            try:
                for g, w in zip(got, want):
                    _check(name, torch.as_tensor(g).to(dev).float(), w.float(),
                           args[0].float(), torch)
                ok.append(True)
            except AssertionError:
                ok.append(False)
            with traceir.profile() as prof:
                for _ in range(runs):
                    exe(*args)
            per_op = {}
            for e in prof.trace()["traceEvents"]:
                if e.get("cat") == ("kernel" if cuda else "cpu_op"):
                    per_op.setdefault(e["name"], []).append(e["dur"])
            # The op doing the work: the graph's longest.
            best[tier] = max(min(v) for v in per_op.values()) if per_op else float("nan")
        traceir.set_kernel_tier("optimized")
        eager = float("inf")
        with torch.no_grad():
            for _ in range(2):
                fn(*args)
            for _ in range(runs):
                if cuda:
                    start = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    start.record()
                    fn(*args)
                    end.record()
                    end.synchronize()
                    t = start.elapsed_time(end) * 1e3
                else:
                    t0 = time.perf_counter()
                    fn(*args)
                    t = (time.perf_counter() - t0) * 1e6
                eager = min(eager, t)
        moved = _nbytes(args) + _nbytes(want)
        gbs = (f"{moved / (best['optimized'] * 1e3):.0f}"
               if best["optimized"] > 0 and not name.startswith(NOT_MEMORY_BOUND) else "-")
        match = "yes" if all(ok) else f"NO (optimized {ok[0]}, portable {ok[1]})"
        failed += not all(ok)
        print(f"| {name} | {shape} | {best['optimized']:.1f} | {best['portable']:.1f} "
              f"| {eager:.1f} | {best['optimized'] / eager:.2f} | {gbs} | {match} |")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="DIR")
    g.add_argument("--run", metavar="DIR")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    a = ap.parse_args()
    if a.save:
        return save(a.save)
    return run(a.run, a.runs, a.device)


if __name__ == "__main__":
    sys.exit(main())
