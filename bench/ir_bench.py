#!/usr/bin/env python3
"""Benchmark: walking, rebuilding and rewriting a graph from Python
(traceir.ir) against torch.fx, and from_torch on GPT-2 against torch.export.

1. A chain of N elementwise ops on f32[16] (relu, neg, exp, add(x, y) in
   turn; each add also reads the value before the previous one, so every
   fourth value has two users), held by TraceIR (parsed once from its text:
   building it with traceir.Graph is what "rebuild" times) and, with the
   same nodes, as a torch.fx.Graph of call_function nodes (torch.relu, ...).
   Timed on both sides, best of --repeat:
   - walk: `for n in g.nodes: n.op, n.target, n.args` (g.nodes included),
     TraceIR's "first" on a fresh copy of the module (nothing read yet),
     "again" on one walked before; fx has one figure for both;
   - walk + users: the same, and `n.users` of every node;
   - rebuild: a new graph made node by node from the walked one (TraceIR:
     traceir.Graph, add_input, g.pyop(n.target, *args) with the result types
     inferred by the registry, set_outputs; fx: fx.Graph(), placeholder,
     create_node(n.op, n.target, args, kwargs), output). fx's graph_copy is
     printed beside it for reference;
   - rewrite: every relu replaced by a neg of its input (inserting_before,
     replace_all_uses_with, erase_node), on a fresh copy each time.
2. GPT-2 (GPT2LMHeadModel, random weights, eval, 24 layers, n_embd 768,
   64 tokens, use_cache=False, return_dict=False): traceir.from_torch against
   torch.export.export alone, without and with decompositions
   (from_torch(decompose=True) is export + ExportedProgram.run_decompositions
   + TraceIR's part; torch's side is export + run_decompositions), best of
   --gpt2-repeat rounds (which side goes first alternates), after one
   untimed export. "TraceIR's part" is from_torch
   with export (and run_decompositions) answering from a cache: writing the
   text, parsing and verifying it.

Usage: bench/ir_bench.py [--build build] [--nodes 10000,100000] [--repeat 3]
                         [--edit-repeat R] [--gpt2-repeat 3] [--no-graph] [--no-gpt2]
GPT-2 needs `transformers` (bench/requirements.txt; scripts/setup.sh --bench).
"""
import argparse
import gc
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = ("relu", "neg", "exp", "add")


def chain_text(n):
    """The TraceIR text of the N-op chain."""
    t = "tensor<16xf32>"
    lines = ["module {",
             f'  trace.graph @chain(%x: {t} {{trace.input = "x"}}) -> {t} {{']
    prev = cur = "%x"
    for i in range(n):
        op = OPS[i % 4]
        if op == "add":
            lines.append(f'    %v{i} = trace.pyop "add"({cur}, {prev}) : ({t}, {t}) -> {t}')
            prev = cur
        else:
            lines.append(f'    %v{i} = trace.pyop "{op}"({cur}) : ({t}) -> {t}')
        cur = f"%v{i}"
    lines += [f"    trace.ret {cur} : {t}", "  }", "}"]
    return "\n".join(lines) + "\n"


def chain_fx(n):
    """The same chain as a torch.fx.Graph."""
    import torch
    import torch.fx as fx
    fns = {"relu": torch.relu, "neg": torch.neg, "exp": torch.exp, "add": torch.add}
    g = fx.Graph()
    prev = cur = g.placeholder("x")
    for i in range(n):
        op = OPS[i % 4]
        if op == "add":
            node = g.call_function(fns[op], (cur, prev))
            prev = cur
        else:
            node = g.call_function(fns[op], (cur,))
        cur = node
    g.output(cur)
    return g


def best(fn, repeat, setup=None):
    """Best wall time of `repeat` calls of fn(setup()) (setup untimed), and
    the last result."""
    t, out = float("inf"), None
    for _ in range(repeat):
        arg = setup() if setup else None
        gc.collect()
        t0 = time.perf_counter()
        out = fn(arg) if setup else fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


