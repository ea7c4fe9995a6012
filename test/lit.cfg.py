# lit configuration for TraceIR's FileCheck tests.
import os
import shutil

import lit.formats

config.name = "TraceIR"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".trace", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.traceir_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt", "lib", "python", "Inputs"]

config.environment["PATH"] = os.pathsep.join(
    [config.traceir_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%traceir_src", config.traceir_src_root))
# FileCheck for printed floats, with a tolerance (test/lib/fpcheck.py): no
# test may depend on bit-identical BLAS or libm results across CPUs.
config.substitutions.append(("%fpcheck", "python3 " + os.path.join(config.traceir_src_root, "test", "lib", "fpcheck.py")))
config.substitutions.append(("%st", "python3 " + os.path.join(config.traceir_src_root, "test", "Runtime", "Inputs", "st.py")))
# Corrupted saved executables (.trx) for the loader's error tests.
config.substitutions.append(("%trx", "python3 " + os.path.join(config.traceir_src_root, "test", "Runtime", "Inputs", "trx.py")))
# flatc regenerates the committed FlatBuffers header of saved executables
# (test/Runtime/executable-file-schema.test); building never needs it.
if shutil.which("flatc"):
    config.available_features.add("flatc")
# Pass the sanitizer settings of scripts/test.sh through to the tools.
for var in ["ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# The CPU pipeline of the numerical --convert-trace-to-linalg tests:
# `mlir-opt %t.mlir %linalg-to-llvm | %run-main` runs a module of linalg on
# tensors that has a `main`. convert-math-to-libm: math.erf (gelu) has no LLVM
# intrinsic; erff comes from the runner's libm.
_llvm_lib = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(("%linalg-to-llvm",
    "--one-shot-bufferize=bufferize-function-boundaries"
    " --convert-linalg-to-loops --convert-math-to-llvm --convert-math-to-libm"
    " --expand-strided-metadata --lower-affine --convert-scf-to-cf"
    " --convert-to-llvm --reconcile-unrealized-casts"))
config.substitutions.append(("%run-main",
    "mlir-runner -e main -entry-point-result=void -shared-libs="
    + os.path.join(_llvm_lib, "libmlir_runner_utils.so") + ","
    + os.path.join(_llvm_lib, "libmlir_c_runner_utils.so")))
