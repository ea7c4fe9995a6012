"""The CUDA backend against the CPU backend and PyTorch: elementwise ops
(shared host logic, device loop), views, cuBLAS products in f32/f16/bf16,
and the caching allocator's report. Skipped, with one line saying why, where
trace-run finds no CUDA device; scripts/gpu-check.sh runs it on a GPU.
"""
import pytest
import torch

from traceir_testing import Transposed, check_op, cuda_status, op_graph, run_graph

AVAILABLE, REASON = cuda_status()
if not AVAILABLE:
    pytest.skip(f"CUDA tier skipped: {REASON}", allow_module_level=True)

torch.manual_seed(0)


@pytest.mark.parametrize("op,fn", [("add", torch.add), ("mul", torch.mul), ("div", torch.div),
                                   ("lt", torch.lt), ("pow", torch.pow)])
def test_binary_on_cuda(op, fn):
    a, b = torch.rand(3, 1, 4) + 0.5, torch.rand(5, 1) + 0.5
    check_op(op, [a, b], fn(a, b), device="cuda")
    c, d = torch.rand(4, 3) + 0.5, torch.rand(4, 3) + 0.5
    check_op(op, [Transposed(c), d], fn(c, d), device="cuda")


def test_integer_division_by_zero_is_an_error():
    a, b = torch.tensor([4, 2]), torch.tensor([2, 0])
    text, inputs = op_graph("div", [a, b, "floor"], [a])
    with pytest.raises(Exception, match="integer division by zero"):
        run_graph(text, inputs, device="cuda")


@pytest.mark.parametrize("op", ["neg", "exp", "tanh", "sigmoid", "relu", "gelu"])
def test_unary_on_cuda(op):
    x = torch.randn(6, 5)
    fn = torch.nn.functional.gelu if op == "gelu" else getattr(torch, op)
    check_op(op, [Transposed(x)], fn(x), device="cuda")


def test_views_and_copies_on_cuda():
    x = torch.randn(2, 3, 4)
    check_op("reshape", [Transposed(x), (24,)], x.reshape(24), device="cuda")
    check_op("contiguous", [Transposed(x)], x.contiguous(), device="cuda")
    check_op("select", [x, 1, -1], x.select(1, -1), device="cuda")


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float16, 1e-2),
                                       (torch.bfloat16, 5e-2)])
def test_gemm_on_cuda(dtype, tol):
    a, b = torch.randn(33, 17).to(dtype), torch.randn(17, 9).to(dtype)
    want = (a.float() @ b.float()).to(dtype)
    check_op("mm", [a, b], want, device="cuda", rtol=tol, atol=tol)
    check_op("mm", [Transposed(a), b], want, device="cuda", rtol=tol, atol=tol)
    x, w, bias = torch.randn(2, 5, 8), torch.randn(6, 8), torch.randn(6)
    check_op("linear", [x, w, bias], torch.nn.functional.linear(x, w, bias),
             device="cuda", rtol=1e-4, atol=1e-4)
    p, q = torch.randn(4, 2, 3), torch.randn(4, 3, 5)
    check_op("bmm", [p, q], torch.bmm(p, q), device="cuda", rtol=1e-4, atol=1e-4)


def test_memory_report_on_cuda():
    x = torch.randn(64, 64)
    text, inputs = op_graph("exp", [x], [x])
    _, report = run_graph(text, inputs, device="cuda")
    dev = report["devices"][0]
    assert dev["device"] == "cuda:0"
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"] == 64 * 64 * 4
    assert dev["allocated_peak_bytes"] >= dev["peak_bytes"]


def test_second_device_where_present():
    """cuda:1 runs the same graph and reports its own memory (two GPUs only)."""
    x = torch.randn(4, 5)
    text, inputs = op_graph("tanh", [x], [x])
    try:
        outs, report = run_graph(text, inputs, device="cuda:1")
    except Exception as e:  # noqa: BLE001 - the runner's message says why
        if "no CUDA device cuda:1" in str(e):
            pytest.skip("one CUDA device only: no cuda:1")
        raise
    assert report["devices"][0]["device"] == "cuda:1"
    torch.testing.assert_close(outs[0], torch.tanh(x), rtol=1e-5, atol=1e-6)