# Both sides ----------------------------------------------------------------
# The same reads on a traceir.Graph and a torch.fx.Graph: both have `nodes`,
# and nodes with `op`, `target`, `args` and `users`.

def walk(g):
    tensors = 0
    for n in g.nodes:
        n.op, n.target
        tensors += len(n.args)
    return tensors


def walk_users(g):
    tensors = users = 0
    for n in g.nodes:
        n.op, n.target
        tensors += len(n.args)
        users += len(n.users)
    return tensors, users


# TraceIR ------------------------------------------------------------------

def tr_rebuild(g):
    import traceir
    from traceir import Value
    ng = traceir.Graph(g.name)
    env = {}
    for v in g.inputs:
        env[v] = ng.add_input(v.name, v.type)
    for n in g.nodes:
        op = n.op
        if op == "pyop":
            node = ng.pyop(n.target, *[env[a] if isinstance(a, Value) else a for a in n.args])
            env[n.results[0]] = node.results[0]
        elif op == "ret":
            ng.set_outputs(*[env[a] for a in n.args])
        else:
            raise AssertionError(f"the chain has no '{op}' node")
    return ng


def tr_rewrite(m):
    g = m.graphs[0]
    for n in g.nodes:
        if n.target == "relu":
            with g.inserting_before(n):
                neg = g.pyop("neg", *n.args)
            n.results[0].replace_all_uses_with(neg.results[0])
            g.erase_node(n)
    return g


# torch.fx -----------------------------------------------------------------

def fx_rebuild(g):
    import torch.fx as fx
    ng = fx.Graph()
    env = {}
    for n in g.nodes:
        if n.op == "placeholder":
            env[n] = ng.placeholder(n.target)
        elif n.op == "output":
            ng.output(env[n.args[0]])
        else:
            env[n] = ng.create_node(n.op, n.target,
                                    tuple(env[a] if isinstance(a, fx.Node) else a for a in n.args),
                                    dict(n.kwargs))
    return ng


def fx_graph_copy(g):
    import torch.fx as fx
    ng = fx.Graph()
    ng.output(ng.graph_copy(g, {}))
    return ng


def fx_rewrite(g):
    import torch
    for n in list(g.nodes):
        if n.target is torch.relu:
            with g.inserting_before(n):
                neg = g.call_function(torch.neg, n.args)
            n.replace_all_uses_with(neg)
            g.erase_node(n)
    return g


def graph_bench(traceir, n, repeat, edit_repeat):
    import torch
    m = traceir.Module.parse(chain_text(n), name=f"chain{n}")
    g = m.graphs[0]
    fg = chain_fx(n)
    rows = []

    # "first": the first walk of a freshly parsed copy (nothing cached);
    # "again": walking the same graph once more.
    fresh = lambda: m.clone().graphs[0]  # noqa: E731
    for label, fn in (("walk (op, target, args)", walk), ("walk + users", walk_users)):
        t_first, a = best(fn, repeat, setup=fresh)
        fn(g)  # untimed: "again" walks a graph walked before
        t_again, a2 = best(lambda: fn(g), repeat)
        t_fx, b = best(lambda: fn(fg), repeat)
        # fx's g.nodes also holds the placeholder (TraceIR's inputs are
        # g.inputs): its users are the only difference.
        x_users = len(next(iter(fg.nodes)).users)
        want = b if fn is walk else (b[0], b[1] - x_users)
        assert a == a2 == want, (a, a2, b)
        rows.append((label + ", first", t_first, t_fx))
        rows.append((label + ", again", t_again, t_fx))

    t_tr, ng = best(lambda: tr_rebuild(g), edit_repeat)
    t_fx, nfg = best(lambda: fx_rebuild(fg), repeat)
    assert [x.target for x in ng.nodes] == [x.target for x in g.nodes]
    assert len(nfg.nodes) == len(fg.nodes)
    rows.append(("rebuild (node by node)", t_tr, t_fx))
    t_copy, _ = best(lambda: fx_graph_copy(fg), repeat)
    rows.append(("  fx graph_copy", None, t_copy))
    del ng, nfg

    t_tr, rg = best(tr_rewrite, edit_repeat, setup=m.clone)
    t_fx, rfg = best(fx_rewrite, repeat, setup=lambda: fx_graph_copy(fg))
    relus = sum(1 for i in range(n) if OPS[i % 4] == "relu")
    assert len(rg.nodes) == n + 1 and not any(x.target == "relu" for x in rg.nodes)
    assert sum(1 for x in rfg.nodes if x.target is torch.neg) == \
        sum(1 for x in fg.nodes if x.target is torch.neg) + relus
    rows.append((f"rewrite ({relus:,} relu -> neg)", t_tr, t_fx))
    return rows


