"""Run by scripts/check-runtime-nocuda.sh against the Python module of a
runtime-only build without CUDA (PYTHONPATH=BUILD/python): it imports, runs
a CPU saved executable (test/Runtime/mlp.mlir's, made by the full build's
trace-translate) to mlp.mlir's values with its frees, and a saved
executable for cuda, or cuda asked for, raises traceir.TraceIRError saying
the runtime was built without CUDA.

  python nocuda_smoke.py BUILD CASES   # CASES/mlp.trx, CASES/mlp-cuda.trx
"""
import os
import sys

import numpy as np

import traceir

build, cases = sys.argv[1], sys.argv[2]
assert os.path.realpath(traceir.__file__).startswith(os.path.realpath(build)), traceir.__file__
assert not traceir.HAS_COMPILER, "expected the runtime-only module"

params = {"fc.weight": np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], np.float32),
          "fc.bias": np.array([0, 0, 0, -100], np.float32)}
x = np.array([[1, 2, 3], [-1, -2, -3]], np.float32)
exe = traceir.load_executable(os.path.join(cases, "mlp.trx"), params)
with traceir.profile() as prof:
    out0, out1 = exe(x)
# mlp.mlir's FP lines.
want0 = [[0.424289, 0.723766, 1.53783, 0.314117], [0.587144, 0.736883, 1.14391, 0.532059]]
want1 = [[0.0871443, 0.25], [0.236883, 0.25], [0.643914, 0.25], [0.0320586, 0.25]]
assert np.allclose(out0, want0, rtol=1e-5, atol=1e-5), out0
assert np.allclose(out1, want1, rtol=1e-5, atol=1e-5), out1
report = exe.memory_report()["devices"][0]
assert report["device"] == "cpu" and report["frees"] == 4, report
assert report["peak_bytes"] == report["predicted_peak_bytes"] == 80, report
ops = [e["name"] for e in prof.trace()["traceEvents"] if e.get("cat") == "cpu_op"]
assert ops == ["linear", "relu", "softmax", "t", "sum", "add"], ops

for path, device in [("mlp-cuda.trx", None), ("mlp.trx", "cuda"), ("mlp-cuda.trx", "cuda:1")]:
    try:
        traceir.load_executable(os.path.join(cases, path), params, device=device)
    except traceir.TraceIRError as e:
        assert "this TraceIR runtime was built without CUDA" in str(e), str(e)
        assert "it runs on the CPU only" in str(e), str(e)
    else:
        raise AssertionError(f"{path} on {device or 'its device'} loaded without CUDA")
print(f"traceir without CUDA: runs mlp.trx on the CPU, refuses cuda ({traceir.__file__})")
