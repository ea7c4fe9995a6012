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


#===--- convolution_backward -----------------------------------------------===#

def conv_backward_case(x_shape, w_shape, stride, padding, dilation, groups, seed,
                       dtype=torch.float32, mask=(True, True, True)):
    """ATen's convolution_backward arguments and results for a conv2d with a
    bias; a result `mask` leaves out is TraceIR's empty [0] tensor (ATen's
    undefined one)."""
    x = torch.randn(x_shape, generator=gen(seed), dtype=dtype)
    w = torch.randn(w_shape, generator=gen(seed + 1), dtype=dtype)
    out = F.conv2d(x, w, None, stride, padding, dilation, groups)
    g = torch.randn(out.shape, generator=gen(seed + 2), dtype=dtype)
    args = [g, x, w, [w_shape[0]], list(stride), list(padding), list(dilation), False,
            [0, 0], groups, list(mask)]
    want = A.convolution_backward(*args)
    # (ATen's CPU kernel may compute a result the mask leaves out anyway.)
    return args, [r if m else torch.empty(0, dtype=dtype) for r, m in zip(want, mask)]


CONV_CASES = [  # input, weight, stride, padding, dilation, groups
    ((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 9, 7), (6, 2, 3, 2), (2, 1), (0, 1), (1, 1), 2),
    ((1, 3, 11, 10), (5, 3, 3, 3), (2, 3), (2, 1), (2, 1), 1),
    ((2, 6, 5, 5), (6, 1, 3, 3), (1, 1), (1, 1), (1, 1), 6),  # depthwise
    ((2, 8, 6, 6), (4, 8, 1, 1), (2, 2), (0, 0), (1, 1), 1),  # resnet's downsample
    ((3, 2, 4, 4), (3, 2, 4, 4), (1, 1), (0, 0), (1, 1), 1),  # a 1x1 output
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_convolution_backward(case, dtype):
    args, want = conv_backward_case(*case, seed=20, dtype=dtype)
    check_op("convolution_backward", args, want,
             **(dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else F64))


@pytest.mark.parametrize("mask", [(False, True, True), (True, False, False),
                                  (False, False, True), (True, True, False)])
def test_convolution_backward_output_mask(mask):
    args, want = conv_backward_case(*CONV_CASES[1], seed=21, mask=mask)
    check_op("convolution_backward", args, want, rtol=1e-4, atol=1e-5)


def test_convolution_backward_noncontiguous():
    args, want = conv_backward_case(*CONV_CASES[0], seed=22)
    args[0] = Transposed(args[0])
    args[1] = Sliced(args[1])
    check_op("convolution_backward", args, want, rtol=1e-4, atol=1e-5)


def test_convolution_backward_errors():
    args, want = conv_backward_case(*CONV_CASES[0], seed=23)
    bad = list(args)
    bad[7] = True
    expect_error("convolution_backward", bad, want, "transposed convolutions are not supported")
    bad = list(args)
    bad[4] = [0, 1]
    expect_error("convolution_backward", bad, want, "stride and dilation must be positive")
    bad = list(args)
    bad[10] = [True, False]
    expect_error("convolution_backward", bad, want, "output_mask must be three bools")
    # grad_output not shaped like the forward's output.
    g = torch.randn(2, 4, 7, 7)
    expect_error("convolution_backward", [g] + args[1:], want, "is not the convolution's output")
    expect_error("convolution_backward", [a.double() if isinstance(a, torch.Tensor) and i == 2
                                          else a for i, a in enumerate(args)], want,
                 "must have one dtype")
    ints = [a.long() if isinstance(a, torch.Tensor) else a for a in args]
    expect_error("convolution_backward", ints, [w.long() for w in want], "supports f32 and f64")
    x3 = torch.randn(3, 8, 8)
    expect_error("convolution_backward", [torch.randn(4, 8, 8), x3] + args[2:], want,
                 "supports 2-D convolutions")


#===--- max_pool2d_with_indices and its backward ---------------------------===#

POOL_CASES = [  # input, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 8, 8), [3, 3], [2, 2], [1, 1], [1, 1], False),  # resnet's stem pool
    ((1, 2, 7, 9), [2, 3], [2, 1], [0, 1], [1, 1], True),
    ((2, 2, 10, 10), [3, 2], [3, 2], [1, 0], [2, 2], False),
    ((3, 5, 6), [2, 2], [], [0, 0], [1, 1], False),  # unbatched, default stride
]


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_max_pool2d_with_indices(case, dtype):
    shape, *window = case
    # Distinct values: ties would make the index a matter of order.
    x = torch.randperm(torch.Size(shape).numel(), generator=gen(30)).view(shape).to(dtype) / 8
    check_aten("max_pool2d_with_indices", [x, *window], F32)


def test_max_pool2d_with_indices_nan_and_padding():
    x = torch.randn(1, 1, 5, 5, generator=gen(31))
    x[0, 0, 1, 1] = float("nan")
    check_aten("max_pool2d_with_indices", [x, [3, 3], [2, 2], [1, 1], [1, 1], False])
    x = torch.full((1, 1, 4, 4), -float("inf"))  # every tap -inf: the first tap's index
    check_aten("max_pool2d_with_indices", [x, [3, 3], [1, 1], [1, 1], [1, 1], False])


def pool_backward_args(case, seed, dtype=torch.float32):
    shape, kernel, stride, padding, dilation, ceil = case
    x = torch.randperm(torch.Size(shape).numel(), generator=gen(seed)).view(shape).to(dtype)
    out, idx = A.max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil)
    g = torch.randn(out.shape, generator=gen(seed + 1)).to(dtype)
    return [g, x, kernel, stride, padding, dilation, ceil, idx]


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_max_pool2d_with_indices_backward(case, dtype):
    args = pool_backward_args(case, 32, dtype)
    # Overlapping windows add several gradients into one input: f32 sums
    # them in another order than PyTorch's, the narrow dtypes round once.
    tol = {torch.float64: F64, torch.float32: F32}.get(dtype, dict(rtol=1e-2, atol=1e-2))
    check_aten("max_pool2d_with_indices_backward", args, tol)


