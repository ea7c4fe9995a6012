"""PyTorch-oracle tests of the Core ATen backward ops of pooling, the norms
and embedding: avg_pool2d_backward, _adaptive_avg_pool2d_backward,
native_layer_norm_backward, native_group_norm_backward and
embedding_dense_backward, each against the ATen op itself
(torch.ops.aten.*), then a small training step through
from_torch(..., method="joint"), which keeps them whole, against autograd;
on the CPU and on CUDA (the `device` fixture of conftest.py; the cuda cases
skip, with one line saying why, where trace-run finds no CUDA device).

Several calls of one op share a graph (check_cases), one trace-run each,
which keeps the file fast. Tolerances: the kernels compute in f64 and round
once, so f64 results use rtol=1e-10, atol=1e-12 and f32 rtol=1e-5,
atol=1e-5 (ATen sums in float); f16 and bf16 round the ATen side at every
step: rtol=atol=1e-2 and 3e-2.
"""
import os
import re
import sys

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bundle_record  # noqa: E402
import traceir  # noqa: E402
from traceir_testing import (RunError, Sliced, Transposed, op_graph,  # noqa: E402
                             run_graph)

pytestmark = pytest.mark.usefixtures("device")

A = torch.ops.aten
F32 = dict(rtol=1e-5, atol=1e-5)
F64 = dict(rtol=1e-10, atol=1e-12)
TOL = {torch.float32: F32, torch.float64: F64, torch.float16: dict(rtol=1e-2, atol=1e-2),
       torch.bfloat16: dict(rtol=3e-2, atol=3e-2)}
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(shape, seed, dtype=torch.float32):
    return torch.randn(shape, generator=gen(seed), dtype=torch.float64).to(dtype)


def unwrap(a):
    return a.tensor if isinstance(a, (Transposed, Sliced)) else a


def aten(op, args):
    return getattr(A, op)(*[unwrap(a) for a in args])


def masked(results, mask, dtypes):
    """ATen's results with the ones `mask` leaves out as TraceIR's empty [0]."""
    return [r if m else torch.empty(0, dtype=d) for r, m, d in zip(results, mask, dtypes)]


def cases_graph(op, cases):
    """One graph calling `op` once per case (args, expected results), each
    call op_graph's with its names prefixed; returns (text, inputs,
    expected results in order)."""
    params, body, rets, types, inputs, expected = [], [], [], [], {}, []
    for n, (args, want) in enumerate(cases):
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        text, ins = op_graph(op, args, want)
        text = re.sub(r"%a(\d+)", rf"%c{n}a\1", text)
        text = re.sub(r"%r\b", f"%c{n}r", text)
        text = re.sub(r'trace\.input = "a(\d+)"', rf'trace.input = "c{n}a\1"', text)
        head, rest = text.split(") -> (", 1)
        if head != "trace.graph @g(":
            params.append(head[len("trace.graph @g("):])
        lines = rest.strip().split("\n")[1:-1]
        body += lines[:-1]
        names, ts = lines[-1].strip()[len("ret "):].split(" : ")
        rets.append(names)
        types.append(ts)
        inputs.update({f"c{n}{k}": v for k, v in ins.items()})
        expected += want
    text = (f"trace.graph @g({', '.join(params)}) -> ({', '.join(types)}) {{\n" +
            "\n".join(body) + f"\n  ret {', '.join(rets)} : {', '.join(types)}\n}}\n")
    return text, inputs, expected


def check_cases(op, cases, rtol, atol):
    """check_op for several calls of `op` in one graph: every result against
    PyTorch's, and the measured peak against the predicted one."""
    text, inputs, expected = cases_graph(op, cases)
    bundle_record.expectation = (expected, rtol, atol)
    try:
        outputs, report = run_graph(text, inputs)
    finally:
        bundle_record.expectation = None
    assert len(outputs) == len(expected)
    for i, (got, want) in enumerate(zip(outputs, expected)):
        assert got.dtype == want.dtype and got.shape == want.shape, (op, i, got.shape, want.shape)
        if want.dtype.is_floating_point:
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True,
                                       msg=lambda m: f"{op} result {i}: {m}")
        else:
            assert torch.equal(got, want), (op, i, got, want)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], (op, report)


