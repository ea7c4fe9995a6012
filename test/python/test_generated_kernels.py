"""trace-run with the compiler's kernels (--compile-gpu-kernels, --gpu-binary)
against the runtime's own kernels on the same GPU, for whole graphs: the
ops the lowering covers run generated kernels, the others the runtime's,
and the outputs agree. CUDA only (scripts/gpu-check.sh); what needs no GPU
(the plan, argument packing, the fatbin's kernel names) is tested in
unittests/GeneratedKernelsTest.cpp, test/Runtime/gpu-binary.test and
test_gpu_binary.py.
"""
import json
import os
import re
import subprocess

import pytest
import torch

from gpu_models import GRAPHS, mlp
from traceir_testing import BIN, run_graph

# On cuda only (conftest.py's `device`): skipped, with one line saying why,
# where trace-run finds no CUDA device.
pytestmark = [pytest.mark.usefixtures("device"), pytest.mark.devices("cuda")]

torch.manual_seed(0)


def device_chip():
    """cuda:0's chip name, e.g. sm_90, for trace-translate --chip."""
    cap = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.split()
    return "sm_" + cap[0].replace(".", "") if cap else "sm_90"


def plan_of(text, tmp_path):
    path = tmp_path / "g.mlir"
    path.write_text(text)
    return subprocess.run([os.path.join(BIN, "trace-run"), str(path), "--print-kernel-plan"],
                          check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_generated_kernels_match_runtime_kernels(name, tmp_path):
    text, inputs, params = GRAPHS[name]()
    plan = plan_of(text, tmp_path)
    covered = int(re.search(r": (\d+) of \d+ ops", plan).group(1))
    assert covered > 0, plan
    want, want_report = run_graph(text, inputs, params, device="cuda")
    got, report = run_graph(text, inputs, params, device="cuda", extra=["--compile-gpu-kernels"])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    # The runtime's memory plan is unchanged: generated code only adds
    # scratch, which the peak does not count.
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"] == want_report["devices"][0]["peak_bytes"]


def test_prebuilt_fatbin_runs_like_compiled(tmp_path):
    text, inputs, params = mlp()
    graph = tmp_path / "mlp.mlir"
    graph.write_text(text)
    fatbin = tmp_path / "mlp.fatbin"
    subprocess.run([os.path.join(BIN, "trace-translate"), str(graph), "--emit-gpu-binary",
                    f"--chip={device_chip()}", "-o", str(fatbin)], check=True)
    # The fatbin of the graph as written serves the graph with its frees:
    # frees are not in any op's code, so the fingerprint is the same.
    compiled, _ = run_graph(text, inputs, params, device="cuda", extra=["--compile-gpu-kernels"])
    prebuilt, _ = run_graph(text, inputs, params, device="cuda", extra=["--gpu-binary", str(fatbin)])
    for a, b in zip(compiled, prebuilt):
        assert torch.equal(a, b)


def test_fatbin_of_another_graph_is_refused(tmp_path):
    text, inputs, params = mlp()
    other = tmp_path / "other.mlir"
    other.write_text(text.replace('"gelu"', '"relu"'))
    fatbin = tmp_path / "other.fatbin"
    subprocess.run([os.path.join(BIN, "trace-translate"), str(other), "--emit-gpu-binary",
                    "-o", str(fatbin)], check=True)
    with pytest.raises(Exception) as err:
        run_graph(text, inputs, params, device="cuda", extra=["--gpu-binary", str(fatbin)])
    assert "the GPU binary has no kernel 'mlp__op0_linear_kernel" in str(err.value)


def test_profile_names_the_generated_kernels(tmp_path):
    text, inputs, params = mlp()
    graph = tmp_path / "mlp.mlir"
    graph.write_text(text)
    from safetensors.torch import save_file
    save_file(inputs, str(tmp_path / "in.st"))
    save_file({k: v.contiguous() for k, v in params.items()}, str(tmp_path / "p.st"))
    trace = tmp_path / "trace.json"
    subprocess.run([os.path.join(BIN, "trace-run"), str(graph), "--device", "cuda", "--compile-gpu-kernels",
                    "--inputs", str(tmp_path / "in.st"), "--params", str(tmp_path / "p.st"),
                    "--profile", str(trace)], check=True)
    kernels = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert [e["name"] for e in kernels] == ["linear", "gelu", "linear", "log_softmax"]
    for e in kernels:
        assert re.match(r"mlp__op\d_\w+_kernel", e["args"]["generated_kernels"]), e


def test_python_compile_with_generated_kernels(tmp_path):
    import traceir
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 10)).eval()
    x = torch.randn(8, 32)
    m = traceir.from_torch(model, (x,)).run_passes("free-dead-tensors")
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(traceir.compile(m, "cuda", gpu_kernels="compile")(x), want,
                               rtol=1e-4, atol=1e-5)
    graph = tmp_path / "m.mlir"
    m.save(str(graph))
    fatbin = tmp_path / "m.fatbin"
    subprocess.run([os.path.join(BIN, "trace-translate"), str(graph), "--emit-gpu-binary",
                    f"--chip={device_chip()}", "-o", str(fatbin)], check=True)
    torch.testing.assert_close(traceir.compile(m, "cuda", gpu_kernels=fatbin)(x), want, rtol=1e-4, atol=1e-5)
