"""PyTorch-oracle tests of the CUDA NN kernels: conv2d, max_pool2d,
adaptive_avg_pool2d (lib/Runtime/CUDA/Conv.cpp/.cu), batch_norm,
native_batch_norm, native_batch_norm_backward, batch_norm_double_backward
(Norm.cpp/.cu), nll_loss and cross_entropy (Loss.cpp/.cu).

The configurations and tolerances are test_nn_ops.py's (imported from it),
run with device="cuda"; on top of those: inputs large enough for several
blocks per reduction and more positions than one grid of blocks, class
indices out of range found on the device, f16/bf16 and empty inputs against
the CPU backend. Skipped, with one line saying why, where trace-run finds no
CUDA device; scripts/gpu-check.sh runs it on a GPU.
"""
import math

import pytest
import torch
import torch.nn.functional as F

from traceir_testing import (RunError, Sliced, Transposed, check_op, cuda_status,
                             op_graph, run_graph)
import test_nn_ops
from test_nn_ops import (ADAPTIVE_CASES, BN_CASES, CE_INDEX_CASES,  # noqa: F401
                         CE_PROB_CASES, CONV32, CONV64, CONV_CASES, DBB_CASES, F32,
                         F64, MASKS, POOL_CASES, REDUCTIONS, assert_close,
                         backward_graph, bn_inputs, dbb_inputs,
                         double_backward_reference, graph_returning_args,
                         log_probs, red_name, targets, train_tol)

AVAILABLE, REASON = cuda_status()
if not AVAILABLE:
    pytest.skip(f"CUDA tier skipped: {REASON}", allow_module_level=True)

CUDA = dict(device="cuda")


def run_op(op, args, results, device="cuda"):
    """Runs `op` on `device` and returns its outputs (no comparison),
    checking the memory report as check_op does."""
    text, inputs = op_graph(op, args, results)
    outputs, report = run_graph(text, inputs, device=device)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    return outputs


def run_mutating(op, args, results, extra):
    text, inputs = graph_returning_args(op, args, results, extra)
    outputs, report = run_graph(text, inputs, **CUDA)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    return outputs


def same_as_cpu(op, args, results, **tol):
    """The CUDA kernel against the CPU backend's (for what PyTorch does
    differently or not at all)."""
    want = run_op(op, args, results, device="cpu")
    got = run_op(op, args, results)
    for g, w in zip(got, want):
        assert_close(g, w, equal_nan=True, **tol)


#===--- conv2d -------------------------------------------------------------===#

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
    check_op("conv2d", [x, w, b, stride, padding, dilation, groups], want, **tol, **CUDA)


def test_conv2d_defaults_and_noncontiguous():
    torch.manual_seed(1)
    x = torch.randn(2, 4, 7, 6)
    w = torch.randn(6, 2, 3, 3)
    b = torch.randn(6)
    w0 = torch.randn(5, 4, 3, 3)
    check_op("conv2d", [x, w0], F.conv2d(x, w0), **CONV32, **CUDA)
    want = F.conv2d(x, w, b, 1, 1, 1, 2)
    check_op("conv2d", [Transposed(x), Sliced(w), Sliced(b), 1, 1, 1, 2], want,
             **CONV32, **CUDA)
    xu = torch.randn(4, 5, 9)
    check_op("conv2d", [Transposed(xu), w, None, 2, 1, 1, 2],
             F.conv2d(xu, w, None, 2, 1, 1, 2), **CONV32, **CUDA)


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
             **tol, **CUDA)
    w1 = torch.randn(12, 2, 1, 1, generator=g, dtype=dtype)
    check_op("conv2d", [x, w1, None, 1, 0, 1, 4], F.conv2d(x, w1, None, 1, 0, 1, 4),
             **tol, **CUDA)


#===--- max_pool2d / adaptive_avg_pool2d -----------------------------------===#