def expect_error(op, args, results, match):
    text, inputs = op_graph(op, args, results)
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs)


#===--- avg_pool2d_backward ------------------------------------------------===#

AVG_CASES = [  # input, kernel, stride, padding, ceil_mode, count_include_pad, divisor
    ((2, 3, 8, 8), [2, 2], [2, 2], [0, 0], False, True, None),
    ((1, 2, 7, 9), [3, 3], [2, 2], [1, 1], False, True, None),
    ((1, 2, 7, 9), [3, 2], [2, 1], [1, 1], True, False, None),
    ((2, 2, 6, 5), [3, 3], [1, 2], [1, 0], True, True, None),
    ((2, 1, 5, 5), [2, 3], [1, 1], [0, 1], False, False, 5),
    ((3, 5, 6), [2, 2], [], [0, 0], False, True, None),  # unbatched, default stride
    ((1, 1, 4, 4), [2, 2], [3, 3], [1, 1], True, False, None),  # ceil window in padding
]


def avg_args(case, seed, dtype=torch.float32):
    shape, kernel, stride, padding, ceil, cip, div = case
    x = randn(shape, seed, dtype)
    out = A.avg_pool2d(x, kernel, stride, padding, ceil, cip, div)
    g = randn(out.shape, seed + 1, dtype)
    return [g, x, kernel, stride, padding, ceil, cip, div]


@pytest.mark.parametrize("dtype", FLOATS)
def test_avg_pool2d_backward(dtype):
    cases = [avg_args(c, 10 + i, dtype) for i, c in enumerate(AVG_CASES)]
    check_cases("avg_pool2d_backward", [(a, aten("avg_pool2d_backward", a)) for a in cases],
                **TOL[dtype])


def test_avg_pool2d_backward_noncontiguous_and_i64():
    cases = []
    args = avg_args(AVG_CASES[2], 11)
    cases.append(([Transposed(args[0])] + args[1:], aten("avg_pool2d_backward", args)))
    args = avg_args(AVG_CASES[1], 12)
    cases.append(([Sliced(args[0]), Sliced(args[1])] + args[2:],
                  aten("avg_pool2d_backward", args)))
    check_cases("avg_pool2d_backward", cases, **F32)
    # i64 (PyTorch's CPU takes it): each gradient divided toward zero.
    x = torch.arange(-20, 29).view(1, 1, 7, 7)
    g = torch.arange(-40, 40, 5).view(1, 1, 4, 4)
    cases = [[g, x, [3, 3], [2, 2], [1, 1], False, True, None],
             [g, x, [3, 3], [2, 2], [1, 1], True, False, -4]]
    check_cases("avg_pool2d_backward", [(a, aten("avg_pool2d_backward", a)) for a in cases],
                rtol=0, atol=0)


def test_avg_pool2d_backward_errors():
    args = avg_args(AVG_CASES[1], 13)
    want = aten("avg_pool2d_backward", args)
    expect_error("avg_pool2d_backward", [args[0][:, :, :2]] + args[1:], [want],
                 "must have the pooled shape")
    expect_error("avg_pool2d_backward", args[:7] + [0], [want], "divisor must be not zero")
    expect_error("avg_pool2d_backward", args[:4] + [[2, 2]] + args[5:], [want],
                 "must be at most half of kernel")
    expect_error("avg_pool2d_backward", [args[0].int(), args[1].int()] + args[2:],
                 [want.int()], "must have one floating or i64 dtype")


#===--- _adaptive_avg_pool2d_backward ---------------------------------------===#

ADAPTIVE_CASES = [((2, 3, 8, 8), (4, 4)), ((1, 2, 7, 9), (3, 4)), ((2, 2, 5, 3), (7, 5)),
                  ((3, 10, 6), (1, 1)), ((1, 1, 6, 6), (6, 6))]