def print_graph_table(n, rows):
    print(f"\n{n:,}-op chain (f32[16]): seconds, best of the runs; "
          "ratio = TraceIR / torch.fx")
    print(f"| {'operation':<30} | {'TraceIR s':>10} | {'torch.fx s':>10} | {'ratio':>7} "
          f"| {'TraceIR µs/node':>15} | {'fx µs/node':>10} |")
    print(f"| {'-' * 30} | {'-' * 9}: | {'-' * 9}: | {'-' * 6}: | {'-' * 14}: | {'-' * 9}: |")
    for name, t_tr, t_fx in rows:
        tr = f"{t_tr:.4f}" if t_tr is not None else "—"
        ratio = f"{t_tr / t_fx:.2f}" if t_tr is not None else "—"
        tr_us = f"{t_tr / n * 1e6:.2f}" if t_tr is not None else "—"
        print(f"| {name:<30} | {tr:>10} | {t_fx:>10.4f} | {ratio:>7} | {tr_us:>15} "
              f"| {t_fx / n * 1e6:>10.2f} |")
    sys.stdout.flush()


# GPT-2 --------------------------------------------------------------------

def gpt2_bench(traceir, torch, layers, tokens, repeat):
    import contextlib
    import warnings
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=layers, n_embd=768, n_head=12, n_positions=128, vocab_size=50257)
    model = GPT2LMHeadModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, tokens))
    kwargs = {"use_cache": False, "return_dict": False}
    real_export = torch.export.export

    def export():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return real_export(model, (ids,), kwargs)

    @contextlib.contextmanager
    def cached(ep, dep):
        """torch.export (and run_decompositions) answering from a cache."""
        if dep is not None:
            ep.run_decompositions = lambda *a, **k: dep
        torch.export.export = lambda *a, **k: ep
        try:
            yield
        finally:
            torch.export.export = real_export
            if dep is not None:
                del ep.run_decompositions

    inf = float("inf")
    t = {k: inf for k in ("export", "export+dec", "from_torch", "from_torch+dec", "ours", "ours+dec")}
    errors = {}
    ops = {}
    with torch.no_grad():
        export()  # untimed: the first export imports and warms torch's caches
        for i in range(repeat):
            # Alternate which side goes first: this machine drifts.
            for side in (("torch", "traceir") if i % 2 == 0 else ("traceir", "torch")):
                if side == "torch":
                    gc.collect()
                    t0 = time.perf_counter()
                    ep = export()
                    t1 = time.perf_counter()
                    dep = ep.run_decompositions()
                    t2 = time.perf_counter()
                    t["export"] = min(t["export"], t1 - t0)
                    t["export+dec"] = min(t["export+dec"], t2 - t0)
                    continue
                for key, decompose in (("from_torch", False), ("from_torch+dec", True)):
                    try:
                        gc.collect()
                        t0 = time.perf_counter()
                        m = traceir.from_torch(model, (ids,), kwargs, decompose=decompose)
                        t[key] = min(t[key], time.perf_counter() - t0)
                        ops[key] = len(m.graphs[0].nodes)
                        del m
                    except Exception as e:  # report it, time the rest
                        errors[key] = f"{type(e).__name__}: {e}"
            # TraceIR's part, with this round's export answering.
            for key, decompose in (("ours", False), ("ours+dec", True)):
                if ("from_torch+dec" if decompose else "from_torch") in errors:
                    continue
                with cached(ep, dep if decompose else None):
                    gc.collect()
                    t0 = time.perf_counter()
                    traceir.from_torch(model, (ids,), kwargs, decompose=decompose)
                    t[key] = min(t[key], time.perf_counter() - t0)
            fx_nodes = (len(ep.graph.nodes), len(dep.graph.nodes))
    print(f"\nGPT-2 ({layers} layers, n_embd 768, {tokens} tokens, random weights, eval): "
          f"seconds, best of {repeat}")
    print(f"| {'':<24} | {'fx nodes':>8} | {'TraceIR ops':>11} | {'torch s':>8} "
          f"| {'from_torch s':>12} | {'ratio':>6} | {'TraceIR part s':>14} |")
    print(f"| {'-' * 24} | {'-' * 7}: | {'-' * 10}: | {'-' * 7}: | {'-' * 11}: | {'-' * 5}: "
          f"| {'-' * 13}: |")
    for label, theirs, key, ours, nodes in (
            ("export", "export", "from_torch", "ours", fx_nodes[0]),
            ("export + decompositions", "export+dec", "from_torch+dec", "ours+dec", fx_nodes[1])):
        if key in errors:
            print(f"| {label:<24} | {nodes:>8} | {'—':>11} | {t[theirs]:>8.3f} | {'failed':>12} "
                  f"| {'—':>6} | {'—':>14} |")
            continue
        print(f"| {label:<24} | {nodes:>8} | {ops[key]:>11} | {t[theirs]:>8.3f} "
              f"| {t[key]:>12.3f} | {t[key] / t[theirs]:>6.3f} | {t[ours]:>14.3f} |")
    for key, err in errors.items():
        print(f"from_torch ({key}) failed: {err[:2000]}")
    sys.stdout.flush()