def test_max_pool2d_with_indices_backward_noncontiguous():
    args = pool_backward_args(POOL_CASES[0], 33)
    want = aten("max_pool2d_with_indices_backward", args)
    args[0], args[7] = Transposed(args[0]), Sliced(args[7])
    check_op("max_pool2d_with_indices_backward", args, want, **F32)


def test_max_pool2d_with_indices_errors():
    args = pool_backward_args(POOL_CASES[0], 34)
    want = aten("max_pool2d_with_indices_backward", args)
    bad = list(args)
    bad[7] = args[7].clone()
    bad[7][0, 0, 0, 0] = 64  # a plane of 8 x 8 has positions 0 to 63
    expect_error("max_pool2d_with_indices_backward", bad, [want],
                 "index 64 is out of range for an input plane of 64 elements")
    bad[7][0, 0, 0, 0] = -1
    expect_error("max_pool2d_with_indices_backward", bad, [want], "index -1 is out of range")
    expect_error("max_pool2d_with_indices_backward", args[:7] + [args[7].int()], [want],
                 "indices must be i64")
    expect_error("max_pool2d_with_indices_backward", [args[0][:, :, :2]] + args[1:], [want],
                 "must have the pooled shape")
    expect_error("max_pool2d_with_indices_backward", args[:2] + [[0, 3]] + args[3:], [want],
                 "kernel_size, stride and dilation must be positive")
    # The backward of an integer pool is refused, as PyTorch's
    # ("max_pool2d_backward" not implemented for 'Long').
    x = torch.arange(16).view(1, 1, 4, 4)
    out, idx = A.max_pool2d_with_indices(x, [2, 2])
    expect_error("max_pool2d_with_indices_backward",
                 [out, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx], [x],
                 "must have one floating dtype")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32,
                                   torch.int64])
