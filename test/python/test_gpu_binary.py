"""trace-translate --emit-gpu-binary checked with cuobjdump: the fatbin holds
SASS (and PTX) for the requested chip and one kernel per region that
gpu-kernel-outlining created.

cuobjdump comes from the PyPI package nvidia-cuda-cuobjdump (the toolkit here
ships none); its -sass listing needs nvdisasm (nvidia-cuda-nvdisasm), found
beside it. Both are in requirements-test.txt.
"""
import glob
import os
import re
import subprocess

import pytest

from traceir_testing import BIN, ROOT

FUNCS = os.path.join(ROOT, "test", "Conversion", "Inputs", "linalg-funcs.mlir")


def find_cuobjdump():
    try:
        import nvidia
    except ImportError:
        return None
    for base in nvidia.__path__:
        for path in sorted(glob.glob(os.path.join(base, "**", "bin", "cuobjdump"), recursive=True)):
            if os.access(path, os.X_OK):
                return path
    return None


CUOBJDUMP = find_cuobjdump()
pytestmark = pytest.mark.skipif(
    CUOBJDUMP is None, reason="cuobjdump not found: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")


def cuobjdump(*args):
    return subprocess.run([CUOBJDUMP, *args], check=True, capture_output=True, text=True).stdout


def outlined_kernels(chip):
    """The gpu.func names right after outlining (the pipeline's own dump)."""
    run = subprocess.run(
        [os.path.join(BIN, "trace-opt"), FUNCS, f"--trace-lower-to-gpu=chip={chip} merge-kernel-modules",
         "--mlir-print-ir-after=gpu-kernel-outlining", "-o", os.devnull],
        check=True, capture_output=True, text=True)
    names = re.findall(r"gpu\.func @(\w+)\(", run.stderr)
    assert names, run.stderr[:2000]
    return names


@pytest.mark.parametrize("chip", ["sm_90", "sm_80"])
def test_fatbin_has_sass_per_kernel(chip, tmp_path):
    out = tmp_path / "model.fatbin"
    subprocess.run([os.path.join(BIN, "trace-translate"), FUNCS, "--emit-gpu-binary", f"--chip={chip}",
                    "-o", str(out)], check=True)
    assert out.stat().st_size > 0

    # One cubin and one PTX, both for the requested architecture.
    listing = cuobjdump("-lelf", "-lptx", str(out))
    assert re.findall(r"ELF file\s+\d+: \S+\.(sm_\d+)\.cubin", listing) == [chip], listing
    assert re.findall(r"PTX file\s+\d+: \S+\.(sm_\d+)\.ptx", listing) == [chip], listing

    sass = cuobjdump("-sass", str(out))
    assert re.findall(r"code for (sm_\d+)", sass) == [chip], sass[:2000]
    functions = re.findall(r"Function : (\w+)", sass)
    # Merged into one module, each outlined kernel is renamed after its old
    # module (the outlining dump's names are the module names) plus the
    # fingerprint of its function's code.
    assert all(re.fullmatch(r"\w+_[0-9a-f]{8}", f) for f in functions), functions
    functions = [f[:-9] for f in functions]
    ir = subprocess.run(
        [os.path.join(BIN, "trace-opt"), FUNCS, f"--trace-lower-to-gpu=chip={chip}",
         "--mlir-print-ir-after=gpu-kernel-outlining", "-o", os.devnull],
        check=True, capture_output=True, text=True).stderr
    modules = re.findall(r"gpu\.module @(\w+)", ir)
    assert len(functions) == len(outlined_kernels(chip)) == len(modules)
    assert sorted(functions) == sorted(modules)
    # Every kernel has real instructions (not an empty stub).
    assert sass.count("EXIT") >= len(functions)


