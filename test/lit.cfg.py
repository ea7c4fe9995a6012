# lit configuration for TraceIR's FileCheck tests.
import os
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
config.substitutions.append(("%st", "python3 " + os.path.join(config.traceir_src_root, "test", "Runtime", "Inputs", "st.py")))
# Pass the sanitizer settings of scripts/test.sh through to the tools.
for var in ["ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