def test_max_pool2d_integer(dtype):
    # PyTorch's CPU pools every integer dtype: the values and the position of
    # the first maximum of each window, ties included (few distinct values),
    # padding never winning over a negative input.
    lo = 0 if dtype == torch.uint8 else -5
    x = torch.randint(lo, 5, (2, 3, 7, 6), generator=gen(9)).to(dtype)
    for args in ([x, [2, 2]], [x, [3, 2], [2, 1], [1, 1], [1, 1], True],
                 [x, [2, 3], [1, 2], [1, 0], [2, 1], False]):
        check_aten("max_pool2d_with_indices", args)
        check_aten("max_pool2d", args)
    x3 = torch.randint(lo, 5, (2, 4, 5, 6), generator=gen(10)).to(dtype)
    check_aten("max_pool3d_with_indices", [x3, [2, 2, 2], [1, 2, 2], [1, 1, 0]])


def test_max_pool2d_bool_refused():
    # PyTorch has no bool max pool either ("max_pool2d" not implemented for 'Bool').
    x = torch.rand(1, 1, 4, 4, generator=gen(3)) > 0.5
    expect_error("max_pool2d_with_indices", [x, [2, 2]],
                 [x[..., ::2, ::2], x[..., ::2, ::2].long()], "bool")


#===--- native_dropout -----------------------------------------------------===#

def run_native_dropout(x, p, train, seed):
    t = unwrap(x)
    text, inputs = op_graph("native_dropout", [x, p, train], [t, t != t])
    (out, mask), _ = run_graph(text, inputs, seed=seed)
    return out, mask


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_native_dropout_statistics(p):
    # Random, so tested by distribution: the fraction dropped is p within 6
    # sigma, the kept values are scaled by 1/(1-p), the mask says which.
    x = torch.rand(256, 256, generator=gen(40)) + 1
    out, mask = run_native_dropout(x, p, True, seed=3)
    assert mask.dtype == torch.bool
    frac = 1 - mask.float().mean().item()
    assert abs(frac - p) < 6 * (p * (1 - p) / x.numel()) ** 0.5, (frac, p)
    torch.testing.assert_close(out[mask], x[mask] / (1 - p))
    assert torch.equal(out != 0, mask)
    # Seeded: the run's seed fixes the mask.
    again, mask2 = run_native_dropout(x, p, True, seed=3)
    assert torch.equal(out, again) and torch.equal(mask, mask2)
    assert not torch.equal(mask, run_native_dropout(x, p, True, seed=4)[1])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_native_dropout_dtypes(dtype):
    x = (torch.rand(64, 64, generator=gen(41)) + 1).to(dtype)
    out, mask = run_native_dropout(Transposed(x), 0.2, True, seed=1)
    assert out.dtype == dtype
    assert 0.1 < 1 - mask.float().mean().item() < 0.3
    torch.testing.assert_close(out[mask], (x.double()[mask] / 0.8).to(dtype))
    assert not out[~mask].any()


def test_native_dropout_eval_p0_and_p1():
    x = torch.randn(8, 9, generator=gen(42))
    for p, train in [(0.5, False), (0.0, True)]:
        # ATen's eval mode (and p = 0): the input and an all-true mask.
        want = A.native_dropout(x, p, train)
        check_op("native_dropout", [x, p, train], list(want))
    out, mask = run_native_dropout(x, 1.0, True, seed=2)
    assert not mask.any() and torch.equal(out, torch.zeros_like(x))


def test_native_dropout_errors():
    x = torch.randn(4, 4)
    expect_error("native_dropout", [x, 1.5, True], [x, x > 0],
                 "dropout probability must be in")
    expect_error("native_dropout", [x, 0.5, True], [x, x], "result #1 is declared")


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
