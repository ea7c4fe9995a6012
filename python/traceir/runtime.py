"""What TraceIR's runtime-only build offers (no LLVM or MLIR): load a saved
executable, run it, profile it, read its memory report, set the thread
count and the kernel tier. The full build has all of it too.

    from traceir import runtime
    exe = runtime.load_executable("model.trx", params="weights.safetensors")
    with runtime.profile("trace.json"):
        out = exe(x)
    print(exe.memory_report())
"""
from . import (CompiledGraph, Profile, TraceIRError, kernel_tier, load_executable, num_threads,
               profile, set_kernel_tier, set_num_threads)

__all__ = ["CompiledGraph", "Profile", "TraceIRError", "kernel_tier", "load_executable",
           "num_threads", "profile", "set_kernel_tier", "set_num_threads"]