@pytest.mark.parametrize("case", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_max_pool2d(case, dtype):
    xs, k, stride, padding, dilation, ceil = case
    g = torch.Generator().manual_seed(len(xs) * 7 + sum(xs))
    x = torch.randn(xs, generator=g, dtype=dtype)
    want = F.max_pool2d(x, k, stride if stride != [] else None, padding, dilation, ceil)
    check_op("max_pool2d", [x, k, stride, padding, dilation, ceil], want, **CUDA)


def test_max_pool2d_defaults_noncontiguous_nan():
    torch.manual_seed(2)
    x = torch.randn(2, 3, 9, 8)
    check_op("max_pool2d", [x, 3], F.max_pool2d(x, 3), **CUDA)
    check_op("max_pool2d", [Transposed(x), 2, 1, 1, 1, False],
             F.max_pool2d(x, 2, 1, 1, 1, False), **CUDA)
    check_op("max_pool2d", [Sliced(x), 3, 2, 1, 1, True],
             F.max_pool2d(x, 3, 2, 1, 1, True), **CUDA)
    y = torch.randn(1, 2, 6, 6)
    y[0, 0, 1, 1] = float("nan")
    y[0, 1, 2:4, 2:4] = float("-inf")
    want = F.max_pool2d(y, 2, 2)
    got = run_op("max_pool2d", [y, 2, 2], [want])[0]
    assert_close(got, want, equal_nan=True)
    assert torch.isnan(got[0, 0, 0, 0])


@pytest.mark.parametrize("case", ADAPTIVE_CASES, ids=[str(i) for i in range(len(ADAPTIVE_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_adaptive_avg_pool2d(case, dtype):
    xs, size = case
    g = torch.Generator().manual_seed(sum(xs))
    x = torch.randn(xs, generator=g, dtype=dtype)
    want = F.adaptive_avg_pool2d(x, size)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else F64
    check_op("adaptive_avg_pool2d", [x, size], want, **tol, **CUDA)


def test_adaptive_avg_pool2d_noncontiguous():
    torch.manual_seed(3)
    x = torch.randn(2, 3, 7, 9)
    check_op("adaptive_avg_pool2d", [Transposed(x), (3, 4)],
             F.adaptive_avg_pool2d(x, (3, 4)), rtol=1e-5, atol=1e-6, **CUDA)
    check_op("adaptive_avg_pool2d", [Sliced(x), 2],
             F.adaptive_avg_pool2d(x, 2), rtol=1e-5, atol=1e-6, **CUDA)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_pooling_half_matches_cpu(dtype):
    x = torch.randn(2, 3, 9, 7).to(dtype)
    same_as_cpu("max_pool2d", [Transposed(x), 3, 2, 1, 1, True],
                [F.max_pool2d(x.float(), 3, 2, 1, 1, True).to(dtype)], rtol=0, atol=0)
    same_as_cpu("adaptive_avg_pool2d", [x, (4, 3)],
                [F.adaptive_avg_pool2d(x.float(), (4, 3)).to(dtype)], rtol=0, atol=0)


#===--- batch_norm / native_batch_norm -------------------------------------===#

@pytest.mark.parametrize("case", BN_CASES, ids=[str(i) for i in range(len(BN_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batch_norm_eval(case, dtype):
    shape, affine, momentum, eps = case
    x, w, b, rm, rv = bn_inputs(shape, affine, dtype, seed=len(shape))
    want = torch.ops.aten.batch_norm(x, w, b, rm, rv, False, momentum, eps, False)
    tol = F32 if dtype == torch.float32 else F64
    check_op("batch_norm", [x, w, b, rm, rv, False, momentum, eps, False], want, **tol, **CUDA)


# BN_CASES plus channels with more elements than one block has threads.
BN_TRAIN_CASES = BN_CASES + [((16, 5, 12, 12), True, 0.1, 1e-5), ((300, 3), False, 0.5, 1e-5)]


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
    assert_close(new_rm, rm_t, **tol)
    assert_close(new_rv, rv_t, equal_nan=True, **tol)
    assert not torch.equal(new_rm, rm)


def test_batch_norm_train_without_running_stats():
    x, w, b, _, _ = bn_inputs((5, 4, 3, 3), True, seed=4)
    want = torch.ops.aten.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False)
    check_op("batch_norm", [x, w, b, None, None, True, 0.1, 1e-5, False], want, **F32, **CUDA)
    want = torch.ops.aten.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    check_op("batch_norm", [x, None, None, None, None, True, 0.1, 1e-5, False], want,
             **F32, **CUDA)


def test_batch_norm_noncontiguous():
    x, w, b, rm, rv = bn_inputs((4, 3, 5, 6), True, seed=5)
    want = torch.ops.aten.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, False)
    check_op("batch_norm", [Transposed(x), Sliced(w), b, Sliced(rm), Sliced(rv),
                            False, 0.1, 1e-5, False], want, **F32, **CUDA)
    rm_t, rv_t = rm.clone(), rv.clone()
    want = torch.ops.aten.batch_norm(x, w, b, rm_t, rv_t, True, 0.2, 1e-5, False)
    args = [Transposed(x), w, Sliced(b), Sliced(rm), Sliced(rv), True, 0.2, 1e-5, False]
    out, new_rm, new_rv = run_mutating("batch_norm", args, [want], [3, 4])
    assert_close(out, want, **F32)
    assert_close(new_rm, rm_t, **F32)
    assert_close(new_rv, rv_t, **F32)


def test_batch_norm_errors():
    x, w, b, rm, rv = bn_inputs((4, 3), True)
    text, inputs = op_graph("batch_norm", [x, w, b, None, rv, True, 0.1, 1e-5, False], [x])
    with pytest.raises(RunError, match="both be None or neither"):
        run_graph(text, inputs, **CUDA)


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
             want, **F32, **CUDA)


@pytest.mark.parametrize("affine", [True, False])
def test_native_batch_norm_eval(affine):
    x, w, b, rm, rv = bn_inputs((4, 3, 5, 6), affine, seed=7)
    eps = 1e-4
    out = torch.ops.aten.native_batch_norm(x, w, b, rm, rv, False, 0.1, eps)[0]
    want = [out, rm.clone(), 1 / torch.sqrt(rv + eps)]
    check_op("native_batch_norm", [x, w, b, Sliced(rm), rv, False, 0.1, eps], want,
             **F32, **CUDA)


def test_native_batch_norm_empty_batch_matches_cpu():
    """An empty input in eval mode: the save results are the running mean
    and 1 / sqrt(running_var + eps), as on the CPU."""
    _, w, b, rm, rv = bn_inputs((4, 3), True, seed=9)
    x = torch.empty(0, 3)
    same_as_cpu("native_batch_norm", [x, w, b, Sliced(rm), rv, False, 0.1, 1e-3],
                [x, rm, rv], rtol=1e-6, atol=1e-6)


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

@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("mask", MASKS, ids=["111", "101", "010"])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (7, 5), (3, 2, 9), (9, 3, 11, 7)])
def test_native_batch_norm_backward(train, affine, mask, shape):
    x, w, _, rm, rv = bn_inputs(shape, affine, seed=len(shape) + 3 * train)
    g = torch.Generator().manual_seed(30)
    go = torch.randn(shape, generator=g)
    eps = 1e-5
    if train:
        _, sm, si = torch.ops.aten.native_batch_norm(x, w, None, None, None, True, 0.1, eps)
        stats = [None, None, sm, si]
    else:
        stats = [rm, rv, None, None]
    want = list(torch.ops.aten.native_batch_norm_backward(go, x, w, *stats, train, eps, mask))
    c = shape[1]
    want = [t if t is not None else torch.zeros(shape if i == 0 else (c,))
            for i, t in enumerate(want)]
    check_op("native_batch_norm_backward", [go, x, w, *stats, train, eps, mask], want,
             **F32, **CUDA)


def test_native_batch_norm_backward_noncontiguous_f64():
    x, w, _, rm, rv = bn_inputs((4, 3, 5, 6), True, torch.float64, seed=8)
    go = torch.randn(4, 3, 5, 6, dtype=torch.float64)
    eps = 1e-5
    _, sm, si = torch.ops.aten.native_batch_norm(x, w, None, None, None, True, 0.1, eps)
    want = list(torch.ops.aten.native_batch_norm_backward(
        go, x, w, None, None, sm, si, True, eps, [True, True, True]))
    check_op("native_batch_norm_backward",
             [Transposed(go), Sliced(x), Sliced(w), None, None, Sliced(sm), si, True, eps,
              [True, True, True]], want, **F64, **CUDA)
    want = list(torch.ops.aten.native_batch_norm_backward(
        go, x, w, rm, rv, None, None, False, eps, [True, True, True]))
    check_op("native_batch_norm_backward",
             [go, Transposed(x), w, Sliced(rm), rv, None, None, False, eps, [1, 1, 1]],
             want, **F64, **CUDA)


#===--- batch_norm_double_backward -----------------------------------------===#

def run_double_backward(*args, **kwargs):
    return test_nn_ops.run_double_backward(*args, run=run_op, **kwargs)


# test_nn_ops.py's DBB_CASES and its noncontiguous case run on CUDA under
# TRACEIR_DEVICE=cuda (scripts/gpu-check.sh); this adds a larger input.
DBB_CUDA_CASES = [((12, 3, 9, 8), True, "IGB")]


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("case", DBB_CUDA_CASES, ids=[str(i) for i in range(len(DBB_CUDA_CASES))])
def test_batch_norm_double_backward_vs_autograd(training, case):
    test_nn_ops.check_double_backward_vs_autograd(training, case, run=run_op)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("case", [((3, 2, 4, 3), True, "IGB"), ((6, 3), True, "IG"),
                                  ((4, 3, 5), False, "I")],
                         ids=["4d-affine", "2d-affine", "3d-plain"])
def test_batch_norm_double_backward_finite_differences(training, case):
    """As test_nn_ops.py's, with both the double backward and the first
    backward it differentiates running on CUDA."""
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
        (bI, bW, bB), _ = run_graph(text, inputs, **CUDA)
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
    check_op("nll_loss", args, want, **F32, **CUDA)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_unbatched_and_f64(reduction):
    x = log_probs((6,), 83)
    t = torch.tensor(4)
    w = torch.rand(6) + 0.5
    check_op("nll_loss", [x, t, w, reduction, -100],
             F.nll_loss(x, t, w, reduction=red_name(reduction)), **F32, **CUDA)
    want = F.nll_loss(x, t, None, reduction=red_name(reduction), ignore_index=4)
    got = run_op("nll_loss", [x, t, None, reduction, 4], [want])[0]
    assert_close(got, want, equal_nan=True)
    xd = log_probs((7, 4), 84, torch.float64)
    td = targets((7,), 4, 85)
    check_op("nll_loss", [xd, td, None, reduction],
             F.nll_loss(xd, td, reduction=red_name(reduction)), **F64, **CUDA)


def test_nll_loss_noncontiguous_and_edge_cases():
    x = log_probs((8, 5), 86)
    t = targets((8,), 5, 87, ignore=1, ignore_every=4)
    w = torch.rand(5) + 0.2
    for red in (0, 1, 2):
        check_op("nll_loss", [Transposed(x), Sliced(t), Sliced(w), red, 1],
                 F.nll_loss(x, t, w, reduction=red_name(red), ignore_index=1), **F32, **CUDA)
    t_all = torch.full((8,), -100)
    want = F.nll_loss(x, t_all)
    got = run_op("nll_loss", [x, t_all], [want])[0]
    assert torch.isnan(want) and torch.isnan(got)
    check_op("nll_loss", [x, t_all, None, 2], F.nll_loss(x, t_all, reduction="sum"), **CUDA)
    x1 = log_probs((4,), 88)
    t1 = torch.tensor(3)
    check_op("nll_loss", [x1, t1, None, 2, 3],
             F.nll_loss(x1, t1, reduction="sum", ignore_index=3), **CUDA)


@pytest.mark.parametrize("op", ["nll_loss", "cross_entropy"])
def test_out_of_range_target_found_on_device(op):
    """The first out-of-range position is reported with its class index,
    as the CPU's "Target 5 is out of bounds."."""
    x = log_probs((8, 5), 86)
    t = targets((8,), 5, 87)
    for bad, message in (({2: 5}, "Target 5 is"), ({6: 9, 3: -3}, "Target -3 is")):
        tb = t.clone()
        for pos, k in bad.items():
            tb[pos] = k
        text, inputs = op_graph(op, [x, tb, None, 0], [torch.empty(8)])
        with pytest.raises(RunError, match=message + " out of bounds"):
            run_graph(text, inputs, **CUDA)
    # An out-of-range ignore_index is no error.
    tb = t.clone()
    tb[1] = -7
    want = (F.nll_loss if op == "nll_loss" else F.cross_entropy)(x, tb, ignore_index=-7)
    check_op(op, [x, tb, None, 1, -7], want, **F32, **CUDA)


#===--- cross_entropy ------------------------------------------------------===#

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
    check_op("cross_entropy", [x, t, w, reduction, ii, smoothing], want, **F32, **CUDA)


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
    check_op("cross_entropy", [x, t, w, reduction, -100, smoothing], want, **F32, **CUDA)


def test_cross_entropy_defaults_noncontiguous_f64():
    torch.manual_seed(110)
    x = torch.randn(3, 4, 5, 6)
    t = torch.randint(0, 4, (3, 5, 6))
    t[0, 0, :] = -100
    check_op("cross_entropy", [x, t], F.cross_entropy(x, t), **F32, **CUDA)
    check_op("cross_entropy", [Transposed(x), Sliced(t), None, 0],
             F.cross_entropy(x, t, reduction="none"), **F32, **CUDA)
    w = torch.rand(4) + 0.5
    check_op("cross_entropy", [Sliced(x), t, Sliced(w), 1, -100, 0.1],
             F.cross_entropy(x, t, w, label_smoothing=0.1), **F32, **CUDA)
    p = torch.softmax(torch.randn(3, 4, 5, 6), dim=1)
    check_op("cross_entropy", [Transposed(x), Transposed(p), w, "none", -100, 0.2],
             F.cross_entropy(x, p, w, reduction="none", label_smoothing=0.2), **F32, **CUDA)
    xd = torch.randn(8, 5, dtype=torch.float64)
    td = torch.randint(0, 5, (8,))
    wd = torch.rand(5, dtype=torch.float64) + 0.5
    check_op("cross_entropy", [xd, td, wd, 1, 0, 0.3],
             F.cross_entropy(xd, td, wd, ignore_index=0, label_smoothing=0.3), **F64, **CUDA)
    pd = torch.softmax(torch.randn(8, 5, dtype=torch.float64), dim=1)
    check_op("cross_entropy", [xd, pd, wd, 1, -100, 0.3],
             F.cross_entropy(xd, pd, wd, label_smoothing=0.3), **F64, **CUDA)


def test_cross_entropy_all_ignored_is_nan():
    x = torch.randn(4, 3)
    t = torch.full((4,), 1)
    for smoothing in (0.0, 0.2):
        want = F.cross_entropy(x, t, ignore_index=1, label_smoothing=smoothing)
        got = run_op("cross_entropy", [x, t, None, 1, 1, smoothing], [want])[0]
        assert torch.isnan(want) and torch.isnan(got)


@pytest.mark.parametrize("reduction", [0, 1])
def test_cross_entropy_many_classes(reduction):
    """Classes spread over a block's threads, and -inf logits."""
    g = torch.Generator().manual_seed(120)
    x = torch.randn(37, 1000, generator=g) * 3
    x[3, 10:500] = float("-inf")
    t = torch.randint(0, 1000, (37,), generator=g)
    t[3] = 7
    w = torch.rand(1000, generator=g) + 0.1
    want = F.cross_entropy(x, t, w, reduction=red_name(reduction), label_smoothing=0.0)
    check_op("cross_entropy", [x, t, w, reduction, -100, 0.0], want, **F32, **CUDA)
    p = torch.softmax(torch.randn(37, 1000, generator=g), dim=1)
    want = F.cross_entropy(x, p, w, reduction=red_name(reduction), label_smoothing=0.1)
    check_op("cross_entropy", [x, p, w, reduction, -100, 0.1], want,
             rtol=1e-5, atol=1e-4, **CUDA)


@pytest.mark.parametrize("reduction", [0, 1])
def test_cross_entropy_more_positions_than_blocks(reduction):
    """One block per position, 65535 blocks a launch: the rest loop."""
    g = torch.Generator().manual_seed(121)
    xl = torch.randn(70000, 3, generator=g)
    tl = torch.randint(0, 3, (70000,), generator=g)
    want = F.cross_entropy(xl, tl, reduction=red_name(reduction), label_smoothing=0.05)
    check_op("cross_entropy", [xl, tl, None, reduction, -100, 0.05], want, **F32, **CUDA)