def configuration(torch, traceir):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        import transformers
        tv = transformers.__version__
    except ImportError:
        tv = "not installed"
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"python {platform.python_version()} ({sys.executable}), torch {torch.__version__}, "
          f"transformers {tv}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores ({cpu}), {platform.system()} "
          f"{platform.release()}; load average {', '.join(f'{x:.2f}' for x in load)}")
    print(f"threads: torch {torch.get_num_threads()}, traceir {traceir.num_threads()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--nodes", default="10000,100000",
                    help="chain sizes, comma-separated (default 10000,100000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per timing (best is kept)")
    ap.add_argument("--edit-repeat", type=int, default=None,
                    help="runs of TraceIR's rebuild and rewrite (default: --repeat)")
    ap.add_argument("--gpt2-repeat", type=int, default=3)
    ap.add_argument("--gpt2-layers", type=int, default=24)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--no-graph", action="store_true", help="skip the chain benchmark")
    ap.add_argument("--no-gpt2", action="store_true", help="skip the GPT-2 benchmark")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import torch
    import traceir
    print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"traceir from {os.path.dirname(traceir.__file__)}")
    configuration(torch, traceir)
    if not args.no_graph:
        edit_repeat = args.edit_repeat or args.repeat
        for n in (int(s) for s in args.nodes.split(",")):
            print_graph_table(n, graph_bench(traceir, n, args.repeat, edit_repeat))
    if not args.no_gpt2:
        try:
            import transformers  # noqa: F401
        except ImportError:
            print("\nGPT-2: skipped, `transformers` is not installed "
                  "(scripts/setup.sh --bench installs bench/requirements.txt)")
            return
        gpt2_bench(traceir, torch, args.gpt2_layers, args.tokens, args.gpt2_repeat)


if __name__ == "__main__":
    main()
