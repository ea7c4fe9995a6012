"""PyTorch-oracle tests of the ops a joint forward+backward graph adds
(aot_export_module(..., trace_joint=True) of an MLP trained with
cross_entropy): alias, _log_softmax, _log_softmax_backward_data,
nll_loss_forward, nll_loss_backward, ones_like and threshold_backward, each
against the ATen op itself (torch.ops.aten.*), then the whole joint graph
against loss.backward(); on the CPU and on CUDA (the `device` fixture of
conftest.py; the cuda cases skip, with one line saying why, where trace-run
finds no CUDA device).

Tolerances: the kernels compute in f64 and round once, so f32 results use
rtol=1e-5, atol=1e-6 and f64 rtol=1e-10, atol=1e-12; the joint graph's
products (BLAS, summation order differs) use rtol=1e-4, atol=1e-5.
"""
import os
import sys

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traceir_testing import (RunError, Sliced, Transposed, check_op,  # noqa: E402
                             op_graph, run_graph)

pytestmark = pytest.mark.usefixtures("device")

A = torch.ops.aten
F32 = dict(rtol=1e-5, atol=1e-6)
F64 = dict(rtol=1e-10, atol=1e-12)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def unwrap(a):
    return a.tensor if isinstance(a, (Transposed, Sliced)) else a


def aten(op, args):
    """The ATen op on the unwrapped arguments."""
    return getattr(A, op)(*[unwrap(a) for a in args])


def check_aten(op, args, tol=F32, **kwargs):
    """Runs `op` through TraceIR and compares with ATen's own result."""
    want = aten(op, args)
    return check_op(op, args, list(want) if isinstance(want, tuple) else want,
                    **tol, **kwargs)


def expect_error(op, args, results, match):
    """TraceIR rejects the call (at verification or at run time) with a
    message matching `match`."""
    text, inputs = op_graph(op, args, results)
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs)


#===--- alias --------------------------------------------------------------===#

@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4)])
def test_alias(shape):
    x = torch.randn(shape, generator=gen(1))
    check_op("alias", [x], x)
    if len(shape) >= 2:
        check_op("alias", [Transposed(x)], x)


def test_alias_is_a_view():
    # A view allocates nothing: the run's peak (its own storages) is zero.
    x = torch.randn(3, 4, generator=gen(2))
    text, inputs = op_graph("alias", [x], [x])
    outs, report = run_graph(text, inputs)
    assert torch.equal(outs[0], x)
    assert report["devices"][0]["peak_bytes"] == 0, report


#===--- _log_softmax -------------------------------------------------------===#