def test_bad_chip_writes_no_file(tmp_path):
    out = tmp_path / "bad.fatbin"
    run = subprocess.run([os.path.join(BIN, "trace-translate"), FUNCS, "--emit-gpu-binary", "--chip=sm_999",
                          "-o", str(out)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "unsupported chip 'sm_999'" in run.stderr
    assert not out.exists()


GRAPH = """
trace.graph @mlp(%w: tensor<16x8xf32> {trace.param = "w"}, %b: tensor<16xf32> {trace.param = "b"},
                 %x: tensor<4x8xf32> {trace.input = "x"}) -> tensor<64xf32> {
  %0 = pyop "linear"(%x, %w, %b) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = pyop "gelu"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = pyop "softmax"(%1, 1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = pyop "view"(%2, [64]) : (tensor<4x16xf32>) -> tensor<64xf32>
  ret %3 : tensor<64xf32>
}
"""


def test_fatbin_holds_the_kernels_trace_run_launches(tmp_path):
    """The contract of trace-run --gpu-binary: the fatbin that
    --emit-gpu-binary writes for a graph holds exactly the kernels, by
    name, that trace-run reads from the same graph's per-op host code."""
    graph = tmp_path / "mlp.mlir"
    graph.write_text(GRAPH)
    out = tmp_path / "mlp.fatbin"
    subprocess.run([os.path.join(BIN, "trace-translate"), str(graph), "--emit-gpu-binary",
                    "--chip=sm_90", "-o", str(out)], check=True)
    functions = re.findall(r"Function : (\w+)", cuobjdump("-sass", str(out)))
    plan = subprocess.run([os.path.join(BIN, "trace-run"), str(graph), "--print-kernel-plan"],
                          check=True, capture_output=True, text=True).stdout
    launched = re.findall(r"^    (\w+) grid", plan, flags=re.M)
    assert "3 of 4 ops" in plan, plan
    assert launched and sorted(functions) == sorted(set(launched)), (functions, plan)
    # One host function per op: every kernel belongs to one op's function.
    assert all(re.match(r"mlp__op[012]_(linear|gelu|softmax)_kernel", f) for f in functions), functions


@pytest.mark.parametrize("model", ["lstm", "gru"])
def test_word_lm_compiles_to_one_fatbin(model, tmp_path):
    # The eval word LM (examples/word_lm.trace, and its GRU form): embedding,
    # the recurrent layers' time loops launching their kernels from the
    # host, the decoder; every outlined kernel has SASS for sm_90.
    from test_graphs import word_lm_gru_graph
    from test_word_lm import TRACE, eval_trace_text, import_anf
    if model == "lstm":
        with open(TRACE) as f:
            text = import_anf(eval_trace_text(f.read()))
    else:
        text = word_lm_gru_graph(35, 20, 10000, 200, 200)
    graph, out = tmp_path / "g.mlir", tmp_path / "g.fatbin"
    graph.write_text(text)
    # The whole graph as one host function (not the runtime's per-op form).
    subprocess.run([os.path.join(BIN, "trace-translate"), str(graph), "--emit-gpu-binary", "--chip=sm_90",
                    "--per-op=false", "-o", str(out)], check=True)
    sass = cuobjdump("-sass", str(out))
    assert re.findall(r"code for (sm_\d+)", sass) == ["sm_90"]
    ir = subprocess.run(
        [os.path.join(BIN, "trace-opt"), str(graph), "--trace-lower-to-gpu=chip=sm_90",
         "--mlir-print-ir-after=gpu-kernel-outlining", "-o", os.devnull],
        check=True, capture_output=True, text=True).stderr
    # The host function (before the kernel modules) keeps the time loops of
    # both layers, with launches inside.
    host = ir[ir.index("func.func @"):ir.index("gpu.module @")]
    loops = host.split("scf.for")[1:]
    assert len(loops) == 2 and all("gpu.launch_func" in body for body in loops)
    assert sorted(re.findall(r"Function : (\w+)", sass)) == sorted(re.findall(r"gpu\.module @(\w+)", ir))
