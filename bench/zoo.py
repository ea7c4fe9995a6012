"""The model zoo (test/python/zoo_models.py) through TraceIR's default path:
traceir.from_torch -> free-dead-tensors -> compile("cpu") -> run, against
eager. Prints one row a model: whether it ran, the relative error (norm of
out - ref over norm of ref), whether the measured peak equals the
predicted one, the time to import and to run, and for a model that does
not run the first reason (compile() names every op without a kernel).

    TRACEIR_BUILD=$PWD/build ~/.cache/traceir/venv/bin/python bench/zoo.py [--models a,b]

Needs torchvision and transformers (requirements-test.txt).
"""
import argparse
import os
import re
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
sys.path.insert(0, os.path.join(os.environ.get("TRACEIR_BUILD", os.path.join(ROOT, "build")),
                                "python"))

import torch  # noqa: E402

import traceir  # noqa: E402
from zoo_models import MODELS  # noqa: E402


def rel_err(got, want):
    got, want = got.double(), want.double()
    if not want.norm() > 0:
        raise ValueError("eager's output is all zeros: nothing to compare")
    return float((got - want).norm() / want.norm())


def run_model(build):
    """(ok, rel_err, peak_ok, import_s, run_s, reason)."""
    model, args = build()
    with torch.no_grad():
        want = model(*args)
    t0 = time.perf_counter()
    module = traceir.from_torch(model, args).run_passes("free-dead-tensors")
    t1 = time.perf_counter()
    compiled = traceir.compile(module, "cpu")
    t2 = time.perf_counter()
    got = compiled(*args)
    t3 = time.perf_counter()
    dev = compiled.memory_report()["devices"][0]
    peak_ok = dev["peak_bytes"] == dev["predicted_peak_bytes"]
    return rel_err(got, want), peak_ok, t1 - t0, t3 - t2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated names (default: all)")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    wanted = set(a.models.split(",")) if a.models else None
    rows, ran = [], 0
    for name, build in MODELS:
        if wanted and name not in wanted:
            continue
        try:
            err, peak_ok, t_import, t_run = run_model(build)
            ok = err <= 1e-4 and peak_ok
            ran += ok
            rows.append(f"| {name} | {'yes' if ok else 'no'} | {err:.1e} | "
                        f"{'yes' if peak_ok else 'NO'} | {t_import:.2f} | {t_run:.3f} | |")
        except Exception as e:  # noqa: BLE001 - reported in the table
            text = str(e).strip().splitlines()
            missing = re.findall(r"(?:no kernel for op|nor for) '(\w+)'", str(e))
            why = ("no kernel for " + ", ".join(missing) if missing else
                   f"{type(e).__name__}: {text[0] if text else ''}"[:160].replace("|", "/"))
            rows.append(f"| {name} | no | | | | | {why} |")
        print(rows[-1], flush=True)
    print(f"\n{ran} of {len(rows)} models run and match eager (relative error <= 1e-4, "
          "measured peak == predicted)\n")
    print("| model | runs | rel. error | peak == predicted | import s | run s | first failure |")
    print("| --- | --- | ---: | --- | ---: | ---: | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
