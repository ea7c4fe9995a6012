"""PyTorch-oracle tests of the 3-D pools and col2im: avg_pool3d,
max_pool3d_with_indices, _adaptive_avg_pool3d and col2im (F.fold), each
against the ATen op itself (torch.ops.aten.*), on the CPU and on CUDA (the
`device` fixture of conftest.py; the cuda cases skip, with one line saying
why, where trace-run finds no CUDA device), and from_torch of a module
calling F.avg_pool3d, F.max_pool3d, F.adaptive_avg_pool3d and F.fold.

The kernels are Resample.h's per-element functions, the 2-D pools' own
(a 2-D input is a volume of depth 1), run by CPU/Resample.cpp and
CUDA/Resample.cu. Shapes cover batched and unbatched inputs, stride,
padding, dilation, ceil_mode (its last-window rule), count_include_pad,
divisor_override, strided (Transposed) inputs, zero-size results where
PyTorch allows them, and the bad arguments PyTorch refuses.

Tolerances: the kernels accumulate in f64 and round once; f32 within rtol
1e-5 / atol 1e-6, f64 1e-10 / 1e-12, f16 and bf16 one rounding step;
max pooling, i64 averages and bool folds exactly.
"""
import os
import sys

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import traceir  # noqa: E402
from traceir_testing import RunError, Transposed, check_op, op_graph, run_graph  # noqa: E402

pytestmark = pytest.mark.usefixtures("device")

A = torch.ops.aten
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=1e-2, atol=1e-2)}
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def gen(seed):
    return torch.Generator().manual_seed(seed)


def rnd(shape, dtype=torch.float32, seed=0):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen(seed)).to(dtype)
    lo = 0 if dtype == torch.uint8 else -100
    return torch.randint(lo, 100, shape, generator=gen(seed)).to(dtype)


def unwrap(a):
    return a.tensor if isinstance(a, Transposed) else a


def check_aten(op, args, tol=TOL[torch.float32], ref_dtype=None):
    """Runs `op` through TraceIR and compares with ATen's result (computed
    in `ref_dtype` and cast back where PyTorch's CPU lacks the dtype)."""
    plain = [unwrap(a) for a in args]
    if ref_dtype is not None:
        dt = plain[0].dtype
        want = getattr(A, op)(plain[0].to(ref_dtype), *plain[1:])
        want = [w.to(dt) if w.is_floating_point() else w for w in
                (want if isinstance(want, tuple) else [want])]
    else:
        want = getattr(A, op)(*plain)
        want = list(want) if isinstance(want, tuple) else [want]
    return check_op(op, args, want, **tol)


def expect_error(op, args, results, match):
    """TraceIR rejects the call (at verification or at run time) with a
    message matching `match`."""
    text, inputs = op_graph(op, args, results)
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs)


#===--- avg_pool3d ---------------------------------------------------------===#

AVG_CASES = [  # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor
    ((2, 3, 6, 6, 6), [2, 2, 2], [], 0, False, True, None),
    ((1, 2, 5, 7, 6), [3, 2, 3], [2, 1, 2], [1, 1, 1], True, False, None),
    ((3, 5, 6, 7), [2, 3, 2], [1, 2, 1], [1, 0, 1], True, True, None),  # unbatched
    ((2, 2, 4, 5, 6), 2, 2, 1, False, True, 3),  # divisor_override
    # ceil_mode's last window would start in the right padding: dropped.
    ((1, 1, 5, 5, 5), [2, 2, 2], [2, 2, 2], [1, 1, 1], True, True, None),
    ((0, 2, 4, 4, 4), [2, 2, 2], [], 0, False, True, None),  # empty batch
]


@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool3d(case):
    shape, *window = case
    check_aten("avg_pool3d", [rnd(shape, torch.float32, 1), *window])


@pytest.mark.parametrize("case", AVG_CASES[1:4])
@pytest.mark.parametrize("dtype", [torch.float64, torch.int64])
def test_avg_pool3d_dtypes(case, dtype):
    # i64: an exact sum divided toward zero, as PyTorch's CPU kernel.
    shape, *window = case
    check_aten("avg_pool3d", [rnd(shape, dtype, 1), *window], TOL.get(dtype, {}))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_avg_pool3d_half(dtype):
    # PyTorch's CUDA kernel takes f16 and bf16 (its CPU one does not):
    # against the f32 result, rounded.
    x = rnd((2, 3, 5, 6, 4), dtype, 2)
    check_aten("avg_pool3d", [x, [3, 2, 2], [2, 2, 1], [1, 1, 0], True, False, None], TOL[dtype],
               ref_dtype=torch.float32)