def adaptive_args(case, seed, dtype=torch.float32):
    shape, size = case
    x = randn(shape, seed, dtype)
    g = randn(A._adaptive_avg_pool2d(x, size).shape, seed + 1, dtype)
    return [g, x]


@pytest.mark.parametrize("dtype", FLOATS)
def test_adaptive_avg_pool2d_backward(dtype):
    cases = [adaptive_args(c, 20 + i, dtype) for i, c in enumerate(ADAPTIVE_CASES)]
    check_cases("_adaptive_avg_pool2d_backward",
                [(a, aten("_adaptive_avg_pool2d_backward", a)) for a in cases], **TOL[dtype])


def test_adaptive_avg_pool2d_backward_noncontiguous_and_errors():
    args = adaptive_args(ADAPTIVE_CASES[1], 21, torch.float64)
    want = aten("_adaptive_avg_pool2d_backward", args)
    check_cases("_adaptive_avg_pool2d_backward",
                [([Transposed(args[0]), Sliced(args[1])], want)], **F64)
    expect_error("_adaptive_avg_pool2d_backward", [args[0][0], args[1]], [want],
                 "must have the leading dims of self")
    x = torch.arange(16).view(1, 1, 4, 4)
    expect_error("_adaptive_avg_pool2d_backward", [x[..., :2, :2], x], [x],
                 "must have one floating dtype")


#===--- native_layer_norm_backward -----------------------------------------===#

def layer_norm_args(shape, nd, seed, dtype=torch.float32, affine=(True, True),
                    mask=(True, True, True)):
    x = randn(shape, seed, dtype)
    norm = list(shape[len(shape) - nd:])
    w = randn(norm, seed + 1, dtype) if affine[0] else None
    b = randn(norm, seed + 2, dtype) if affine[1] else None
    _, mean, rstd = A.native_layer_norm(x, norm, w, b, 1e-5)
    g = randn(shape, seed + 3, dtype)
    args = [g, x, norm, mean, rstd, w, b, list(mask)]
    want = A.native_layer_norm_backward(*args)
    pd = dtype if w is None else w.dtype
    return args, masked(want, mask, [dtype, pd, dtype if b is None else b.dtype])


LN_CASES = [((4, 7), 1), ((2, 3, 8), 1), ((2, 3, 4, 5), 2), ((3, 16), 1), ((5,), 1),
            ((2, 3, 4), 3)]


@pytest.mark.parametrize("dtype", FLOATS)
def test_native_layer_norm_backward(dtype):
    check_cases("native_layer_norm_backward",
                [layer_norm_args(shape, nd, 30 + i, dtype) for i, (shape, nd) in enumerate(LN_CASES)],
                **TOL[dtype])


def test_native_layer_norm_backward_output_mask_no_affine():
    cases = [layer_norm_args((3, 4, 6), 1, 31, mask=m)
             for m in [(True, False, False), (False, True, True), (False, False, True)]]
    cases.append(layer_norm_args((4, 6), 1, 32, affine=(False, False), mask=(True, False, False)))
    cases.append(layer_norm_args((5, 6), 1, 33, affine=(True, False), mask=(True, True, False)))
    check_cases("native_layer_norm_backward", cases, **F32)


def test_native_layer_norm_backward_noncontiguous():
    cases = []
    args, want = layer_norm_args((6, 6), 1, 34, torch.float64)
    cases.append(([Transposed(args[0]), Transposed(args[1])] + args[2:],
                  aten("native_layer_norm_backward", args)))
    args, want = layer_norm_args((3, 8), 1, 35, torch.float64)
    cases.append(([Sliced(args[0])] + args[1:], want))
    check_cases("native_layer_norm_backward", cases, **F64)


