"""PyTorch-oracle tests of the NN kernels, on the CPU and on CUDA (the
`device` fixture of conftest.py; the cuda cases skip, with one line saying
why, where trace-run finds no CUDA device): conv2d (lib/Runtime/CPU/Conv.cpp,
CUDA/Conv.cpp/.cu), max_pool2d, adaptive_avg_pool2d (Runtime/Resample.h's
element functions, the 3-D pools' own: CPU/Resample.cpp, CUDA/Resample.cu),
batch_norm, native_batch_norm, native_batch_norm_backward,
batch_norm_double_backward (Norm.cpp, CUDA/Norm.cpp/.cu), nll_loss and
cross_entropy (Loss.cpp, CUDA/Loss.cpp/.cu).

Each case builds a one-op TraceIR graph, runs it with trace-run (after
--free-dead-tensors, with --check-frees) and compares with PyTorch; the
measured memory peak must equal the predicted one. On CUDA only (marked
devices("cuda")): inputs large enough for several blocks per reduction and
more positions than one grid of blocks, and the CUDA kernels against the
CPU backend's for what PyTorch does not give (f16/bf16 pooling and batch
norm).

Tolerances: f32 conv2d rtol=1e-4, atol=1e-5 (BLAS summation order differs
from PyTorch's); the other f32 kernels accumulate in f64 and use
rtol=1e-5, atol=1e-5 (pooling: the default 1e-5/1e-6; cross_entropy over
1000 classes with probability targets: atol=1e-4); f64 comparisons
use rtol=1e-10, atol=1e-12 (conv2d f64: 1e-9/1e-10); the finite-difference
check of the double backward uses rtol=1e-6, atol=1e-8 with a central step
of 1e-5. CUDA against the CPU backend: f16/bf16 pooling exactly, f16/bf16
batch norm within rtol=atol=1e-2 (one rounding of an f64 result each).
"""
import math
import os
import sys

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traceir_testing import (RunError, Sliced, Transposed, check_op,  # noqa: E402
                             mlir_type, op_graph, run_graph)

pytestmark = pytest.mark.usefixtures("device")

F32 = dict(rtol=1e-5, atol=1e-5)
F64 = dict(rtol=1e-10, atol=1e-12)
CONV32 = dict(rtol=1e-4, atol=1e-5)
CONV64 = dict(rtol=1e-9, atol=1e-10)


def unwrap(a):
    return a.tensor if isinstance(a, (Transposed, Sliced)) else a


def run_op(op, args, results, device=None):
    """Runs `op` (on the test's device unless told) and returns its outputs
    (no comparison), checking the memory report as check_op does."""
    text, inputs = op_graph(op, args, results)
    outputs, report = run_graph(text, inputs, device=device)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    return outputs


def assert_close(got, want, equal_nan=False, **tol):
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    torch.testing.assert_close(got, want, equal_nan=equal_nan, **tol)


def same_as_cpu(op, args, results, **tol):
    """The CUDA kernel against the CPU backend's (for what PyTorch does
    differently or not at all)."""
    want = run_op(op, args, results, device="cpu")
    got = run_op(op, args, results)
    for g, w in zip(got, want):
        assert_close(g, w, equal_nan=True, **tol)


#===--- conv2d -------------------------------------------------------------===#

# (input shape, weight shape, bias, stride, padding, dilation, groups)
CONV_CASES = [
    ((2, 3, 8, 8), (4, 3, 3, 3), True, 1, 0, 1, 1),
    ((2, 3, 9, 7), (5, 3, 3, 3), True, 2, 1, 1, 1),
    ((1, 4, 10, 9), (6, 2, 3, 2), True, (2, 1), (1, 2), (2, 1), 2),
    ((3, 4, 6, 6), (4, 2, 2, 2), False, 1, 0, 1, 2),          # no bias
    ((2, 6, 7, 7), (6, 1, 3, 3), True, 1, 1, 1, 6),           # depthwise
    ((2, 6, 7, 7), (12, 1, 3, 3), False, [2, 2], [1, 1], 1, 6),
    ((4, 9, 9), (5, 4, 3, 3), True, 1, 1, 1, 1),              # unbatched
    ((3, 8, 8), (6, 1, 2, 3), False, (1, 2), 0, (1, 2), 3),   # unbatched, groups
    ((2, 3, 8, 9), (4, 3, 4, 3), True, 1, "same", 1, 1),      # asymmetric 'same'
    ((2, 4, 9, 8), (4, 2, 3, 4), True, 1, "same", (2, 3), 2), # dilated 'same'
    ((2, 3, 8, 8), (4, 3, 3, 3), True, 2, "valid", 1, 1),
    ((2, 5, 6, 7), (3, 5, 1, 1), True, 1, 0, 1, 1),           # 1x1 direct path
    ((2, 4, 6, 7), (4, 4, 1, 1), False, 2, 0, 1, 1),          # strided 1x1
    ((1, 2, 5, 5), (3, 2, 5, 5), True, 1, 0, 1, 1),           # kernel = input
    ((2, 3, 5, 5), (2, 3, 3, 3), True, 3, 2, 2, 1),           # all padding taps
]


# PyTorch warns that an even kernel with padding='same' copies the input.
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case", CONV_CASES, ids=[str(i) for i in range(len(CONV_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_conv2d(case, dtype):
    xs, ws, has_bias, stride, padding, dilation, groups = case
    g = torch.Generator().manual_seed(CONV_CASES.index(case))
    x = torch.randn(xs, generator=g, dtype=dtype)
    w = torch.randn(ws, generator=g, dtype=dtype)
    b = torch.randn(ws[0], generator=g, dtype=dtype) if has_bias else None
    want = F.conv2d(x, w, b, stride, padding, dilation, groups)
    tol = CONV32 if dtype == torch.float32 else CONV64
    check_op("conv2d", [x, w, b, stride, padding, dilation, groups], want, **tol)


