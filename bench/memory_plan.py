#!/usr/bin/env python3
"""Benchmark: the memory plan's arena against its lower bound (issue 17).

For every model of the zoo (test/python/zoo_models.py: forward graphs at
its sizes) and the training steps of test_joint_models.py (resnet18, a
BERT encoder, GPT-2, the word LM: method="joint"), through from_torch ->
trace-opt --free-dead-tensors ->
--test-print-memory-plan: the buffers planned, the arena the planner keeps
(the best of its orders), the lower bound (the most aligned planned bytes
alive at once), greedy by size's own arena, the order kept,
StorageLiveness's predicted peak (unaligned, returned values included),
the bound after --reorder-for-memory, after --reorder-for-memory then
--reinplace (elementwise ops in the storage of an operand that dies there)
and the bound no order of the graph as traced can go below
(-test-print-order-bound). The same for a training step of every zoo
model (train mode, the loss the mean square of its output).
Then, for resnet18, the BERT encoder, GPT-2 and the word LM, forward and
training step, what a run holds: the bound in the traced order, after
--reorder-for-memory, after it and --reinplace, and the bound no order can
go below (-test-print-order-bound), the planner's arena, what
the allocator held for the run without a plan and with one (its peak less
the parameters it holds), and PyTorch eager's own peak on the same step
(torch.profiler's memory events, as runtime_bench.py measures it), one
thread.
Then trace-opt's time on the synthetic graphs of free_dead_tensors.py
(--sizes, default 10k, 100k and 1M ops): parsing and printing alone, with
--free-dead-tensors, with --plan-memory too, and with
--reorder-for-memory and --reinplace first, best of --repeat runs.

Usage: TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/memory_plan.py [--sizes 10000,100000,1000000] [--repeat 3] [--parts forward,training,zoo-training,runs,timing]
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


REORDER = ["-reorder-for-memory"]
SCHEDULE = ["-reorder-for-memory", "-reinplace"]


def plan(text, first=()):
    """Plans `text` after the passes `first` (which refuse frees: first)
    and --free-dead-tensors."""
    freed = subprocess.run([OPT, *first, "-free-dead-tensors"], input=text,
                           capture_output=True, text=True, check=True).stdout
    out = subprocess.run([OPT, "-test-print-memory-plan", "-o", os.devnull], input=freed,
                         capture_output=True, text=True, check=True).stderr
    m = LINE.search(out)
    if not m or "verified" not in out:
        raise RuntimeError(out[-500:])
    return out.count("buffer "), int(m[1]), int(m[2]), int(m[3]), m[4], int(m[5])


ORDER_BOUND = re.compile(r"order bound (\d+) bytes")


def order_bound(text):
    """The bound no order of the graph can go below (-test-print-order-bound:
    for each op, the planned bytes every order holds while it runs)."""
    out = subprocess.run([OPT, "-test-print-order-bound", "-o", os.devnull], input=text,
                         capture_output=True, text=True, check=True).stderr
    return int(ORDER_BOUND.search(out)[1])


def table(title, graphs):
    """Plans each (name, graph text) and prints a row, then a summary."""
    print(f"\n{title}\n")
    print("| graph | buffers | arena | lower bound | arena / bound | greedy by size / bound "
          "| order kept | predicted peak | bound, reordered | bound, reordered + reinplaced "
          "| bound, any order |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    ratios, greedy, reordered, scheduled = [], [], [], []
    for name, text in graphs:
        if isinstance(text, Exception):
            print(f"| {name} | not traced: {str(text).splitlines()[0][:120]} |", flush=True)
            continue
        n, arena, bound, by_size, order, peak = plan(text)
        r_arena, r_bound = plan(text, REORDER)[1:3]
        s_arena, s_bound = plan(text, SCHEDULE)[1:3]
        cut = order_bound(text)
        ratios += [arena / bound, r_arena / r_bound, s_arena / s_bound]
        greedy.append(by_size / bound)
        reordered.append(r_bound / bound)
        scheduled.append(s_bound / bound)
        print(f"| {name} | {n} | {arena} | {bound} | {arena / bound:.3f} | "
              f"{by_size / bound:.3f} | {order} | {peak} | {r_bound} | {s_bound} | {cut} |",
              flush=True)
    if not reordered:
        return
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
    print(f"\n{len(reordered)} graphs: arena / bound (traced, reordered, reordered and "
          f"reinplaced) geometric mean {gm(ratios):.4f}, worst {max(ratios):.3f}; greedy by "
          f"size alone {gm(greedy):.4f}, worst {max(greedy):.3f}; reordered bound / traced "
          f"bound geometric mean {gm(reordered):.4f}, best {min(reordered):.3f}, worst "
          f"{max(reordered):.3f}; reordered and reinplaced bound / traced bound geometric "
          f"mean {gm(scheduled):.4f}, best {min(scheduled):.3f}, worst {max(scheduled):.3f}; "
          f"lowered by 10% or more: {sum(r <= 0.9 for r in scheduled)}")


def zoo_steps(traceir, zoo_models):
    """(name, joint graph text or the exception that stopped it) for a
    training step of each zoo model: in train mode (batch norm's batch
    statistics, dropout as configured), the loss the mean square of its
    output; parameters the loss does not reach (a pooler) frozen, as
    aot_autograd refuses a parameter without a gradient."""
    from test_joint_models import Step

    def loss(model, *args):
        return model(*args).square().mean()

    for name, build in zoo_models.MODELS:
        model, args = build()
        model.train()
        for p_name, p in model.named_parameters():
            if "pooler" in p_name:
                p.requires_grad_(False)
        try:
            yield name, str(traceir.from_torch(Step(model, loss), args, method="joint"))
        except Exception as e:  # noqa: BLE001 - reported in the table
            yield name, e


def models(parts):
    sys.path.insert(0, os.path.join(BUILD, "python"))
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    import traceir
    import test_joint_models
    import zoo_models
    if "forward" in parts:
        table("Forward graphs (the zoo):",
              ((name, str(traceir.from_torch(*build()))) for name, build in zoo_models.MODELS))
    if "training" in parts:
        table("Training steps (method=\"joint\", test_joint_models.py's):",
              ((name, str(traceir.from_torch(*build(), method="joint")))
               for name, build in test_joint_models.MODELS))
    if "zoo-training" in parts:
        table("Training steps of the zoo's models (method=\"joint\", train mode, the loss "
              "the mean square of the output):", zoo_steps(traceir, zoo_models))


def held(module, args):
    """What the allocator held for a run of `module` (compiled for the CPU)
    on `args` at its peak, less the parameters it holds for every run: the
    third run's, once the first has learned where kernel scratch goes and
    the caches hold what a steady loop reuses."""
    import traceir
    compiled = traceir.compile(module, "cpu")
    for _ in range(3):
        compiled(*args)
    dev = compiled.memory_report()["devices"][0]
    params = sum(v.numel() * v.element_size() for v in compiled.state_dict().values())
    return dev["allocated_peak_bytes"] - params, dev


def runs():
    """Bounds, arenas and what a run holds, against eager's peak."""
    sys.path.insert(0, os.path.join(BUILD, "python"))
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import traceir
    import test_joint_models
    from runtime_bench import torch_peak
    torch.set_num_threads(1)
    traceir.set_num_threads(1)
    print("\nWhat a run holds, in kB (10^3 bytes; one thread):\n")
    print("| graph | bound, traced order | bound, reordered | bound, reordered + reinplaced "
          "| bound, any order | arena (planner) | allocator, no plan | allocator, planned "
          "| eager peak |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    mb = lambda b: f"{b / 1e3:.1f}"  # noqa: E731
    for name, build in test_joint_models.MODELS:
        for method in ("export", "joint"):
            torch.manual_seed(0)
            step, args = build()
            step.train(method == "joint")
            module = traceir.from_torch(step, args, method=method)
            text = str(module)
            _, arena, bound, _, _, _ = plan(text)
            rbound = plan(text, REORDER)[2]
            sbound = plan(text, SCHEDULE)[2]
            cut = order_bound(text)
            freed = module.clone().run_passes("free-dead-tensors")
            plain, _ = held(freed, args)
            planned, dev = held(freed.clone().run_passes("plan-memory"), args)
            assert dev["lower_bound_bytes"] == bound, (dev, bound)

            def eager():
                if method == "joint":
                    step.zero_grad(set_to_none=True)
                    (loss,) = step(*args)
                    loss.backward()
                else:
                    with torch.no_grad():
                        step(*args)
            eager()  # warm
            peak = torch_peak(eager)
            label = f"{name} {'training step' if method == 'joint' else 'forward'}"
            print(f"| {label} | {mb(bound)} | {mb(rbound)} | {mb(sbound)} | {mb(cut)} "
                  f"| {mb(arena)} "
                  f"| {mb(plain)} | {mb(planned)} | {mb(peak)} |", flush=True)


def timing(sizes, repeat):
    """trace-opt's time on free_dead_tensors.py's synthetic graphs: parsing
    and printing alone, then with the passes, best of `repeat` runs."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from free_dead_tensors import generate
    pipelines = [("parse + print", []),
                 ("free-dead-tensors", ["-free-dead-tensors"]),
                 ("+ plan-memory", ["-free-dead-tensors", "-plan-memory"]),
                 ("reorder-for-memory, reinplace, + free, + plan",
                  [*SCHEDULE, "-free-dead-tensors", "-plan-memory"])]
    print("\ntrace-opt, seconds (best of %d):\n" % repeat)
    print("| ops | " + " | ".join(name for name, _ in pipelines) + " |")
    print("| ---: |" + " ---: |" * len(pipelines))
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"g{n}.mlir")
            generate(n, path)
            best = []
            for _, flags in pipelines:
                t_best = 1e30
                for _ in range(repeat):
                    t = time.perf_counter()
                    subprocess.run([OPT, path, *flags, "-o", os.devnull], check=True,
                                   stderr=subprocess.DEVNULL)
                    t_best = min(t_best, time.perf_counter() - t)
                best.append(t_best)
            print(f"| {n} | " + " | ".join(f"{t:.2f}" for t in best) + " |", flush=True)


PARTS = ("forward", "training", "zoo-training", "runs", "timing")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--parts", default=",".join(PARTS),
                    help="which tables, comma-separated: " + ", ".join(PARTS))
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    if parts - set(PARTS):
        ap.error(f"unknown parts {sorted(parts - set(PARTS))}; choose from {', '.join(PARTS)}")
    models(parts)
    if "runs" in parts:
        runs()
    sizes = [int(s) for s in a.sizes.split(",") if s]
    if sizes and "timing" in parts:
        timing(sizes, a.repeat)


if __name__ == "__main__":
    main()