@pytest.mark.parametrize("shape,dim", [((7,), 0), ((4, 9), 1), ((4, 9), 0),
                                       ((4, 9), -1), ((2, 3, 5), 1), ((), 0)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_log_softmax_internal(shape, dim, dtype):
    x = torch.randn(shape, generator=gen(3), dtype=dtype) * 3
    check_aten("_log_softmax", [x, dim, False], F32 if dtype == torch.float32 else F64)


def test_log_softmax_internal_noncontiguous():
    x = torch.randn(6, 5, generator=gen(4))
    for dim in (0, 1):
        check_aten("_log_softmax", [Transposed(x), dim, False])
        check_aten("_log_softmax", [Sliced(x), dim, False])


def test_log_softmax_internal_errors():
    x = torch.randn(3, 4)
    expect_error("_log_softmax", [torch.arange(6).view(2, 3), 1, False], [x],
                 "not implemented for i64")
    expect_error("_log_softmax", [x, 2, False], [x], "dim 2 is out of range")
    # half_to_float is CUDA's f16 -> f32 path only.
    expect_error("_log_softmax", [x, 1, True], [x], "Half type only")
    with pytest.raises(RuntimeError):
        A._log_softmax(x, 1, True)


#===--- _log_softmax_backward_data -----------------------------------------===#

def lsm_backward_args(shape, dim, seed, dtype=torch.float32):
    x = torch.randn(shape, generator=gen(seed), dtype=dtype)
    out = torch.log_softmax(x, dim)
    grad = torch.randn(shape, generator=gen(seed + 1), dtype=dtype)
    return grad, out


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((4, 9), 1), ((4, 9), 0),
                                       ((4, 9), -1), ((2, 3, 5), 1), ((2, 3, 5), 2)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_log_softmax_backward(shape, dim, dtype):
    grad, out = lsm_backward_args(shape, dim, 5, dtype)
    name = "torch.float32" if dtype == torch.float32 else "torch.float64"
    # ATen takes the dtype as a torch.dtype; TraceIR as the string the
    # exporter prints.
    want = A._log_softmax_backward_data(grad, out, dim, dtype)
    check_op("_log_softmax_backward_data", [grad, out, dim, name], want,
             **(F32 if dtype == torch.float32 else F64))


def test_log_softmax_backward_matches_autograd_and_noncontiguous():
    x = torch.randn(5, 6, generator=gen(6), requires_grad=True)
    out = torch.log_softmax(x, 1)
    grad = torch.randn(5, 6, generator=gen(7))
    (want,) = torch.autograd.grad(out, x, grad)
    out = out.detach()
    for g, o in ((grad, out), (Transposed(grad), out), (grad, Transposed(out)),
                 (Sliced(grad), Transposed(out))):
        check_op("_log_softmax_backward_data", [g, o, 1, "torch.float32"], want, **F32)


def test_log_softmax_backward_errors():
    grad, out = lsm_backward_args((3, 4), 1, 8)
    expect_error("_log_softmax_backward_data", [grad, out, 1, "torch.float64"], [grad],
                 "expected input and grad types to match")
    expect_error("_log_softmax_backward_data", [grad, out, 1, "float33"], [grad],
                 "must be None or a dtype")
    expect_error("_log_softmax_backward_data", [grad, out[:2], 1, "torch.float32"],
                 [grad], "must have the same shape")
    expect_error("_log_softmax_backward_data", [grad, out.double(), 1, "torch.float32"],
                 [grad], "expected scalar type f32 but found f64")
    expect_error("_log_softmax_backward_data", [grad, out, 2, "torch.float32"], [grad],
                 "dim 2 is out of range")
    with pytest.raises(IndexError):
        A._log_softmax_backward_data(grad, out, 2, torch.float32)


#===--- nll_loss_forward ---------------------------------------------------===#

def log_probs(shape, seed, dtype=torch.float32):
    x = torch.randn(shape, generator=gen(seed), dtype=dtype)
    return torch.log_softmax(x, dim=len(shape) - 1)


def targets(n, classes, seed, ignore=None):
    t = torch.randint(0, classes, (n,), generator=gen(seed))
    if ignore is not None:
        t[::3] = ignore
    return t


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True], ids=["noweight", "weight"])
@pytest.mark.parametrize("ignore_index", [-100, 2], ids=["m100", "i2"])
def test_nll_loss_forward(reduction, weighted, ignore_index):
    n, c = 9, 5
    x = log_probs((n, c), 10)
    w = torch.rand(c, generator=gen(11)) + 0.1 if weighted else None
    t = targets(n, c, 12, ignore=ignore_index)
    check_aten("nll_loss_forward", [x, t, w, reduction, ignore_index])


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_forward_unbatched_f64_noncontiguous(reduction):
    x1 = log_probs((6,), 13)
    w1 = torch.rand(6, generator=gen(14)) + 0.5
    check_aten("nll_loss_forward", [x1, torch.tensor(4), w1, reduction, -100])
    xd = log_probs((7, 4), 15, torch.float64)
    td = targets(7, 4, 16)
    check_aten("nll_loss_forward", [xd, td, None, reduction, -100], F64)
    x = log_probs((8, 5), 17)
    t = targets(8, 5, 18, ignore=1)
    w = torch.rand(5, generator=gen(19)) + 0.2
    check_aten("nll_loss_forward", [Transposed(x), Sliced(t), Sliced(w), reduction, 1])
    # A ui8 target (PyTorch's other accepted index dtype).
    check_aten("nll_loss_forward", [x, t.clamp(min=0).to(torch.uint8), None, reduction, 1])


def test_nll_loss_forward_all_ignored():
    # The mean is 0 / 0 = NaN and the total weight 0, as PyTorch.
    x = log_probs((4, 3), 20)
    t = torch.full((4,), 2)
    want = A.nll_loss_forward(x, t, None, 1, 2)
    text, inputs = op_graph("nll_loss_forward", [x, t, None, 1, 2], list(want))
    outs, _ = run_graph(text, inputs)
    assert torch.isnan(outs[0]) and torch.isnan(want[0])
    assert torch.equal(outs[1], want[1])