def test_native_layer_norm_backward_errors():
    args, want = layer_norm_args((3, 4, 6), 1, 36)
    bad = list(args)
    bad[2] = [5]
    expect_error("native_layer_norm_backward", bad, want, "does not match the trailing dims")
    bad = list(args)
    bad[7] = [True, False]
    expect_error("native_layer_norm_backward", bad, want, "output_mask must be three bools")
    bad = list(args)
    bad[6] = None
    expect_error("native_layer_norm_backward", bad, want,
                 "asks for the gradient of a bias that is None")
    bad = list(args)
    bad[3] = args[3][:2]
    expect_error("native_layer_norm_backward", bad, want, "must hold 12 elements")
    bad = list(args)
    bad[5] = torch.ones(4)
    expect_error("native_layer_norm_backward", bad, want, "must have normalized_shape")


#===--- native_group_norm_backward -----------------------------------------===#

def group_norm_args(shape, group, seed, dtype=torch.float32, affine=True,
                    mask=(True, True, True)):
    x = randn(shape, seed, dtype)
    N, C = shape[:2]
    hxw = torch.Size(shape[2:]).numel()
    w = randn((C,), seed + 1, dtype) if affine else None
    b = randn((C,), seed + 2, dtype) if affine else None
    _, mean, rstd = A.native_group_norm(x, w, b, N, C, hxw, group, 1e-5)
    g = randn(shape, seed + 3, dtype)
    args = [g, x, mean, rstd, w, N, C, hxw, group, list(mask)]
    want = A.native_group_norm_backward(*args)
    return args, masked(want, mask, [dtype] * 3)


GN_CASES = [((2, 4, 3), 2), ((2, 6, 4, 5), 3), ((3, 4, 2, 2), 1), ((1, 8, 3, 3), 8),
            ((2, 6), 2)]


@pytest.mark.parametrize("dtype", FLOATS)
def test_native_group_norm_backward(dtype):
    check_cases("native_group_norm_backward",
                [group_norm_args(shape, g, 40 + i, dtype) for i, (shape, g) in enumerate(GN_CASES)],
                **TOL[dtype])


def test_native_group_norm_backward_masks_no_weight_noncontiguous():
    cases = [group_norm_args((2, 6, 4, 5), 3, 41, mask=m)
             for m in [(True, False, False), (False, True, True), (False, False, True)]]
    cases.append(group_norm_args((2, 4, 3, 3), 2, 42, affine=False))
    args, want = group_norm_args((2, 4, 5), 2, 43)
    cases.append(([Sliced(args[0]), Sliced(args[1])] + args[2:], want))
    cases.append(group_norm_args((0, 4, 3), 2, 44))  # no images: zero weight gradients
    check_cases("native_group_norm_backward", cases, **F32)


def test_native_group_norm_backward_errors():
    args, want = group_norm_args((2, 6, 4), 3, 44)
    bad = list(args)
    bad[8] = 4
    expect_error("native_group_norm_backward", bad, want,
                 "divisible by num_groups, but got C=6 and num_groups=4")
    bad = list(args)
    bad[7] = 5
    expect_error("native_group_norm_backward", bad, want, "is not \\[N=2, C=6, \\*\\] with HxW=5")
    bad = list(args)
    bad[2] = args[2][:1]
    expect_error("native_group_norm_backward", bad, want, "must hold 6 elements")
    bad = list(args)
    bad[9] = [True]
    expect_error("native_group_norm_backward", bad, want, "output_mask must be three bools")


#===--- embedding_dense_backward -------------------------------------------===#

def embedding_args(idx_shape, V, D, seed, dtype=torch.float32, padding_idx=-1,
                   scale=False, index_dtype=torch.int64):
    idx = torch.randint(0, V, idx_shape, generator=gen(seed)).to(index_dtype)
    g = randn(tuple(idx_shape) + (D,), seed + 1, dtype)
    return [g, idx, V, padding_idx, scale]


EMB_CASES = [((5,), 7, 3), ((3, 4), 5, 6), ((2, 3, 4), 10, 2), ((20,), 3, 4), ((0,), 4, 3),
             ((3,), 2**40, 0)]  # an empty result of any num_weights


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_dense_backward(dtype):
    cases = [embedding_args(*c, 50 + i, dtype) for i, c in enumerate(EMB_CASES)]
    check_cases("embedding_dense_backward",
                [(a, aten("embedding_dense_backward", a)) for a in cases], **TOL[dtype])