def test_avg_pool3d_noncontiguous():
    x = rnd((2, 3, 5, 6, 7), seed=3)
    check_aten("avg_pool3d", [Transposed(x), [2, 3, 2], [1, 2, 2], [1, 1, 1], True, True, None])


def test_avg_pool3d_errors():
    x = rnd((1, 2, 4, 4, 4))
    out = A.avg_pool3d(x, [2, 2, 2])
    expect_error("avg_pool3d", [x, [2, 2, 2], [], [2, 1, 1]], [out], "must be at most half of kernel")
    expect_error("avg_pool3d", [x, [2, 0, 2]], [out], "kernel_size, stride and dilation must be positive")
    expect_error("avg_pool3d", [x, [2, 2]], [out], "kernel_size must have 1 or 3 values")
    expect_error("avg_pool3d", [x, [2, 2, 2], [], 0, False, True, 0], [out], "divisor must be not zero")
    expect_error("avg_pool3d", [x, [5, 2, 2]], [out], "is larger than the padded input")
    expect_error("avg_pool3d", [x[0, 0], [2, 2, 2]], [out[0, 0]], r"\[N, C, D, H, W\] or \[C, D, H, W\]")
    xi = x.int()
    expect_error("avg_pool3d", [xi, [2, 2, 2]], [out.int()], "floating-point or i64")


#===--- max_pool3d_with_indices --------------------------------------------===#

MAX_CASES = [  # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 6, 6, 6), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], False),
    ((1, 2, 7, 5, 9), [2, 3, 2], [2, 1, 3], [0, 1, 1], [1, 1, 1], True),
    ((2, 2, 8, 9, 10), [3, 2, 2], [3, 2, 2], [1, 0, 1], [2, 2, 1], False),
    ((3, 4, 5, 6), [2, 2, 2], [], [0, 0, 0], [1, 1, 1], False),  # unbatched, default stride
    ((1, 1, 5, 5, 5), [2, 2, 2], [2, 2, 2], [1, 1, 1], [1, 1, 1], True),  # last window dropped
]


def distinct(shape, dtype):
    """Distinct values (f16 holds the integers to 2048 exactly); bf16 gets
    ties, broken as PyTorch's: the first maximum in (d, h, w) order."""
    x = torch.randperm(torch.Size(shape).numel(), generator=gen(30)).view(shape)
    return (x % 200 if dtype == torch.bfloat16 else x).to(dtype)


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool3d_with_indices(case):
    shape, *window = case
    check_aten("max_pool3d_with_indices", [distinct(shape, torch.float32) / 8, *window])


@pytest.mark.parametrize("case", MAX_CASES[1:3])
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_max_pool3d_with_indices_dtypes(case, dtype):
    shape, *window = case
    check_aten("max_pool3d_with_indices", [distinct(shape, dtype), *window])


@pytest.mark.parametrize("dtype", INTS)
def test_max_pool3d_with_indices_integers(dtype):
    # Ties (the first maximum wins) and the dtype's extremes, exactly.
    x = rnd((2, 3, 5, 6, 4), dtype, 4)
    x.view(-1)[:7] = torch.iinfo(dtype).min
    x.view(-1)[7:9] = torch.iinfo(dtype).max
    check_aten("max_pool3d_with_indices", [x, [2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], True])


def test_max_pool3d_with_indices_nan_and_padding():
    x = rnd((1, 1, 5, 5, 5), seed=31)
    x[0, 0, 1, 1, 1] = float("nan")
    x[0, 0, 3, 3, 3] = float("nan")
    check_aten("max_pool3d_with_indices", [x, [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], False])
    x = torch.full((1, 1, 4, 4, 4), -float("inf"))  # every tap -inf: the first tap's index
    check_aten("max_pool3d_with_indices", [x, [3, 3, 3], [1, 1, 1], [1, 1, 1], [1, 1, 1], False])