def test_nll_loss_forward_errors():
    x = log_probs((3, 5), 21)
    t = torch.tensor([1, 0, 4])
    res = list(A.nll_loss_forward(x, t, None, 1, -100))
    expect_error("nll_loss_forward", [x, torch.tensor([1, 0, 7]), None, 1, -100], res,
                 "Target 7 is out of bounds")
    expect_error("nll_loss_forward", [torch.randn(2, 3, 4), torch.zeros(2, 4, dtype=torch.long),
                                      None, 1, -100], res, "input tensor should be 1D or 2D")
    expect_error("nll_loss_forward", [x, t[:2], None, 1, -100], res, "size mismatch")
    expect_error("nll_loss_forward", [x, t.float(), None, 1, -100], res,
                 "expected target dtype to be Long or Byte")
    expect_error("nll_loss_forward", [x, t.int(), None, 1, -100], res,
                 "expected target dtype to be Long or Byte")
    expect_error("nll_loss_forward", [x, t, torch.ones(4), 1, -100], res,
                 "weight tensor should be defined either for all 5 classes")
    expect_error("nll_loss_forward", [x, t, torch.ones(5).double(), 1, -100], res,
                 "expected scalar type f32 but found f64")
    expect_error("nll_loss_forward", [x, t, None, 3, -100], res, "reduction must be")
    expect_error("nll_loss_forward", [x, t.view(3, 1), None, 1, -100], res,
                 "0D or 1D target tensor expected")
    for args in ([x, t[:2], None, 1, -100], [x, t.float(), None, 1, -100],
                 [x, t, torch.ones(4), 1, -100], [x, t.view(3, 1), None, 1, -100]):
        with pytest.raises(RuntimeError):
            A.nll_loss_forward(*args)


#===--- nll_loss_backward --------------------------------------------------===#

def nll_backward_args(n, c, reduction, weighted, ignore_index, seed, dtype=torch.float32):
    x = log_probs((n, c) if n else (c,), seed, dtype)
    t = targets(n, c, seed + 1, ignore=ignore_index) if n else torch.tensor(c - 1)
    w = torch.rand(c, generator=gen(seed + 2), dtype=dtype) + 0.1 if weighted else None
    _, total = A.nll_loss_forward(x, t, w, reduction, ignore_index)
    shape = (n,) if reduction == 0 and n else ()
    g = torch.randn(shape, generator=gen(seed + 3), dtype=dtype)
    return [g, x, t, w, reduction, ignore_index, total]


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True], ids=["noweight", "weight"])
@pytest.mark.parametrize("ignore_index", [-100, 2], ids=["m100", "i2"])
def test_nll_loss_backward(reduction, weighted, ignore_index):
    check_aten("nll_loss_backward", nll_backward_args(9, 5, reduction, weighted, ignore_index, 30))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_backward_matches_autograd(reduction):
    x = log_probs((6, 4), 31).requires_grad_()
    t = targets(6, 4, 32, ignore=-100)
    w = torch.rand(4, generator=gen(33)) + 0.1
    loss = F.nll_loss(x, t, w, reduction=["none", "mean", "sum"][reduction])
    g = torch.randn(loss.shape, generator=gen(34))
    (want,) = torch.autograd.grad(loss, x, g)
    _, total = A.nll_loss_forward(x.detach(), t, w, reduction, -100)
    check_op("nll_loss_backward", [g, x.detach(), t, w, reduction, -100, total], want, **F32)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_backward_unbatched_f64_noncontiguous(reduction):
    check_aten("nll_loss_backward", nll_backward_args(0, 6, reduction, True, -100, 35))
    check_aten("nll_loss_backward",
               nll_backward_args(7, 4, reduction, False, -100, 36, torch.float64), F64)
    g, x, t, w, red, ii, total = nll_backward_args(8, 5, reduction, True, 1, 37)
    if reduction == 0:
        g = Sliced(g)
    check_aten("nll_loss_backward", [g, Transposed(x), Sliced(t), Sliced(w), red, ii, total])
    # A one-element [1] gradient and total weight are accepted too.
    if reduction != 0:
        check_aten("nll_loss_backward", [unwrap(g).view(1), x, t, w, red, ii, total.view(1)])


