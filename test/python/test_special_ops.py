"""The special and NaN-aware elementwise ops against PyTorch, on the CPU and
on CUDA (conftest.py's `device` fixture; the cuda cases skip with one line
where trace-run finds no CUDA device): exp2, erfc, erfinv, lgamma, digamma,
polygamma (SpecialFunctions.h computes the last three, with erfinv, the
same way on both devices), fmax, fmin, copysign, hypot and signbit. Each
runs over the dtypes PyTorch's CPU kernel takes, with the values where the
functions are hard: poles, the reflection below zero, signed zeros,
infinities, NaN, arguments near erfinv's +-1.

Tolerances: f64 within rtol 1e-10 of PyTorch (trigamma's 1e-8: PyTorch's
own series stops earlier than ours), f32 within 1e-5 (the kernels compute
in double and round once), f16/bf16 one rounding step; bools exactly.
"""
import math

import pytest
import torch

from traceir_testing import Sliced, Transposed, check_op, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

torch.manual_seed(0)
INF, NAN = math.inf, math.nan
INTS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
HALVES = (torch.float16, torch.bfloat16)


def tol(dtype, f64=1e-10):
    if dtype in HALVES:
        return {"rtol": 1e-2, "atol": 1e-2}
    if dtype == torch.float64:
        return {"rtol": f64, "atol": f64}
    return {"rtol": 1e-5, "atol": 1e-6}


# Values where each function has its edges, besides a random spread.
EDGES = {
    "exp2": [0.0, -0.0, 1.5, -1074.0, 1024.0, INF, -INF, NAN],
    "erfc": [0.0, -0.0, 5.0, -5.0, 27.0, INF, -INF, NAN],
    "erfinv": [0.0, -0.0, 0.5, -0.5, 0.999, -0.999999, 1 - 1e-12, 1.0, -1.0, 1.5, NAN],
    "lgamma": [1.0, 2.0, 0.5, -0.5, -2.5, 0.0, -0.0, -3.0, 1e-8, 171.5, INF, -INF, NAN],
    "digamma": [1.0, 0.5, -0.5, -2.5, 0.0, -0.0, -3.0, 1e-8, 1e8, 9.75, INF, -INF, NAN],
}
UNARY = sorted(EDGES)


def spread(op, dtype):
    """Random values in each function's interesting range."""
    x = torch.randn(40, dtype=torch.float64)
    if op == "erfinv":
        x = torch.tanh(x)
    elif op in ("lgamma", "digamma"):
        x = x * 6
    elif op == "erfc":
        x = x * 3
    else:
        x = x * 8
    return x.to(dtype)


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, *HALVES])
def test_unary_special(op, dtype):
    fn = getattr(torch, op)
    x = torch.cat([spread(op, dtype), torch.tensor(EDGES[op], dtype=dtype)])
    check_op(op, [x], fn(x), **tol(dtype))


@pytest.mark.parametrize("op", UNARY)
def test_unary_special_integers_and_layouts(op):
    fn = getattr(torch, op)
    # An integer or bool input computes in the default float dtype.
    for dtype in INTS + (torch.bool,):
        x = torch.randint(0 if dtype in (torch.uint8, torch.bool) else -5, 6, (2, 3)).to(dtype)
        check_op(op, [x], fn(x))
    x = spread(op, torch.float32).reshape(5, 8)
    check_op(op, [Transposed(x)], fn(x))
    check_op(op, [Sliced(x)], fn(x))
    check_op(op, [x[0, 0].clone()], fn(x[0, 0]))
    check_op(op, [torch.empty(0, 3)], fn(torch.empty(0, 3)))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_polygamma(n, dtype):
    # Both sides of zero (the reflection), the poles, large and tiny values.
    x = torch.cat([torch.linspace(-7.9, 12, 61, dtype=torch.float64),
                   torch.tensor([0.5, -0.5, 1e-6, 30.0, 1e6, INF, NAN], dtype=torch.float64)])
    x = x.to(dtype)
    want = torch.polygamma(n, x)
    f64 = 1e-8 if n == 1 else 1e-10
    # rtol on values as large as PyTorch's 1e30 at the poles of trigamma
    check_op("polygamma", [n, x], want, **tol(dtype, f64))