def test_embedding_dense_backward_padding_scale():
    cases = [embedding_args((4, 6), 5, 3, 51 + i, torch.float64, p, s, t)
             for i, (p, s, t) in enumerate([(p, s, t) for p in [-1, 0, 2, -2]
                                            for s in [False, True]
                                            for t in [torch.int64, torch.int32]])]
    check_cases("embedding_dense_backward",
                [(a, aten("embedding_dense_backward", a)) for a in cases], **F64)


def test_embedding_dense_backward_integer_and_noncontiguous():
    # Integer gradients (PyTorch's CPU takes them): exact sums, and with
    # scale_grad_by_freq a row seen twice or more gets 0 (1 / count in int).
    cases = []
    for scale in [False, True]:
        args = embedding_args((12,), 4, 3, 52, padding_idx=1, scale=scale)
        args[0] = (args[0] * 10).long()
        cases.append(args)
    check_cases("embedding_dense_backward",
                [(a, aten("embedding_dense_backward", a)) for a in cases], rtol=0, atol=0)
    args = embedding_args((6, 5), 8, 6, 53)
    want = aten("embedding_dense_backward", args)
    check_cases("embedding_dense_backward",
                [([Sliced(args[0]), Transposed(args[1])] + args[2:], want)], **F32)


def test_embedding_dense_backward_errors():
    args = embedding_args((3, 4), 5, 6, 54)
    want = aten("embedding_dense_backward", args)
    bad = list(args)
    bad[1] = args[1].clone()
    bad[1][1, 2] = 5
    expect_error("embedding_dense_backward", bad, [want],
                 "embedding_dense_backward.*index 5 is out of range for num_weights=5")
    bad[1][1, 2] = -1  # ATen's CPU wraps this one; TraceIR refuses it
    expect_error("embedding_dense_backward", bad, [want], "index -1 is out of range")
    expect_error("embedding_dense_backward", [args[0][:2]] + args[1:], [want],
                 "must be indices.shape \\[3, 4\\] \\+ \\[D\\]")
    expect_error("embedding_dense_backward", args[:2] + [-1] + args[3:], [want],
                 "num_weights must be non-negative")


#===--- through from_torch: the joint graph keeps them whole ---------------===#

class Step(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 8, padding_idx=0)
        self.conv = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.gn = torch.nn.GroupNorm(2, 4)
        self.ln = torch.nn.LayerNorm(8)
        self.fc = torch.nn.Linear(8 + 4 + 4, 3)

    def forward(self, tokens, img, y):
        e = self.ln(self.emb(tokens)).mean(1)
        h = self.gn(self.conv(img))
        a = F.avg_pool2d(h, 2, ceil_mode=True, count_include_pad=False).mean((2, 3))
        b = F.adaptive_avg_pool2d(h, (3, 2)).mean((2, 3))
        return (F.cross_entropy(self.fc(torch.cat([e, a, b], 1)), y),)


def test_joint_graph_keeps_backward_ops(device):
    if not traceir.HAS_COMPILER:
        pytest.skip("joint graphs are imported: they need the compiler")
    torch.manual_seed(0)
    step = Step()
    tokens = torch.tensor([[1, 0, 3, 3], [9, 2, 0, 5]])
    img = torch.randn(2, 2, 5, 7)
    y = torch.tensor([0, 2])
    m = traceir.from_torch(step, (tokens, img, y), method="joint")
    text = str(m)
    for op in ["avg_pool2d_backward", "_adaptive_avg_pool2d_backward",
               "native_layer_norm_backward", "native_group_norm_backward",
               "embedding_dense_backward"]:
        assert f'pyop "{op}"' in text, op
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device)
    loss, *grads = exe(tokens, img, y)
    (want,) = step(tokens, img, y)
    want.backward()
    torch.testing.assert_close(loss, want.detach(), rtol=1e-5, atol=1e-6)
    params = list(step.parameters())
    assert len(grads) == len(params)
    for g, p in zip(grads, params):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-5)