def test_max_pool3d_with_indices_noncontiguous():
    x = rnd((2, 3, 5, 6, 7), seed=5)
    check_aten("max_pool3d_with_indices", [Transposed(x), [2, 3, 2], [1, 2, 2], [1, 1, 1], [1, 1, 1],
                                          True])


def test_max_pool3d_with_indices_errors():
    x = rnd((1, 2, 4, 4, 4))
    out = list(A.max_pool3d_with_indices(x, [2, 2, 2]))
    op = "max_pool3d_with_indices"
    expect_error(op, [x, [2, 2, 2], [], [0, 2, 0]], out, "must be at most half of kernel")
    expect_error(op, [x, [2, 2, 2], [], 0, [1, 0, 1]], out, "must be positive")
    expect_error(op, [x, [2, 2, 2], [1, 2]], out, "stride must have 1 or 3 values")
    expect_error(op, [x, [3, 3, 3], [1, 1, 1], 0, [2, 2, 2]], out, "is larger than the padded input")
    expect_error(op, [x[0, 0], [2, 2, 2]], [o[0, 0] for o in out], r"\[N, C, D, H, W\]")
    expect_error(op, [x > 0, [2, 2, 2]], [out[0] > 0, out[1]], "does not take bool")
    # The indices result must be i64.
    expect_error(op, [x, [2, 2, 2]], [out[0], out[1].int()], "i64")


#===--- _adaptive_avg_pool3d -----------------------------------------------===#

ADAPTIVE_CASES = [  # shape, output_size
    ((2, 3, 7, 5, 6), [3, 2, 4]),
    ((3, 6, 6, 6), [1, 1, 1]),  # unbatched, global
    ((1, 2, 4, 4, 4), [6, 5, 7]),  # larger than the input: windows overlap
    ((1, 2, 5, 4, 3), [0, 2, 2]),  # an empty result, as PyTorch
    ((2, 1, 3, 9, 4), [2, 2, 2]),
]


@pytest.mark.parametrize("case", ADAPTIVE_CASES)
def test_adaptive_avg_pool3d(case):
    shape, size = case
    check_aten("_adaptive_avg_pool3d", [rnd(shape, torch.float32, 6), size])


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_adaptive_avg_pool3d_dtypes(dtype):
    shape, size = ADAPTIVE_CASES[0]
    check_aten("_adaptive_avg_pool3d", [rnd(shape, dtype, 6), size], TOL[dtype])
    # One int for every dim (the schema's SymInt[3], as TraceIR reads it).
    x = rnd((2, 1, 3, 9, 4), dtype, 7)
    check_op("_adaptive_avg_pool3d", [x, 2], A._adaptive_avg_pool3d(x, [2, 2, 2]), **TOL[dtype])


def test_adaptive_avg_pool3d_noncontiguous():
    x = rnd((2, 3, 5, 6, 7), seed=7)
    check_aten("_adaptive_avg_pool3d", [Transposed(x), [3, 4, 2]])


def test_adaptive_avg_pool3d_errors():
    x = rnd((1, 2, 4, 4, 4))
    out = A._adaptive_avg_pool3d(x, [2, 2, 2])
    op = "_adaptive_avg_pool3d"
    expect_error(op, [x, [2, 2]], [out], "must be an int or a triple")
    expect_error(op, [x, [2, -1, 2]], [out], "non-negative")
    expect_error(op, [x[0, 0], [2, 2, 2]], [out[0, 0]], r"\[N, C, D, H, W\]")
    expect_error(op, [x.long(), [2, 2, 2]], [out.long()], "floating-point")
    # A result type that is not the output size's.
    expect_error(op, [x, [2, 2, 2]], [out[..., :1]], "is declared .* but the arguments give")


#===--- col2im (F.fold) ----------------------------------------------------===#

COL2IM_CASES = [  # N, C, output_size, kernel, dilation, padding, stride
    (2, 3, [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]),
    (1, 2, [7, 8], [3, 2], [2, 1], [1, 2], [2, 3]),
    (None, 4, [4, 5], [2, 3], [1, 1], [1, 1], [1, 2]),  # unbatched
    (2, 1, [6, 6], [1, 1], [1, 1], [0, 0], [2, 2]),  # 1x1 kernel, stride 2: gaps
    (0, 2, [4, 4], [2, 2], [1, 1], [0, 0], [1, 1]),  # empty batch
]