def test_polygamma_integer_input_and_errors():
    x = torch.arange(1, 7)
    check_op("polygamma", [2, x], torch.polygamma(2, x))
    text, inputs = op_graph("polygamma", [-1, torch.ones(3)], [torch.ones(3)])
    with pytest.raises(Exception, match="negative n"):
        run_graph(text, inputs)


BINARY = {  # the dtypes PyTorch's CPU kernel takes
    "fmax": INTS + (torch.float32, torch.float64, *HALVES, torch.bool),
    "fmin": INTS + (torch.float32, torch.float64, *HALVES, torch.bool),
    "copysign": INTS + (torch.float32, torch.float64, *HALVES, torch.bool),
    "hypot": (torch.float32, torch.float64, *HALVES),
}


def sample(dtype, shape):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape) * 4).to(dtype)
    lo = 0 if dtype == torch.uint8 else -9
    return torch.randint(lo, 10, shape).to(dtype)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_dtypes_and_broadcast(op):
    fn = getattr(torch, op)
    for dtype in BINARY[op]:
        x, y = sample(dtype, (3, 4)), sample(dtype, (4,))
        check_op(op, [x, y], fn(x, y), **tol(dtype))
    x, y = sample(torch.float32, (4, 5)), sample(torch.float32, (4, 5))
    check_op(op, [Transposed(x), Sliced(y)], fn(x, y))


def test_nan_zero_and_infinity_rules():
    a = torch.tensor([NAN, 1.0, NAN, -0.0, 0.0, INF, -INF, 3.0])
    b = torch.tensor([2.0, NAN, NAN, 0.0, -0.0, NAN, 1.0, -INF])
    for op in ("fmax", "fmin", "copysign", "hypot"):
        check_op(op, [a, b], getattr(torch, op)(a, b))
    # A Python number as the other operand, promotion of int with float.
    i = torch.tensor([-3, 0, 4])
    check_op("copysign", [i, -1.0], torch.copysign(i, -1.0))
    check_op("fmax", [i, torch.tensor([1.5, NAN, 2.0])], torch.fmax(i, torch.tensor([1.5, NAN, 2.0])))


@pytest.mark.parametrize("dtype", INTS + (torch.float32, torch.float64, *HALVES, torch.bool))
def test_signbit(dtype):
    if dtype.is_floating_point:
        x = torch.tensor([-0.0, 0.0, -1.5, 2.0, -INF, INF, NAN, -NAN], dtype=dtype)
    else:
        x = sample(dtype, (7,))
    check_op("signbit", [x], torch.signbit(x))


def test_inference_refuses_what_pytorch_refuses():
    # hypot has no integer kernel in PyTorch.
    with pytest.raises(RuntimeError):
        torch.hypot(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64))
    text, inputs = op_graph("hypot", [torch.ones(2, dtype=torch.int64)] * 2,
                            [torch.ones(2)])
    with pytest.raises(Exception, match="floating-point"):
        run_graph(text, inputs)


def test_imported_model():
    # Through from_torch: the ops as torch.export records them, and
    # var_mean, which the importer writes as var and mean.
    import traceir

    class M(torch.nn.Module):
        def forward(self, x, y):
            v, m = torch.var_mean(x, dim=1, correction=0)
            return (torch.special.erfinv(torch.tanh(x)), torch.lgamma(x.abs() + 0.1),
                    torch.polygamma(3, x.abs() + 0.5), torch.fmax(x, y), torch.exp2(y),
                    v, m, torch.var_mean(y, 0)[0])

    x, y = torch.randn(3, 5), torch.randn(3, 5)
    compiled = traceir.compile(traceir.from_torch(M(), (x, y)), "cpu")
    for got, want in zip(compiled(x, y), M()(x, y)):
        torch.testing.assert_close(torch.as_tensor(got), want, rtol=1e-5, atol=1e-6)