def test_nll_loss_backward_errors():
    g, x, t, w, red, ii, total = nll_backward_args(3, 5, 1, False, -100, 38)
    res = [x]
    expect_error("nll_loss_backward", [g, x, torch.tensor([1, 0, 9]), w, red, ii, total], res,
                 "Target 9 is out of bounds")
    expect_error("nll_loss_backward", [torch.ones(3), x, t, w, 1, ii, total], res,
                 "Expected a single element grad_output tensor")
    expect_error("nll_loss_backward", [torch.ones(2), x, t, w, 0, ii, total], res,
                 "Expected a tensor of dimension 1 and tensor.size\\[0\\] == 3")
    expect_error("nll_loss_backward", [g, x, t, w, red, ii, torch.ones(2)], res,
                 "expected total_weight to be a single element tensor")
    expect_error("nll_loss_backward", [g.double(), x, t, w, red, ii, total], res,
                 "expected scalar type f32 but found f64")
    expect_error("nll_loss_backward", [g, x, t, w, red, ii, total.double()], res,
                 "expected scalar type f32 but found f64")
    expect_error("nll_loss_backward", [g, x, t[:2], w, red, ii, total], res, "size mismatch")
    expect_error("nll_loss_backward", [g, x, t, torch.ones(4), red, ii, total], res,
                 "weight tensor should be defined")
    for args in ([torch.ones(3), x, t, w, 1, ii, total], [torch.ones(2), x, t, w, 0, ii, total],
                 [g, x, t, w, red, ii, torch.ones(2)], [g.double(), x, t, w, red, ii, total]):
        with pytest.raises(RuntimeError):
            A.nll_loss_backward(*args)


#===--- ones_like ----------------------------------------------------------===#

DTYPE_NAMES = {torch.float32: "torch.float32", torch.float64: "torch.float64",
               torch.float16: "torch.float16", torch.bfloat16: "torch.bfloat16",
               torch.int64: "torch.int64", torch.int32: "torch.int32",
               torch.uint8: "torch.uint8", torch.bool: "torch.bool"}


@pytest.mark.parametrize("shape", [(), (4,), (3, 5)])
def test_ones_like_defaults(shape):
    x = torch.randn(shape, generator=gen(40))
    check_op("ones_like", [x], torch.ones_like(x))
    # As aot_export_module emits it (keyword arguments in place).
    check_op("ones_like", [x, None, None, None, False, "torch.preserve_format"],
             torch.ones_like(x))


@pytest.mark.parametrize("dtype", list(DTYPE_NAMES), ids=list(DTYPE_NAMES.values()))
def test_ones_like_dtype(dtype):
    x = torch.randn(3, 4, generator=gen(41))
    want = A.ones_like(x, dtype=dtype)
    check_op("ones_like", [x, DTYPE_NAMES[dtype], "torch.strided", "cpu", None,
                           "torch.contiguous_format"], want)
    check_op("ones_like", [Transposed(x), DTYPE_NAMES[dtype]], want)
    # An integer input keeps its dtype without one.
    i = torch.arange(6).view(2, 3)
    check_op("ones_like", [i, None], torch.ones_like(i))


def test_ones_like_errors():
    x = torch.randn(3, 4)
    expect_error("ones_like", [x, "torch.float33"], [x], "must be None or a dtype")
    expect_error("ones_like", [x, 6], [x], "must be None or a dtype")
    expect_error("ones_like", [x, None, "torch.sparse_coo"], [x], "layout must be")
    expect_error("ones_like", [x, None, None, None, None, "torch.channels_last"], [x],
                 "memory_format must be")
    with pytest.raises(RuntimeError):
        A.ones_like(x, memory_format=torch.channels_last)


#===--- threshold_backward -------------------------------------------------===#

