"""The CPU twin: the hand-written linalg funcs lowered by --trace-lower-to-cpu
and run by trace-twin-run (ExecutionEngine, _mlir_ciface_ entry points) on
random inputs match PyTorch."""
import os
import subprocess

import pytest
import torch
from safetensors.torch import load_file, save_file

from traceir_testing import BIN, ROOT

FUNCS = os.path.join(ROOT, "test", "Conversion", "Inputs", "linalg-funcs.mlir")

CASES = {
    "add_relu": ([(64, 128), (64, 128)], lambda a, b: torch.relu(a + b)),
    "linear": ([(16, 32), (32, 24), (24,)], lambda x, w, b: x @ w + b),
    "row_sum": ([(20, 50)], lambda x: x.sum(dim=1)),
    "softmax": ([(8, 40)], lambda x: torch.softmax(x, dim=1)),
}


def twin_run(func, args, tmp_path):
    inputs, outputs = tmp_path / "in.safetensors", tmp_path / "out.safetensors"
    save_file({f"arg{i}": a.contiguous() for i, a in enumerate(args)}, str(inputs))
    subprocess.run([os.path.join(BIN, "trace-twin-run"), FUNCS, "--func", func, "--inputs", str(inputs),
                    "--outputs", str(outputs)], check=True)
    return load_file(str(outputs))


@pytest.mark.parametrize("func", sorted(CASES))
def test_matches_torch(func, tmp_path):
    shapes, reference = CASES[func]
    gen = torch.Generator().manual_seed(0)
    args = [torch.randn(s, generator=gen) * 3 for s in shapes]
    out = twin_run(func, args, tmp_path)
    assert list(out) == ["output0"]
    torch.testing.assert_close(out["output0"], reference(*args), rtol=1e-5, atol=1e-5)


def test_lowered_module_has_c_interface():
    lowered = subprocess.run([os.path.join(BIN, "trace-opt"), FUNCS, "--trace-lower-to-cpu"],
                             check=True, capture_output=True, text=True).stdout
    for func in CASES:
        assert f"llvm.func @_mlir_ciface_{func}(" in lowered


def test_wrong_input_shape_is_an_error(tmp_path):
    inputs, outputs = tmp_path / "in.safetensors", tmp_path / "out.safetensors"
    save_file({"arg0": torch.zeros(3, 3)}, str(inputs))
    run = subprocess.run([os.path.join(BIN, "trace-twin-run"), FUNCS, "--func", "row_sum", "--inputs",
                          str(inputs), "--outputs", str(outputs)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "input arg0 does not match tensor<20x50xf32>" in run.stderr
    assert not outputs.exists()