def test_conv2d_defaults_and_noncontiguous():
    torch.manual_seed(1)
    x = torch.randn(2, 4, 7, 6)
    w = torch.randn(6, 2, 3, 3)
    b = torch.randn(6)
    # Only input and weight: stride, padding, dilation and groups default.
    w0 = torch.randn(5, 4, 3, 3)
    check_op("conv2d", [x, w0], F.conv2d(x, w0), **CONV32)
    # Transposed input (strides of the last two dims swapped), a strided
    # weight (every other row of dim 0) and a strided bias.
    want = F.conv2d(x, w, b, 1, 1, 1, 2)
    check_op("conv2d", [Transposed(x), Sliced(w), Sliced(b), 1, 1, 1, 2], want, **CONV32)
    # Non-contiguous unbatched input.
    xu = torch.randn(4, 5, 9)
    check_op("conv2d", [Transposed(xu), w, None, 2, 1, 1, 2],
             F.conv2d(xu, w, None, 2, 1, 1, 2), **CONV32)


@pytest.mark.devices("cuda")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_conv2d_larger(dtype):
    """Many blocks of im2col, a batched gemm over 6 images, and a 1x1
    direct path over several groups."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 8, 33, 29, generator=g, dtype=dtype)
    w = torch.randn(16, 4, 3, 5, generator=g, dtype=dtype)
    b = torch.randn(16, generator=g, dtype=dtype)
    tol = CONV32 if dtype == torch.float32 else CONV64
    check_op("conv2d", [x, w, b, (2, 1), (1, 2), 1, 2], F.conv2d(x, w, b, (2, 1), (1, 2), 1, 2),
             **tol)
    w1 = torch.randn(12, 2, 1, 1, generator=g, dtype=dtype)
    check_op("conv2d", [x, w1, None, 1, 0, 1, 4], F.conv2d(x, w1, None, 1, 0, 1, 4), **tol)


#===--- max_pool2d ---------------------------------------------------------===#

# (input shape, kernel_size, stride, padding, dilation, ceil_mode)
POOL_CASES = [
    ((2, 3, 8, 8), 2, None, 0, 1, False),
    ((2, 3, 8, 8), [2, 2], [], 0, 1, False),         # empty stride: kernel
    ((2, 3, 9, 7), 3, 2, 1, 1, False),
    ((2, 3, 9, 7), 3, 2, 1, 1, True),
    ((1, 2, 10, 11), (3, 2), (2, 3), (1, 1), (2, 1), False),
    ((1, 2, 10, 11), (3, 2), (2, 3), (1, 0), (2, 3), True),
    ((3, 7, 7), 3, 3, 0, 1, True),                   # unbatched, ceil drop
    ((2, 6, 5), [2, 3], 1, [1, 1], 1, False),        # unbatched
    ((2, 2, 6, 6), 4, 2, 2, 1, True),                # ceil + padding
    ((2, 2, 5, 5), 2, 2, 1, 2, False),               # dilation with padding
]


@pytest.mark.parametrize("case", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_max_pool2d(case, dtype):
    xs, k, stride, padding, dilation, ceil = case
    g = torch.Generator().manual_seed(len(xs) * 7 + sum(xs))
    x = torch.randn(xs, generator=g, dtype=dtype)
    want = F.max_pool2d(x, k, stride if stride != [] else None, padding, dilation, ceil)
    check_op("max_pool2d", [x, k, stride, padding, dilation, ceil], want)


def test_max_pool2d_defaults_noncontiguous_nan():
    torch.manual_seed(2)
    x = torch.randn(2, 3, 9, 8)
    # Only the kernel size: stride defaults to it.
    check_op("max_pool2d", [x, 3], F.max_pool2d(x, 3))
    # Transposed input; the result follows the logical (transposed back) view.
    check_op("max_pool2d", [Transposed(x), 2, 1, 1, 1, False],
             F.max_pool2d(x, 2, 1, 1, 1, False))
    check_op("max_pool2d", [Sliced(x), 3, 2, 1, 1, True],
             F.max_pool2d(x, 3, 2, 1, 1, True))
    # A NaN wins its windows; -inf inputs stay -inf.
    y = torch.randn(1, 2, 6, 6)
    y[0, 0, 1, 1] = float("nan")
    y[0, 1, 2:4, 2:4] = float("-inf")
    want = F.max_pool2d(y, 2, 2)
    got = run_op("max_pool2d", [y, 2, 2], [want])[0]
    assert_close(got, want, equal_nan=True)
    assert torch.isnan(got[0, 0, 0, 0])


#===--- adaptive_avg_pool2d ------------------------------------------------===#

ADAPTIVE_CASES = [
    ((2, 3, 8, 8), (1, 1)),
    ((2, 3, 8, 8), 4),
    ((2, 3, 7, 10), (3, 5)),      # uneven windows that overlap
    ((1, 2, 5, 6), (7, 9)),       # larger than the input
    ((3, 7, 7), (2, 3)),          # unbatched
    ((2, 3, 9, 6), (None, 4)),    # None keeps the input size
    ((2, 3, 9, 6), [5, None]),
]


@pytest.mark.parametrize("case", ADAPTIVE_CASES, ids=[str(i) for i in range(len(ADAPTIVE_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_adaptive_avg_pool2d(case, dtype):
    xs, size = case
    g = torch.Generator().manual_seed(sum(xs))
    x = torch.randn(xs, generator=g, dtype=dtype)
    want = F.adaptive_avg_pool2d(x, size)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else F64
    check_op("adaptive_avg_pool2d", [x, size], want, **tol)


def test_adaptive_avg_pool2d_noncontiguous():
    torch.manual_seed(3)
    x = torch.randn(2, 3, 7, 9)
    check_op("adaptive_avg_pool2d", [Transposed(x), (3, 4)],
             F.adaptive_avg_pool2d(x, (3, 4)), rtol=1e-5, atol=1e-6)
    check_op("adaptive_avg_pool2d", [Sliced(x), 2],
             F.adaptive_avg_pool2d(x, 2), rtol=1e-5, atol=1e-6)


@pytest.mark.devices("cuda")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_pooling_half_matches_cpu(dtype):
    x = torch.randn(2, 3, 9, 7).to(dtype)
    same_as_cpu("max_pool2d", [Transposed(x), 3, 2, 1, 1, True],
                [F.max_pool2d(x.float(), 3, 2, 1, 1, True).to(dtype)], rtol=0, atol=0)
    same_as_cpu("adaptive_avg_pool2d", [x, (4, 3)],
                [F.adaptive_avg_pool2d(x.float(), (4, 3)).to(dtype)], rtol=0, atol=0)


#===--- batch_norm / native_batch_norm -------------------------------------===#

def graph_returning_args(op, args, results, extra):
    """op_graph, with the tensor arguments at indices `extra` also returned
    (after the op's results): they are graph inputs the op mutates."""
    text, inputs = op_graph(op, args, results)
    lines = text.splitlines()
    types = [mlir_type(unwrap(args[i])) for i in extra]
    head, ret_types = lines[0].rsplit(" -> (", 1)
    lines[0] = head + " -> (" + ret_types[:-len(") {")] + "".join(
        ", " + t for t in types) + ") {"
    ret = lines[-2]
    values, rtypes = ret[len("  ret "):].split(" : ", 1)
    values += "".join(f", %a{i}" for i in extra)
    rtypes += "".join(", " + t for t in types)
    lines[-2] = f"  ret {values} : {rtypes}"
    return "\n".join(lines) + "\n", inputs


def run_mutating(op, args, results, extra):
    text, inputs = graph_returning_args(op, args, results, extra)
    outputs, report = run_graph(text, inputs)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    return outputs


def bn_inputs(shape, affine, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    c = shape[1]
    x = torch.randn(shape, generator=g, dtype=dtype) * 2 + 0.5
    w = torch.randn(c, generator=g, dtype=dtype) if affine else None
    b = torch.randn(c, generator=g, dtype=dtype) if affine else None
    rm = torch.randn(c, generator=g, dtype=dtype)
    rv = torch.rand(c, generator=g, dtype=dtype) + 0.5
    return x, w, b, rm, rv


def train_tol(x):
    if x.dtype == torch.float64:
        return F64
    if x.numel() == x.shape[1]:
        # One element per channel: PyTorch computes x * (invstd * w) + (b -
        # mean * invstd * w) in f32, cancelling terms ~1/sqrt(eps) = 316
        # times x; its output is off by up to ~1e-4 from the exact b we
        # return.
        return dict(rtol=1e-5, atol=1e-4)
    return F32


# (shape, affine, momentum, eps)
BN_CASES = [
    ((4, 3, 5, 6), True, 0.1, 1e-5),
    ((4, 3, 5, 6), False, 0.3, 1e-3),
    ((8, 5), True, 0.1, 1e-5),            # [N, C]
    ((3, 4, 7), True, 0.9, 1e-5),         # [N, C, L]
    ((2, 3, 2, 3, 2), False, 0.1, 1e-5),  # [N, C, D, H, W]
    ((1, 4, 1, 1), True, 0.2, 1e-5),      # one element per channel
]


@pytest.mark.parametrize("case", BN_CASES, ids=[str(i) for i in range(len(BN_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batch_norm_eval(case, dtype):
    shape, affine, momentum, eps = case
    x, w, b, rm, rv = bn_inputs(shape, affine, dtype, seed=len(shape))
    want = torch.ops.aten.batch_norm(x, w, b, rm, rv, False, momentum, eps, False)
    tol = F32 if dtype == torch.float32 else F64
    check_op("batch_norm", [x, w, b, rm, rv, False, momentum, eps, False], want, **tol)


# BN_CASES plus, on CUDA, channels with more elements than a block has threads.
BN_TRAIN_CASES = BN_CASES + [pytest.param(c, marks=pytest.mark.devices("cuda")) for c in
                             [((16, 5, 12, 12), True, 0.1, 1e-5), ((300, 3), False, 0.5, 1e-5)]]


@pytest.mark.parametrize("case", BN_TRAIN_CASES, ids=[str(i) for i in range(len(BN_TRAIN_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batch_norm_train_updates_running_stats(case, dtype):
    shape, affine, momentum, eps = case
    x, w, b, rm, rv = bn_inputs(shape, affine, dtype, seed=10 + len(shape))
    rm_t, rv_t = rm.clone(), rv.clone()
    want = torch.ops.aten.batch_norm(x, w, b, rm_t, rv_t, True, momentum, eps, False)
    args = [x, w, b, rm, rv, True, momentum, eps, False]
    out, new_rm, new_rv = run_mutating("batch_norm", args, [want], [3, 4])
    tol = train_tol(x)
    assert_close(out, want, **tol)
    # One element per channel: the unbiased variance is 0/0, NaN in PyTorch.
    assert_close(new_rm, rm_t, **tol)
    assert_close(new_rv, rv_t, equal_nan=True, **tol)
    assert not torch.equal(new_rm, rm)  # really updated


def test_batch_norm_train_without_running_stats():
    x, w, b, _, _ = bn_inputs((5, 4, 3, 3), True, seed=4)
    want = torch.ops.aten.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False)
    check_op("batch_norm", [x, w, b, None, None, True, 0.1, 1e-5, False], want, **F32)
    want = torch.ops.aten.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    check_op("batch_norm", [x, None, None, None, None, True, 0.1, 1e-5, False], want, **F32)


def test_batch_norm_noncontiguous():
    x, w, b, rm, rv = bn_inputs((4, 3, 5, 6), True, seed=5)
    # Eval with a transposed input and strided (every other element) stats.
    want = torch.ops.aten.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, False)
    check_op("batch_norm", [Transposed(x), Sliced(w), b, Sliced(rm), Sliced(rv),
                            False, 0.1, 1e-5, False], want, **F32)
    # Training: the strided running stats are updated in place through the
    # view (the graph returns the views).
    rm_t, rv_t = rm.clone(), rv.clone()
    want = torch.ops.aten.batch_norm(x, w, b, rm_t, rv_t, True, 0.2, 1e-5, False)
    args = [Transposed(x), w, Sliced(b), Sliced(rm), Sliced(rv), True, 0.2, 1e-5, False]
    out, new_rm, new_rv = run_mutating("batch_norm", args, [want], [3, 4])
    assert_close(out, want, **F32)
    assert_close(new_rm, rm_t, **F32)
    assert_close(new_rv, rv_t, **F32)


def test_batch_norm_errors():
    x, w, b, rm, rv = bn_inputs((4, 3), True)
    # PyTorch: running stats come both or neither (the registry accepts one).
    text, inputs = op_graph("batch_norm", [x, w, b, None, rv, True, 0.1, 1e-5, False],
                            [x])
    with pytest.raises(RunError, match="both be None or neither"):
        run_graph(text, inputs)


@pytest.mark.parametrize("case", BN_TRAIN_CASES, ids=[str(i) for i in range(len(BN_TRAIN_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_native_batch_norm_train(case, dtype):
    shape, affine, momentum, eps = case
    x, w, b, rm, rv = bn_inputs(shape, affine, dtype, seed=20 + len(shape))
    rm_t, rv_t = rm.clone(), rv.clone()
    want = list(torch.ops.aten.native_batch_norm(x, w, b, rm_t, rv_t, True, momentum, eps))
    args = [x, w, b, rm, rv, True, momentum, eps]
    out, mean, invstd, new_rm, new_rv = run_mutating("native_batch_norm", args, want, [3, 4])
    tol = train_tol(x)
    assert_close(out, want[0], **tol)
    assert_close(mean, want[1], **tol)
    assert_close(invstd, want[2], **tol)
    assert_close(new_rm, rm_t, **tol)
    assert_close(new_rv, rv_t, equal_nan=True, **tol)


def test_native_batch_norm_train_no_stats_noncontiguous():
    x, w, b, _, _ = bn_inputs((6, 4, 3, 5), True, seed=6)
    want = list(torch.ops.aten.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5))
    check_op("native_batch_norm", [Transposed(x), w, Sliced(b), None, None, True, 0.1, 1e-5],
             want, **F32)


@pytest.mark.parametrize("affine", [True, False])
def test_native_batch_norm_eval(affine):
    x, w, b, rm, rv = bn_inputs((4, 3, 5, 6), affine, seed=7)
    eps = 1e-4
    out = torch.ops.aten.native_batch_norm(x, w, b, rm, rv, False, 0.1, eps)[0]
    # PyTorch's CPU kernel returns empty save tensors in eval mode; ours are
    # [C]: the running mean and 1 / sqrt(running_var + eps).
    want = [out, rm.clone(), 1 / torch.sqrt(rv + eps)]
    check_op("native_batch_norm", [x, w, b, Sliced(rm), rv, False, 0.1, eps], want, **F32)


def test_native_batch_norm_empty_batch():
    """An empty input in eval mode: the save results are still the running
    mean and 1 / sqrt(running_var + eps)."""
    _, w, b, rm, rv = bn_inputs((4, 3), True, seed=9)
    x = torch.empty(0, 3)
    check_op("native_batch_norm", [x, w, b, Sliced(rm), rv, False, 0.1, 1e-3],
             [x, rm.clone(), 1 / torch.sqrt(rv + 1e-3)], rtol=1e-6, atol=1e-6)


@pytest.mark.devices("cuda")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batch_norm_half_matches_cpu(dtype):
    x, w, b, rm, rv = (t.to(dtype) for t in bn_inputs((4, 3, 5, 6), True, seed=11))
    # One rounding of an f64 result on both backends; the f64 sums may
    # differ in their last bits, which can move a rounding by one ulp.
    tol = dict(rtol=1e-2, atol=1e-2)
    same_as_cpu("batch_norm", [Transposed(x), w, b, rm, rv, False, 0.1, 1e-5, False], [x], **tol)
    same_as_cpu("native_batch_norm", [x, w, b, None, None, True, 0.1, 1e-5],
                [x, rm, rv], **tol)


#===--- native_batch_norm_backward -----------------------------------------===#

MASKS = [[True, True, True], [True, False, True], [False, True, False]]


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("mask", MASKS, ids=["111", "101", "010"])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (7, 5), (3, 2, 9),
                                   pytest.param((9, 3, 11, 7), marks=pytest.mark.devices("cuda"))])
def test_native_batch_norm_backward(train, affine, mask, shape):
    x, w, _, rm, rv = bn_inputs(shape, affine, seed=len(shape) + 3 * train)
    g = torch.Generator().manual_seed(30)
    go = torch.randn(shape, generator=g)
    eps = 1e-5
    if train:
        _, sm, si = torch.ops.aten.native_batch_norm(x, w, None, None, None, True, 0.1, eps)
        stats = [None, None, sm, si]
    else:
        sm = si = None
        stats = [rm, rv, None, None]
    want = list(torch.ops.aten.native_batch_norm_backward(
        go, x, w, *stats, train, eps, mask))
    c = shape[1]
    # An output the mask leaves out is undefined in PyTorch, zeros here.
    want = [t if t is not None else torch.zeros(shape if i == 0 else (c,))
            for i, t in enumerate(want)]
    args = [go, x, w, *stats, train, eps, mask]
    check_op("native_batch_norm_backward", args, want, **F32)


def test_native_batch_norm_backward_noncontiguous_f64():
    x, w, _, rm, rv = bn_inputs((4, 3, 5, 6), True, torch.float64, seed=8)
    go = torch.randn(4, 3, 5, 6, dtype=torch.float64)
    eps = 1e-5
    _, sm, si = torch.ops.aten.native_batch_norm(x, w, None, None, None, True, 0.1, eps)
    want = list(torch.ops.aten.native_batch_norm_backward(
        go, x, w, None, None, sm, si, True, eps, [True, True, True]))
    check_op("native_batch_norm_backward",
             [Transposed(go), Sliced(x), Sliced(w), None, None, Sliced(sm), si, True, eps,
              [True, True, True]], want, **F64)
    want = list(torch.ops.aten.native_batch_norm_backward(
        go, x, w, rm, rv, None, None, False, eps, [True, True, True]))
    check_op("native_batch_norm_backward",
             [go, Transposed(x), w, Sliced(rm), rv, None, None, False, eps, [1, 1, 1]],
             want, **F64)


#===--- batch_norm_double_backward -----------------------------------------===#

def double_backward_reference(x, w, b, rm, rv, go, ggI, ggG, ggB, training, eps):
    """(gI, gG, ggO) by autograd: the gradient of the first backward's
    outputs (grad_input, grad_weight, grad_bias), weighted by (ggI, ggG,
    ggB), with respect to (input, weight, grad_out). Undefined: zeros."""
    x = x.clone().requires_grad_()
    go = go.clone().requires_grad_()
    w = w.clone().requires_grad_() if w is not None else None
    b = b.clone().requires_grad_() if b is not None else None
    y = F.batch_norm(x, rm.clone() if rm is not None else None,
                     rv.clone() if rv is not None else None, w, b, training, 0.1, eps)
    wrt = [x] + ([w, b] if w is not None else [])
    firsts = torch.autograd.grad(y, wrt, go, create_graph=True)
    outs, grads = [], []
    for first, gg in zip(firsts, [ggI, ggG, ggB]):
        if gg is not None:
            outs.append(first)
            grads.append(gg)
    targets = [x, w if w is not None else x, go]
    res = torch.autograd.grad(outs, targets, grads, allow_unused=True)
    gI, gG, ggO = res
    c = x.shape[1]
    gI = gI if gI is not None else torch.zeros_like(x)
    gG = gG if (gG is not None and w is not None) else torch.zeros(c, dtype=x.dtype)
    ggO = ggO if ggO is not None else torch.zeros_like(x)
    return [gI.detach(), gG.detach(), ggO.detach()]


def dbb_inputs(shape, affine, which, seed):
    g = torch.Generator().manual_seed(seed)
    d = torch.float64
    c = shape[1]
    x = torch.randn(shape, generator=g, dtype=d) * 1.5 + 0.3
    w = torch.randn(c, generator=g, dtype=d) if affine else None
    b = torch.randn(c, generator=g, dtype=d) if affine else None
    rm = torch.randn(c, generator=g, dtype=d)
    rv = torch.rand(c, generator=g, dtype=d) + 0.5
    go = torch.randn(shape, generator=g, dtype=d)
    ggI = torch.randn(shape, generator=g, dtype=d) if "I" in which else None
    ggG = torch.randn(c, generator=g, dtype=d) if "G" in which and affine else None
    ggB = torch.randn(c, generator=g, dtype=d) if "B" in which and affine else None
    return x, w, b, rm, rv, go, ggI, ggG, ggB


# (shape, affine, which of ggI/ggG/ggB are given)
DBB_CASES = [
    ((4, 3, 5, 6), True, "IGB"),
    ((4, 3, 5, 6), True, "I"),
    ((4, 3, 5, 6), True, "GB"),
    ((6, 5), True, "IG"),
    ((3, 2, 7), True, "B"),
    ((4, 3, 5, 6), False, "I"),
    ((5, 4), False, "I"),
    # Several blocks per channel on CUDA.
    pytest.param(((12, 3, 9, 8), True, "IGB"), marks=pytest.mark.devices("cuda")),
]


def run_double_backward(x, w, rm, rv, go, ggI, ggG, ggB, training, eps, wrap=False):
    if training:
        _, sm, si = torch.ops.aten.native_batch_norm(x, w, None, None, None, True, 0.1, eps)
    else:
        sm = si = None
    c = x.shape[1]
    results = [torch.empty_like(x), torch.empty(c, dtype=x.dtype), torch.empty_like(x)]
    W = (lambda t, k: k(t) if t is not None else None) if wrap else (lambda t, k: t)
    args = [W(x, Transposed), W(w, Sliced), W(ggI, Sliced), ggG, W(ggB, Sliced),
            W(go, Transposed), rm, rv, training, eps, W(sm, Sliced), si,
            [True, w is not None, True]]
    return run_op("batch_norm_double_backward", args, results)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("case", DBB_CASES, ids=[str(i) for i in range(len(DBB_CASES))])
def test_batch_norm_double_backward_vs_autograd(training, case):
    shape, affine, which = case
    eps = 1e-3
    x, w, b, rm, rv, go, ggI, ggG, ggB = dbb_inputs(shape, affine, which, 40 + len(shape))
    want = double_backward_reference(x, w, b, None if training else rm,
                                     None if training else rv, go, ggI, ggG, ggB,
                                     training, eps)
    got = run_double_backward(x, w, rm, rv, go, ggI, ggG, ggB, training, eps)
    for gt, wt in zip(got, want):
        assert_close(gt, wt, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_double_backward_noncontiguous(training):
    x, w, b, rm, rv, go, ggI, ggG, ggB = dbb_inputs((4, 3, 5, 6), True, "IGB", 50)
    eps = 1e-5
    want = double_backward_reference(x, w, b, None if training else rm,
                                     None if training else rv, go, ggI, ggG, ggB,
                                     training, eps)
    got = run_double_backward(x, w, rm, rv, go, ggI, ggG, ggB, training, eps, wrap=True)
    for gt, wt in zip(got, want):
        assert_close(gt, wt, rtol=1e-9, atol=1e-10)


def backward_graph(shape, affine, training, eps):
    """A graph computing native_batch_norm_backward from (x, weight, gO)
    (and, in eval mode, the running stats): in training the saved stats come
    from native_batch_norm of the same x, so they move with x."""
    d = "f64"
    T = "tensor<" + "x".join(map(str, shape)) + "x" + d + ">"
    TC = f"tensor<{shape[1]}x{d}>"
    params = [f"%x: {T} {{trace.input = \"x\"}}", f"%go: {T} {{trace.input = \"go\"}}"]
    w = "None"
    tensor_types = []
    if affine:
        params.append(f"%w: {TC} {{trace.input = \"w\"}}")
        w = "%w"
    body = []
    if training:
        wt = [TC] if affine else []
        body.append(f"%n:3 = pyop \"native_batch_norm\"(%x, {w}, None, None, None, True, 0.1, "
                    f"{eps!r}) : ({', '.join([T] + wt)}) -> ({T}, {TC}, {TC})")
        stats = "None, None, %n#1, %n#2"
        tensor_types = [T, T] + wt + [TC, TC]
    else:
        params.append(f"%rm: {TC} {{trace.input = \"rm\"}}")
        params.append(f"%rv: {TC} {{trace.input = \"rv\"}}")
        stats = "%rm, %rv, None, None"
        tensor_types = [T, T] + ([TC] if affine else []) + [TC, TC]
    body.append(f"%b:3 = pyop \"native_batch_norm_backward\"(%go, %x, {w}, {stats}, "
                f"{'True' if training else 'False'}, {eps!r}, [True, True, True]) : "
                f"({', '.join(tensor_types)}) -> ({T}, {TC}, {TC})")
    body.append(f"ret %b#0, %b#1, %b#2 : {T}, {TC}, {TC}")
    return (f"trace.graph @g({', '.join(params)}) -> ({T}, {TC}, {TC}) {{\n  " +
            "\n  ".join(body) + "\n}\n")


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("case", [((3, 2, 4, 3), True, "IGB"), ((6, 3), True, "IG"),
                                  ((4, 3, 5), False, "I")],
                         ids=["4d-affine", "2d-affine", "3d-plain"])
def test_batch_norm_double_backward_finite_differences(training, case):
    """The double backward is the vector-Jacobian product of our own
    native_batch_norm_backward (with, in training, the saved stats of our
    native_batch_norm): check it against central differences of
    <ggI, grad_input> + <ggG, grad_weight> + <ggB, grad_bias> along random
    directions of (input, weight, grad_out)."""
    shape, affine, which = case
    eps = 1e-3
    x, w, b, rm, rv, go, ggI, ggG, ggB = dbb_inputs(shape, affine, which, 60 + len(shape))
    gI, gG, ggO = run_double_backward(x, w, rm, rv, go, ggI, ggG, ggB, training, eps)
    text = backward_graph(shape, affine, training, eps)
    c = shape[1]

    def phi(xv, wv, gov):
        inputs = {"x": xv, "go": gov}
        if affine:
            inputs["w"] = wv
        if not training:
            inputs.update(rm=rm, rv=rv)
        (bI, bW, bB), _ = run_graph(text, inputs)
        total = 0.0
        for out, gg in ((bI, ggI), (bW, ggG), (bB, ggB)):
            if gg is not None:
                total += float((out * gg).sum())
        return total

    h = 1e-5
    g = torch.Generator().manual_seed(70)
    for _ in range(3):
        dx = torch.randn(shape, generator=g, dtype=torch.float64)
        dw = torch.randn(c, generator=g, dtype=torch.float64) if affine else None
        dgo = torch.randn(shape, generator=g, dtype=torch.float64)
        plus = phi(x + h * dx, w + h * dw if affine else None, go + h * dgo)
        minus = phi(x - h * dx, w - h * dw if affine else None, go - h * dgo)
        numeric = (plus - minus) / (2 * h)
        analytic = float((gI * dx).sum()) + float((ggO * dgo).sum())
        if affine:
            analytic += float((gG * dw).sum())
        assert math.isclose(analytic, numeric, rel_tol=1e-6, abs_tol=1e-8), (analytic, numeric)


#===--- nll_loss -----------------------------------------------------------===#

def log_probs(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.log_softmax(torch.randn(shape, generator=g, dtype=dtype), dim=1 if len(shape) > 1 else 0)


def targets(shape, classes, seed, ignore=None, ignore_every=3):
    g = torch.Generator().manual_seed(seed + 1)
    t = torch.randint(0, classes, shape, generator=g)
    if ignore is not None and t.dim() > 0:
        t.view(-1)[::ignore_every] = ignore
    return t


REDUCTIONS = [0, 1, 2, "none", "mean", "sum"]
RED_NAMES = {0: "none", 1: "mean", 2: "sum"}


def red_name(r):
    return RED_NAMES.get(r, r)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True], ids=["noweight", "weight"])
@pytest.mark.parametrize("ignore_index", [None, -100, 2], ids=["dflt", "m100", "i2"])
def test_nll_loss(reduction, weighted, ignore_index):
    n, c = 9, 5
    x = log_probs((n, c), 80)
    w = torch.rand(c, generator=torch.Generator().manual_seed(81)) + 0.1 if weighted else None
    ii = -100 if ignore_index is None else ignore_index
    t = targets((n,), c, 82, ignore=ii if ignore_index is not None else None)
    want = F.nll_loss(x, t, w, ignore_index=ii, reduction=red_name(reduction))
    args = [x, t, w, reduction] + ([] if ignore_index is None else [ignore_index])
    check_op("nll_loss", args, want, **F32)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_unbatched_and_f64(reduction):
    x = log_probs((6,), 83)
    t = torch.tensor(4)
    w = torch.rand(6) + 0.5
    check_op("nll_loss", [x, t, w, reduction, -100],
             F.nll_loss(x, t, w, reduction=red_name(reduction)), **F32)
    # The only target ignored: 0 for none/sum, 0 / 0 = NaN for the mean.
    want = F.nll_loss(x, t, None, reduction=red_name(reduction), ignore_index=4)
    got = run_op("nll_loss", [x, t, None, reduction, 4], [want])[0]
    assert_close(got, want, equal_nan=True)
    xd = log_probs((7, 4), 84, torch.float64)
    td = targets((7,), 4, 85)
    check_op("nll_loss", [xd, td, None, reduction],
             F.nll_loss(xd, td, reduction=red_name(reduction)), **F64)


def test_nll_loss_noncontiguous_and_edge_cases():
    x = log_probs((8, 5), 86)
    t = targets((8,), 5, 87, ignore=1, ignore_every=4)
    w = torch.rand(5) + 0.2
    # Transposed input, strided target and weight.
    for red in (0, 1, 2):
        check_op("nll_loss", [Transposed(x), Sliced(t), Sliced(w), red, 1],
                 F.nll_loss(x, t, w, reduction=red_name(red), ignore_index=1), **F32)
    # Every target ignored: the mean is 0 / 0 = NaN, the sum 0.
    t_all = torch.full((8,), -100)
    want = F.nll_loss(x, t_all)
    got = run_op("nll_loss", [x, t_all], [want])[0]
    assert torch.isnan(want) and torch.isnan(got)
    check_op("nll_loss", [x, t_all, None, 2], F.nll_loss(x, t_all, reduction="sum"))
    # Unbatched input whose target is ignored.
    x1 = log_probs((4,), 88)
    t1 = torch.tensor(3)
    check_op("nll_loss", [x1, t1, None, 2, 3], F.nll_loss(x1, t1, reduction="sum", ignore_index=3))
    # Out of range target: an error naming it, as PyTorch's "Target 5 is
    # out of bounds."
    bad = t.clone()
    bad[2] = 5
    text, inputs = op_graph("nll_loss", [x, bad], [want])
    with pytest.raises(RunError, match="Target 5 is out of bounds"):
        run_graph(text, inputs)
    with pytest.raises(IndexError):
        F.nll_loss(x, bad)


@pytest.mark.parametrize("op", ["nll_loss", "cross_entropy"])
def test_out_of_range_target_is_an_error(op):
    """The first out-of-range position is reported with its class index,
    as PyTorch's "Target 5 is out of bounds." (on CUDA: found on the
    device)."""
    x = log_probs((8, 5), 86)
    t = targets((8,), 5, 87)
    for bad, message in (({2: 5}, "Target 5 is"), ({6: 9, 3: -3}, "Target -3 is")):
        tb = t.clone()
        for pos, k in bad.items():
            tb[pos] = k
        text, inputs = op_graph(op, [x, tb, None, 0], [torch.empty(8)])
        with pytest.raises(RunError, match=message + " out of bounds"):
            run_graph(text, inputs)
    # An out-of-range ignore_index is no error.
    tb = t.clone()
    tb[1] = -7
    want = (F.nll_loss if op == "nll_loss" else F.cross_entropy)(x, tb, ignore_index=-7)
    check_op(op, [x, tb, None, 1, -7], want, **F32)


#===--- cross_entropy ------------------------------------------------------===#

# (input shape, weighted, ignore_index, label_smoothing)
CE_INDEX_CASES = [
    ((9, 5), False, None, 0.0),
    ((9, 5), True, None, 0.0),
    ((9, 5), False, 2, 0.1),
    ((9, 5), True, -100, 0.25),
    ((9, 5), True, 3, 0.0),
    ((3, 4, 5, 2), False, None, 0.0),   # [N, C, d1, d2]
    ((3, 4, 5, 2), True, 1, 0.2),
    ((2, 6, 7), False, -100, 0.3),
    ((6,), False, None, 0.0),           # [C], target []
    ((6,), True, None, 0.15),
]


@pytest.mark.parametrize("reduction", [0, 1, 2, "mean"])
@pytest.mark.parametrize("case", CE_INDEX_CASES, ids=[str(i) for i in range(len(CE_INDEX_CASES))])
def test_cross_entropy_indices(case, reduction):
    shape, weighted, ignore_index, smoothing = case
    g = torch.Generator().manual_seed(90 + len(shape))
    x = torch.randn(shape, generator=g) * 2
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    ii = -100 if ignore_index is None else ignore_index
    t = targets(tshape, c, 91, ignore=ii if ignore_index is not None else None)
    w = torch.rand(c, generator=g) + 0.1 if weighted else None
    want = F.cross_entropy(x, t, w, ignore_index=ii, reduction=red_name(reduction),
                           label_smoothing=smoothing)
    args = [x, t, w, reduction, ii, smoothing]
    check_op("cross_entropy", args, want, **F32)


# (input shape, weighted, label_smoothing)
CE_PROB_CASES = [
    ((7, 4), False, 0.0),
    ((7, 4), True, 0.0),
    ((7, 4), True, 0.2),
    ((3, 5, 4, 2), False, 0.1),
    ((3, 5, 4, 2), True, 0.0),
    ((5,), True, 0.1),                  # [C]
]


@pytest.mark.parametrize("reduction", [0, 1, 2, "sum"])
@pytest.mark.parametrize("case", CE_PROB_CASES, ids=[str(i) for i in range(len(CE_PROB_CASES))])
def test_cross_entropy_probabilities(case, reduction):
    shape, weighted, smoothing = case
    g = torch.Generator().manual_seed(100 + len(shape))
    x = torch.randn(shape, generator=g) * 2
    cdim = 1 if len(shape) > 1 else 0
    t = torch.softmax(torch.randn(shape, generator=g), dim=cdim)
    c = shape[cdim]
    w = torch.rand(c, generator=g) + 0.1 if weighted else None
    want = F.cross_entropy(x, t, w, reduction=red_name(reduction), label_smoothing=smoothing)
    check_op("cross_entropy", [x, t, w, reduction, -100, smoothing], want, **F32)


def test_cross_entropy_defaults_noncontiguous_f64():
    torch.manual_seed(110)
    x = torch.randn(3, 4, 5, 6)
    t = torch.randint(0, 4, (3, 5, 6))
    t[0, 0, :] = -100
    check_op("cross_entropy", [x, t], F.cross_entropy(x, t), **F32)
    # Transposed input (spatial dims swapped in storage), strided target.
    check_op("cross_entropy", [Transposed(x), Sliced(t), None, 0],
             F.cross_entropy(x, t, reduction="none"), **F32)
    w = torch.rand(4) + 0.5
    check_op("cross_entropy", [Sliced(x), t, Sliced(w), 1, -100, 0.1],
             F.cross_entropy(x, t, w, label_smoothing=0.1), **F32)
    # Probabilities, transposed input and target.
    p = torch.softmax(torch.randn(3, 4, 5, 6), dim=1)
    check_op("cross_entropy", [Transposed(x), Transposed(p), w, "none", -100, 0.2],
             F.cross_entropy(x, p, w, reduction="none", label_smoothing=0.2), **F32)
    # f64.
    xd = torch.randn(8, 5, dtype=torch.float64)
    td = torch.randint(0, 5, (8,))
    wd = torch.rand(5, dtype=torch.float64) + 0.5
    check_op("cross_entropy", [xd, td, wd, 1, 0, 0.3],
             F.cross_entropy(xd, td, wd, ignore_index=0, label_smoothing=0.3), **F64)
    pd = torch.softmax(torch.randn(8, 5, dtype=torch.float64), dim=1)
    check_op("cross_entropy", [xd, pd, wd, 1, -100, 0.3],
             F.cross_entropy(xd, pd, wd, label_smoothing=0.3), **F64)


def test_cross_entropy_all_ignored_is_nan():
    x = torch.randn(4, 3)
    t = torch.full((4,), 1)
    for smoothing in (0.0, 0.2):
        want = F.cross_entropy(x, t, ignore_index=1, label_smoothing=smoothing)
        got = run_op("cross_entropy", [x, t, None, 1, 1, smoothing], [want])[0]
        assert torch.isnan(want) and torch.isnan(got)


@pytest.mark.parametrize("reduction", [0, 1])
def test_cross_entropy_many_classes(reduction):
    """Classes spread over a CUDA block's threads, and -inf logits."""
    g = torch.Generator().manual_seed(120)
    x = torch.randn(37, 1000, generator=g) * 3
    x[3, 10:500] = float("-inf")
    t = torch.randint(0, 1000, (37,), generator=g)
    t[3] = 7
    w = torch.rand(1000, generator=g) + 0.1
    want = F.cross_entropy(x, t, w, reduction=red_name(reduction), label_smoothing=0.0)
    check_op("cross_entropy", [x, t, w, reduction, -100, 0.0], want, **F32)
    p = torch.softmax(torch.randn(37, 1000, generator=g), dim=1)
    want = F.cross_entropy(x, p, w, reduction=red_name(reduction), label_smoothing=0.1)
    check_op("cross_entropy", [x, p, w, reduction, -100, 0.1], want, rtol=1e-5, atol=1e-4)


@pytest.mark.devices("cuda")
@pytest.mark.parametrize("reduction", [0, 1])
def test_cross_entropy_more_positions_than_blocks(reduction):
    """One block per position, 65535 blocks a launch: the rest loop."""
    g = torch.Generator().manual_seed(121)
    xl = torch.randn(70000, 3, generator=g)
    tl = torch.randint(0, 3, (70000,), generator=g)
    want = F.cross_entropy(xl, tl, reduction=red_name(reduction), label_smoothing=0.05)
    check_op("cross_entropy", [xl, tl, None, reduction, -100, 0.05], want, **F32)
