"""Run by scripts/test.sh against the package that `pip install .` built:
the installed traceir (not build/python) imports, runs a graph with its
frees, and profiles it."""
import numpy as np

import traceir

assert "/site/traceir/" in traceir.__file__, traceir.__file__
m = traceir.Module.parse("""trace.graph @g(%x: tensor<3xf32> {trace.input = "x"}) -> tensor<3xf32> {
  %0 = pyop "exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = pyop "add"(%0, 1.0) : (tensor<3xf32>) -> tensor<3xf32>
  ret %1 : tensor<3xf32>
}""").run_passes("free-dead-tensors")
exe = traceir.compile(m)
with traceir.profile() as prof:
    out = exe(np.zeros(3, np.float32))
assert np.array_equal(out, np.full(3, 2.0, np.float32)), out
assert exe.memory_report()["devices"][0]["frees"] == 1
assert [e["name"] for e in prof.trace()["traceEvents"] if e.get("cat") == "cpu_op"] == ["exp", "add"]
print(f"pip-installed traceir works: {traceir.__file__}")