def col2im_input(case, dtype, seed):
    n, c, size, k, d, p, s = case
    blocks = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    shape = ([] if n is None else [n]) + [c * k[0] * k[1], blocks[0] * blocks[1]]
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen(seed)) > 0.7
    return rnd(shape, dtype, seed)


@pytest.mark.parametrize("case", COL2IM_CASES)
def test_col2im(case):
    check_aten("col2im", [col2im_input(case, torch.float32, 8), *case[2:]])


@pytest.mark.parametrize("case", COL2IM_CASES[1:3])
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16, torch.bool])
def test_col2im_dtypes(case, dtype):
    # bool: overlapping blocks OR, as PyTorch's bool +=.
    check_aten("col2im", [col2im_input(case, dtype, 8), *case[2:]], TOL.get(dtype, {}))


def test_col2im_int_arguments_and_noncontiguous():
    case = (2, 3, [6, 7], [3, 2], [1, 2], [1, 1], [2, 1])
    x = col2im_input(case, torch.float32, 9)
    check_aten("col2im", [Transposed(x), *case[2:]])
    # One int for both dims (ATen's Python binding wants lists).
    x = col2im_input((1, 2, [5, 5], [2, 2], [1, 1], [1, 1], [1, 1]), torch.float64, 10)
    check_op("col2im", [x, 5, 2, 1, 1, 1], A.col2im(x, [5, 5], [2, 2], [1, 1], [1, 1], [1, 1]),
             **TOL[torch.float64])


def test_col2im_errors():
    case = (1, 2, [5, 6], [2, 2], [1, 1], [0, 0], [1, 1])
    x = col2im_input(case, torch.float32, 11)
    out = A.col2im(x, *case[2:])
    expect_error("col2im", [x[:, :7], [5, 6], [2, 2], 1, 0, 1], [out],
                 r"divisible by the product of kernel_size \[2, 2\]")
    expect_error("col2im", [x, [5, 7], [2, 2], 1, 0, 1], [out], "the number of sliding blocks 4 \\* 6 = 24, got 20")
    expect_error("col2im", [x, [5, 6], [2, 0], 1, 0, 1], [out], "kernel size should be greater than zero")
    expect_error("col2im", [x, [5, 6], [2, 2], 1, -1, 1], [out], "padding should be non-negative")
    expect_error("col2im", [x, [5, 6], [2, 2], 1, 0, [1, 0]], [out], "stride should be greater than zero")
    expect_error("col2im", [x, [5, 6, 1], [2, 2], 1, 0, 1], [out], "output_size must have 2 values")
    expect_error("col2im", [x, [1, 6], [2, 2], 1, 0, 1], [out], "leaves no sliding block")
    expect_error("col2im", [x[0, 0], [5, 6], [2, 2], 1, 0, 1], [out], "2-D or 3-D")
    expect_error("col2im", [x.long(), [5, 6], [2, 2], 1, 0, 1], [out.long()], "floating-point or bool")


#===--- from_torch ---------------------------------------------------------===#

class Pools3d(torch.nn.Module):
    def forward(self, x, cols):
        return (F.avg_pool3d(x, 2, ceil_mode=True, count_include_pad=False),
                F.max_pool3d(x, 3, 2, 1),
                *F.max_pool3d(x, [2, 3, 2], return_indices=True),
                F.adaptive_avg_pool3d(x, (2, None, 3)),
                F.fold(cols, (4, 5), 2))


@pytest.mark.skipif(not traceir.HAS_COMPILER, reason="from_torch needs the compiler")
def test_from_torch_pools3d(device):
    x, cols = rnd((1, 2, 5, 6, 7), seed=12), rnd((2, 12, 12), seed=13)
    m = traceir.from_torch(Pools3d(), (x, cols))
    text = str(m)
    for op in ("avg_pool3d", "max_pool3d_with_indices", "_adaptive_avg_pool3d", "col2im"):
        assert f'pyop "{op}"(' in text, text
    got = traceir.compile(m, device=device)(x, cols)
    want = Pools3d()(x, cols)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)
