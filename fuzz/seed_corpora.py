#!/usr/bin/env python3
"""Collects seed inputs for the fuzz harnesses from the tests and examples.

  python3 fuzz/seed_corpora.py OUT_DIR

writes OUT_DIR/<harness>/<name> for each harness: the 2017 traces (whole
.trace files and the split-file cases of test/Import/*.test) for
anf-importer-fuzzer; every MLIR test file, cut at `// -----`, for
trace-parser-fuzzer and executable-fuzzer; and, where given with
--python-graphs DIR, graphs the Python tests wrote. scripts/fuzz.sh merges
these into fuzz/corpus/<harness> with libFuzzer's -merge=1, which keeps only
inputs that add coverage. The safetensors seeds are files of their own in
fuzz/corpus/safetensors-fuzzer.
"""
import argparse
import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def split_file(text):
    """split-file's `#--- name` / `//--- name` cases."""
    parts = re.split(r"^(?:#|//)--- (\S+)\n", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def put(out, harness, text):
    data = text.encode()
    if not data.strip():
        return
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--python-graphs", help="graphs the Python tests wrote "
                    "(TRACEIR_FUZZ_SEED_DIR=DIR pytest test/python)")
    args = ap.parse_args()
    out = args.out
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