@pytest.mark.parametrize("threshold", [0, 0.5, -1.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_threshold_backward(threshold, dtype):
    g = torch.randn(6, 7, generator=gen(50), dtype=dtype)
    x = torch.randn(6, 7, generator=gen(51), dtype=dtype)
    x[0, :3] = threshold  # at the threshold: no gradient
    check_aten("threshold_backward", [g, x, threshold], F32 if dtype == torch.float32 else F64)


def test_threshold_backward_broadcast_promote_noncontiguous():
    g = torch.randn(4, 5, generator=gen(52))
    x = torch.randn(4, 5, generator=gen(53))
    check_aten("threshold_backward", [Transposed(g), x, 0])
    check_aten("threshold_backward", [g, Sliced(x), 0.25])
    check_aten("threshold_backward", [g, x[0], 0])            # self broadcasts
    check_aten("threshold_backward", [g[:1], x, 0])           # grad broadcasts
    check_aten("threshold_backward", [g, x.double(), 0], F64)  # promotes to f64
    i = torch.randint(-3, 4, (3, 4), generator=gen(54))
    check_aten("threshold_backward", [i, i, 1])                # integers stay i64
    # NaN input: the comparison is false, so the gradient passes.
    xn = x.clone()
    xn[1, 1] = float("nan")
    check_aten("threshold_backward", [g, xn, 0])
    # Autograd's relu gradient is threshold_backward at 0.
    xr = x.clone().requires_grad_()
    (want,) = torch.autograd.grad(torch.relu(xr), xr, g)
    check_op("threshold_backward", [g, x, 0], want)


def test_threshold_backward_errors():
    g = torch.randn(3, 4)
    expect_error("threshold_backward", [g, g[:2], 0], [g], "cannot be broadcast")
    expect_error("threshold_backward", [g.bool(), g.bool(), 0], [g.bool()],
                 "not implemented for i1")
    expect_error("threshold_backward", [g, g, "x"], [g], "threshold\\) must be a number")
    with pytest.raises(RuntimeError):
        A.threshold_backward(g.bool(), g.bool(), 0)


#===--- The joint graph of an MLP training step ----------------------------===#

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 16)
        self.l2 = torch.nn.Linear(16, 4)

    def forward(self, x, y):
        return (F.cross_entropy(self.l2(torch.relu(self.l1(x))), y),)


def t(*shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + ("x" if shape else "") + f"{dtype}>"


def joint_graph(B):
    """aot_export_module(MLP(), (x, y), trace_joint=True, output_loss_index=0)
    as TraceIR, op for op (the unused aliases included); returns the loss and
    the gradients of l1.weight, l1.bias, l2.weight, l2.bias."""
    return f"""
trace.graph @mlp_train_step(
    %w1: {t(16, 8)} {{trace.param = "l1.weight"}}, %b1: {t(16)} {{trace.param = "l1.bias"}},
    %w2: {t(4, 16)} {{trace.param = "l2.weight"}}, %b2: {t(4)} {{trace.param = "l2.bias"}},
    %x: {t(B, 8)} {{trace.input = "x"}}, %y: {t(B, dtype="i64")} {{trace.input = "y"}})
    -> ({t()}, {t(16, 8)}, {t(16)}, {t(4, 16)}, {t(4)}) {{
  %t = pyop "t"(%w1) : ({t(16, 8)}) -> {t(8, 16)}
  %addmm = pyop "addmm"(%b1, %x, %t) : ({t(16)}, {t(B, 8)}, {t(8, 16)}) -> {t(B, 16)}
  %relu = pyop "relu"(%addmm) : ({t(B, 16)}) -> {t(B, 16)}
  %alias = pyop "alias"(%relu) : ({t(B, 16)}) -> {t(B, 16)}
  %alias_1 = pyop "alias"(%relu) : ({t(B, 16)}) -> {t(B, 16)}
  %t_1 = pyop "t"(%w2) : ({t(4, 16)}) -> {t(16, 4)}
  %addmm_1 = pyop "addmm"(%b2, %relu, %t_1) : ({t(4)}, {t(B, 16)}, {t(16, 4)}) -> {t(B, 4)}
  %lsm = pyop "_log_softmax"(%addmm_1, 1, False) : ({t(B, 4)}) -> {t(B, 4)}
  %alias_2 = pyop "alias"(%lsm) : ({t(B, 4)}) -> {t(B, 4)}
  %alias_3 = pyop "alias"(%lsm) : ({t(B, 4)}) -> {t(B, 4)}
  %nll:2 = pyop "nll_loss_forward"(%lsm, %y, None, 1, -100) : ({t(B, 4)}, {t(B, dtype="i64")}) -> ({t()}, {t()})
  %ones = pyop "ones_like"(%nll#0, None, None, None, False, "torch.preserve_format") : ({t()}) -> {t()}
  %nllb = pyop "nll_loss_backward"(%ones, %lsm, %y, None, 1, -100, %nll#1) : ({t()}, {t(B, 4)}, {t(B, dtype="i64")}, {t()}) -> {t(B, 4)}
  %alias_4 = pyop "alias"(%alias_3) : ({t(B, 4)}) -> {t(B, 4)}
  %lsmb = pyop "_log_softmax_backward_data"(%nllb, %alias_4, 1, "torch.float32") : ({t(B, 4)}, {t(B, 4)}) -> {t(B, 4)}
  %t_2 = pyop "t"(%t_1) : ({t(16, 4)}) -> {t(4, 16)}
  %mm = pyop "mm"(%lsmb, %t_2) : ({t(B, 4)}, {t(4, 16)}) -> {t(B, 16)}
  %t_3 = pyop "t"(%lsmb) : ({t(B, 4)}) -> {t(4, B)}
  %mm_1 = pyop "mm"(%t_3, %relu) : ({t(4, B)}, {t(B, 16)}) -> {t(4, 16)}
  %t_4 = pyop "t"(%mm_1) : ({t(4, 16)}) -> {t(16, 4)}
  %sum_1 = pyop "sum"(%lsmb, [0], True) : ({t(B, 4)}) -> {t(1, 4)}
  %view = pyop "view"(%sum_1, [4]) : ({t(1, 4)}) -> {t(4)}
  %t_5 = pyop "t"(%t_4) : ({t(16, 4)}) -> {t(4, 16)}
  %alias_5 = pyop "alias"(%alias_1) : ({t(B, 16)}) -> {t(B, 16)}
  %thb = pyop "threshold_backward"(%mm, %alias_5, 0) : ({t(B, 16)}, {t(B, 16)}) -> {t(B, 16)}
  %t_6 = pyop "t"(%thb) : ({t(B, 16)}) -> {t(16, B)}
  %mm_2 = pyop "mm"(%t_6, %x) : ({t(16, B)}, {t(B, 8)}) -> {t(16, 8)}
  %t_7 = pyop "t"(%mm_2) : ({t(16, 8)}) -> {t(8, 16)}
  %sum_2 = pyop "sum"(%thb, [0], True) : ({t(B, 16)}) -> {t(1, 16)}
  %view_1 = pyop "view"(%sum_2, [16]) : ({t(1, 16)}) -> {t(16)}
  %t_8 = pyop "t"(%t_7) : ({t(8, 16)}) -> {t(16, 8)}
  ret %nll#0, %t_8, %view_1, %t_5, %view : {t()}, {t(16, 8)}, {t(16)}, {t(4, 16)}, {t(4)}
}}
"""


@pytest.mark.parametrize("B", [2, 32])
def test_mlp_joint_graph_matches_autograd(B):
    torch.manual_seed(B)
    model = MLP()
    x = torch.randn(B, 8)
    y = torch.randint(0, 4, (B,))
    (loss,) = model(x, y)
    loss.backward()
    want = [loss.detach()] + [p.grad for p in (model.l1.weight, model.l1.bias,
                                               model.l2.weight, model.l2.bias)]
    params = {k: v.detach() for k, v in model.state_dict().items()}
    peaks = {}
    for free in (True, False):
        outs, report = run_graph(joint_graph(B), {"x": x, "y": y}, params,
                                 free=free, check_frees=free)
        dev = report["devices"][0]
        assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
        peaks[free] = dev["peak_bytes"]
        assert len(outs) == len(want)
        for got, w in zip(outs, want):
            torch.testing.assert_close(got, w, rtol=1e-4, atol=1e-5)
    assert peaks[True] < peaks[False], peaks


def test_mlp_joint_graph_is_what_aot_autograd_exports():
    """The op sequence above is aot_export_module's, so the test covers the
    graph PyTorch actually produces (and notices when that changes)."""
    from torch._functorch.aot_autograd import aot_export_module
    gm, _ = aot_export_module(MLP(), (torch.randn(2, 8), torch.tensor([1, 3])),
                              trace_joint=True, output_loss_index=0)
    exported = [n.target.__name__.split(".")[0] for n in gm.graph.nodes
                if n.op == "call_function" and hasattr(n.target, "_schema")]
    ours = [line.split('pyop "')[1].split('"')[0] for line in joint_graph(2).splitlines()
            if 'pyop "' in line]
    assert exported == ours, (exported, ours)
