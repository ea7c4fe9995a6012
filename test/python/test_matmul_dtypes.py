"""Matrix products (mm, bmm, matmul, addmm, linear) in every dtype ATen
takes, against torch.ops.aten: the integer dtypes exactly, with ATen's
wrapping on overflow (CPU only: ATen's CUDA has no integer products), f16
and bf16 within their dtype's tolerance (ATen accumulates in float and
rounds once), bool refused with an error naming the dtypes."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import traceir  # noqa: E402
from traceir_testing import Fn, RunError, Sliced, Transposed, check_op, op_graph, run_graph  # noqa: E402

pytestmark = pytest.mark.usefixtures("device")

A = torch.ops.aten
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
HALVES = [torch.float16, torch.bfloat16]
# torch.testing.assert_close's defaults for these dtypes.
TOL = {torch.float16: dict(rtol=1e-3, atol=1e-5),
       torch.bfloat16: dict(rtol=1.6e-2, atol=1e-5)}


def gen(seed):
    return torch.Generator().manual_seed(seed)


def values(shape, dtype, seed):
    """Integers spanning the dtype's range (products and sums overflow and
    wrap), or normal floats."""
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen(seed)).to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -2**40), min(info.max, 2**40)
    return torch.randint(lo, hi, shape, generator=gen(seed), dtype=torch.int64).to(dtype)


def unwrap(a):
    return a.tensor if isinstance(a, (Transposed, Sliced)) else a


def check(op, args, **kwargs):
    want = getattr(A, op)(*[unwrap(a) for a in args], **kwargs)
    dtype = want.dtype
    tol = TOL.get(dtype, {})
    check_op(op, list(args) + list(kwargs.values()), want, **tol)


CASES = [
    ("mm", lambda d: [values((5, 7), d, 1), values((7, 3), d, 2)]),
    ("mm", lambda d: [Transposed(values((4, 6), d, 3)), values((6, 2), d, 4)]),
    ("bmm", lambda d: [values((3, 4, 5), d, 5), Transposed(values((3, 5, 2), d, 6))]),
    ("matmul", lambda d: [values((2, 1, 3, 4), d, 7), values((5, 4, 6), d, 8)]),
    ("matmul", lambda d: [values((4,), d, 9), values((4,), d, 10)]),
    ("matmul", lambda d: [values((3, 4), d, 11), values((4,), d, 12)]),
    ("linear", lambda d: [values((2, 3, 4), d, 13), values((5, 4), d, 14),
                          values((5,), d, 15)]),
    ("linear", lambda d: [values((3, 4), d, 16), values((5, 4), d, 17), None]),
    ("mm", lambda d: [values((0, 3), d, 18), values((3, 2), d, 19)]),
    ("mm", lambda d: [values((2, 0), d, 20), values((0, 3), d, 21)]),
]


@pytest.mark.devices("cpu")
@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("op,make", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_integer_products_match_aten_exactly(op, make, dtype):
    check(op, make(dtype))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("op,make", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_half_products_match_aten(op, make, dtype):
    check(op, make(dtype))


@pytest.mark.devices("cpu")
@pytest.mark.parametrize("dtype", INTS + HALVES + [torch.float32, torch.float64], ids=str)
def test_addmm_scales_and_broadcasts_self(dtype):
    self_, m1, m2 = values((3,), dtype, 1), values((2, 4), dtype, 2), values((4, 3), dtype, 3)
    check("addmm", [self_, m1, m2], beta=3, alpha=-2)
    check("addmm", [values((2, 1), dtype, 4), m1, m2])


@pytest.mark.devices("cpu")
def test_addmm_beta_zero_ignores_self():
    # beta == 0 leaves self out, NaN included, as BLAS and ATen do.
    self_ = torch.full((2, 3), float("nan"))
    m1, m2 = values((2, 4), torch.float32, 1), values((4, 3), torch.float32, 2)
    check("addmm", [self_, m1, m2], beta=0, alpha=1)


@pytest.mark.devices("cpu")
def test_integer_products_wrap_like_aten():
    # 200 * 200 + 200 * 200 = 80000 = 128 (mod 256).
    x = torch.full((1, 2), 200, dtype=torch.uint8)
    got = check_op("mm", [x, x.t().contiguous()], A.mm(x, x.t()))
    assert got[0].item() == 128


@pytest.mark.devices("cpu")
def test_bool_products_are_refused():
    b = torch.ones(2, 2, dtype=torch.bool)
    text, inputs = op_graph("mm", [b, b], [b])
    with pytest.raises(RunError, match="one dtype other than bool, got bool and bool"):
        run_graph(text, inputs)


# A matrix operand against a batch of rows: the batch folds into one product
# of B * M rows where x's rows are one stride apart (a contiguous x, a
# vector y), and stays one product per matrix where they are not (x sliced
# along its batch dim).
FOLD_CASES = [
    ("matmul", lambda d: [values((4, 6, 8), d, 30), values((8, 5), d, 31)]),
    ("matmul", lambda d: [Sliced(values((4, 6, 8), d, 32)), values((8, 5), d, 33)]),
    ("matmul", lambda d: [values((2, 1, 3, 8), d, 34), values((8,), d, 35)]),
    ("linear", lambda d: [Sliced(values((3, 2, 4, 8), d, 36)), values((5, 8), d, 37),
                          values((5,), d, 38)]),
    ("linear", lambda d: [values((3, 1, 4, 8), d, 39), values((5, 8), d, 40), None]),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op,make", FOLD_CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(FOLD_CASES)])
def test_batch_dims_fold_into_rows_where_they_can(op, make, dtype):
    check(op, make(dtype))


@pytest.mark.devices("cpu")
def test_linear_on_a_transposed_sequence_batch():
    # ViT's and nn.MultiheadAttention's layout: [S, B, E] activations seen
    # as [B, S, E], whose rows are not one stride apart across the batch.
    x, w, b = values((6, 3, 8), torch.float32, 41), values((5, 8), torch.float32, 42), \
        values((5,), torch.float32, 43)
    fn = Fn(lambda x, w, b: torch.nn.functional.linear(x.transpose(0, 1), w, b))
    exe = traceir.compile(traceir.from_torch(fn, (x, w, b)), "cpu")
    torch.testing.assert_close(exe(x, w, b), fn(x, w, b), rtol=1e-5, atol=1e-6)
