#!/usr/bin/env python3
"""Collects seed inputs for the fuzz harnesses from the tests and examples.

  python3 fuzz/seed_corpora.py OUT_DIR

writes OUT_DIR/<harness>/<name> for each harness: the 2017 traces (whole
.trace files and the split-file cases of test/Import/*.test) for
anf-importer-fuzzer; every MLIR test file, cut at `// -----`, for
trace-parser-fuzzer and executable-fuzzer; and, where given with
--python-graphs DIR, graphs the Python tests wrote. For trx-fuzzer it saves
executables (trace-translate --emit-executable, from --tools DIR) of the
graphs of test/Runtime, test/Transforms and examples/, freed and not, for
the CPU and for CUDA (emitting needs no GPU), one with generated kernels, a
few corrupted copies, and of executable-fuzzer's corpus graphs (every op
family), freed, for the CPU. scripts/fuzz.sh merges these into
fuzz/corpus/<harness> with libFuzzer's -merge=1, which keeps only inputs
that add coverage. The safetensors seeds are files of their own in
fuzz/corpus/safetensors-fuzzer.
"""
import argparse
import hashlib
import os
import re
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def split_file(text):
    """split-file's `#--- name` / `//--- name` cases."""
    parts = re.split(r"^(?:#|//)--- (\S+)\n", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def put(out, harness, text):
    data = text.encode() if isinstance(text, str) else text
    if not data.strip():
        return
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def run_tool(tools, *args):
    """Runs a TraceIR tool; its output file, or None when it fails."""
    try:
        subprocess.run([os.path.join(tools, args[0]), *args[1:]], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return True
    except (OSError, subprocess.CalledProcessError):
        return False


def trx_graphs():
    """(name, MLIR text or 2017 trace path) of the graphs trx-fuzzer's seeds
    are saved from."""
    graphs = []
    for sub in ("Runtime", "Transforms"):
        d = os.path.join(ROOT, "test", sub)
        for f in sorted(os.listdir(d)):
            if not f.endswith((".mlir", ".test")):
                continue
            text = open(os.path.join(d, f), errors="replace").read()
            if f.endswith(".mlir"):
                for k, chunk in enumerate(text.split("// -----")):
                    graphs.append(("%s-%d" % (f, k), chunk))
            elif f.endswith(".test"):
                for name, case in split_file(text).items():
                    if name.endswith(".mlir"):
                        graphs.append((f + "-" + name, case))
    for f in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if f.endswith(".trace"):
            graphs.append((f, os.path.join(ROOT, "examples", f)))
    return graphs


def corpus_graphs():
    """executable-fuzzer's corpus, smallest first: graphs of the op families
    the test graphs above lack (conv2d, batch_norm, losses, attention, ...).
    trx_seeds keeps the first that saves for each op name not seen yet, so
    that a few dozen cover every op the Python tests run."""
    d = os.path.join(ROOT, "fuzz", "corpus", "executable-fuzzer")
    if not os.path.isdir(d):
        return []
    files = sorted(os.listdir(d), key=lambda f: (os.path.getsize(os.path.join(d, f)), f))
    return [("corpus-" + f, open(os.path.join(d, f), errors="replace").read())
            for f in files]


def corrupted(trx):
    """Copies of a valid .trx that loading must refuse: truncated, without
    the magic, of a newer major version, and garbage after the header."""
    return [
        trx[: len(trx) // 2],
        trx[:12],
        b"TRACEIRY" + trx[8:],
        trx[:8] + struct.pack("<II", 2, 0) + trx[16:],
        trx[:8] + struct.pack("<II", 0, 1) + trx[16:],
        trx[:16] + bytes(range(256)) * 2,
    ]


def trx_seeds(out, tools):
    """Saved executables for trx-fuzzer (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        def path(n):
            return os.path.join(tmp, n)

        first = None
        seen_ops = set()
        graphs = [(n, g, True) for n, g in trx_graphs()]
        graphs += [(n, g, False) for n, g in corpus_graphs()]
        for name, graph, every_form in graphs:
            ops = set(re.findall(r'pyop "(\w+)"', graph))
            if not every_form and ops <= seen_ops:
                continue
            if graph.endswith(".trace"):
                if not run_tool(tools, "trace-translate", graph, "--import-anf",
                                "-o", path("g.mlir")):
                    continue
            else:
                with open(path("g.mlir"), "w") as f:
                    f.write(graph)
            if not run_tool(tools, "trace-opt", path("g.mlir"),
                            "-free-dead-tensors", "-o", path("freed.mlir")):
                continue
            # The tests' graphs freed and not, for both devices; the
            # corpus' many graphs freed, for the CPU (what trx-fuzzer runs).
            forms = [("freed.mlir", ("cpu", "cuda")), ("g.mlir", ("cpu",))]
            if not every_form:
                forms = [("freed.mlir", ("cpu",))]
            for mlir, devices in forms:
                for device in devices:
                    if run_tool(tools, "trace-translate", path(mlir),
                                "--emit-executable", "--device", device, "-o",
                                path("g.trx")):
                        data = open(path("g.trx"), "rb").read()
                        put(out, "trx-fuzzer", data)
                        seen_ops |= ops
                        if first is None and name.startswith("mlp"):
                            first = (data, path(mlir))
        if first:
            # Generated kernels (a fatbin) and the refusals, once.
            if run_tool(tools, "trace-translate", first[1], "--emit-executable",
                        "--device", "cuda", "--generated-kernels", "--chip",
                        "sm_90", "-o", path("gen.trx")):
                put(out, "trx-fuzzer", open(path("gen.trx"), "rb").read())
            for data in corrupted(first[0]):
                put(out, "trx-fuzzer", data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--python-graphs", help="graphs the Python tests wrote "
                    "(TRACEIR_FUZZ_SEED_DIR=DIR pytest test/python)")
    ap.add_argument("--tools", default=os.path.join(ROOT, "build", "bin"),
                    help="where trace-opt and trace-translate are, for "
                    "trx-fuzzer's seeds (default: build/bin)")
    args = ap.parse_args()
    out = args.out
    trx_seeds(out, args.tools)
    if args.python_graphs:
        for f in sorted(os.listdir(args.python_graphs)):
            text = open(os.path.join(args.python_graphs, f)).read()
            for h in ("trace-parser-fuzzer", "executable-fuzzer"):
                put(out, h, text)
    for dirpath, _, files in os.walk(os.path.join(ROOT, "test")):
        for f in files:
            path = os.path.join(dirpath, f)
            text = open(path, errors="replace").read()
            if f.endswith(".trace"):
                put(out, "anf-importer-fuzzer", text)
            elif f.endswith(".test"):
                for name, case in split_file(text).items():
                    if name.endswith(".trace"):
                        put(out, "anf-importer-fuzzer", case)
                    elif name.endswith(".mlir"):
                        for h in ("trace-parser-fuzzer", "executable-fuzzer"):
                            put(out, h, case)
            elif f.endswith(".mlir"):
                for chunk in text.split("// -----"):
                    for h in ("trace-parser-fuzzer", "executable-fuzzer"):
                        put(out, h, chunk)
    for f in os.listdir(os.path.join(ROOT, "examples")):
        if f.endswith(".trace"):
            put(out, "anf-importer-fuzzer", open(os.path.join(ROOT, "examples", f)).read())


if __name__ == "__main__":
    main()
