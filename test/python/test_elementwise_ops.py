"""Elementwise ops against PyTorch, on the CPU and on CUDA (conftest.py's
`device` fixture; the cuda cases skip with one line where trace-run finds
no CUDA device): the binary Core ATen ops maximum, minimum, atan2,
bitwise_and/or/xor, bitwise_left/right_shift, logical_and/or/xor, fmod,
remainder (their Tensor and
Scalar overloads: the other operand a tensor or a Python number), clamp
(number bounds, clamp.default, and tensor bounds, clamp.Tensor), copy and
fill; the activations models call in place, which torch.export keeps
as they are (hardtanh_, hardswish_, silu_) with hardswish, hardsigmoid and
silu; and the in-place math ops --reinplace makes (exp_, erf_, tanh_, ...). Each runs over the dtypes PyTorch's CPU kernel takes, with
broadcasting, strided operands, NaN, 0-d and empty tensors, and the
errors PyTorch raises (an integer fmod by zero, bitwise ops of floats, a
clamp without bounds).

Tolerances: float results within rtol 1e-5 / atol 1e-6 of PyTorch (the
kernels compute in double and round once; atan2 is a libm function);
f16/bf16 one rounding step; integers and bools exactly.
"""
import pytest
import torch

import traceir_testing
from traceir_testing import Sliced, Transposed, check_op, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

torch.manual_seed(0)
NAN = float("nan")
INTS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def sample(dtype, shape):
    """Values of `dtype` with both signs where it has them, no zeros (the
    divisors of fmod and remainder)."""
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        x = torch.randn(shape) * 4
        return torch.where(x.abs() < 0.1, torch.full_like(x, 0.5), x).to(dtype)
    lo = 1 if dtype == torch.uint8 else -9
    x = torch.randint(lo, 10, shape)
    return torch.where(x == 0, torch.ones_like(x), x).to(dtype)


def tol(dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 1e-2, "atol": 1e-2}
    return {"rtol": 1e-5, "atol": 1e-6}


TAKES = {  # the dtypes PyTorch's CPU kernel takes
    "maximum": INTS + FLOATS + (torch.bool,), "minimum": INTS + FLOATS + (torch.bool,),
    "atan2": INTS + FLOATS + (torch.bool,),
    "bitwise_and": INTS + (torch.bool,), "bitwise_or": INTS + (torch.bool,),
    "bitwise_xor": INTS + (torch.bool,),
    "logical_and": INTS + FLOATS + (torch.bool,), "logical_or": INTS + FLOATS + (torch.bool,),
    "logical_xor": INTS + FLOATS + (torch.bool,),
    "fmod": INTS + FLOATS, "remainder": INTS + FLOATS,
}


@pytest.mark.parametrize("op", sorted(TAKES))
def test_binary_op_dtypes(op):
    fn = getattr(torch, op)
    for dtype in TAKES[op]:
        x, y = sample(dtype, (3, 4)), sample(dtype, (4,))
        check_op(op, [x, y], fn(x, y), **tol(dtype))


@pytest.mark.parametrize("op", sorted(TAKES))
def test_binary_op_layouts_and_promotion(op):
    fn = getattr(torch, op)
    ints = torch.float32 not in TAKES[op]
    dt = torch.int64 if ints else torch.float32
    x, y = sample(dt, (4, 5)), sample(dt, (4, 5))
    check_op(op, [Transposed(x), y], fn(x, y))
    check_op(op, [Sliced(x), Transposed(y)], fn(x, y))
    # 0-d and empty operands
    z = sample(dt, ())
    check_op(op, [z, y], fn(z, y))
    e = sample(dt, (0, 5))
    check_op(op, [e, y[0]], fn(e, y[0]))
    # Mixed dtypes promote as torch.result_type (an i32 with an i64 is i64;
    # an int with a float is the float).
    a = sample(torch.int32, (2, 3))
    b = sample(torch.int64 if ints else torch.float64, (2, 3))
    check_op(op, [a, b], fn(a, b))


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "fmod",
                                "remainder"])
def test_scalar_overloads(op):
    """The .Scalar overloads: the other operand a Python number."""
    fn = getattr(torch, op)
    i = sample(torch.int32, (6,))
    check_op(op, [i, 3], fn(i, 3))
    check_op(op, [i, -2], fn(i, -2))
    b = sample(torch.bool, (6,))
    check_op(op if op not in ("fmod", "remainder") else "bitwise_or", [b, True],
             fn(b, True) if op not in ("fmod", "remainder") else torch.bitwise_or(b, True))
    if op in ("fmod", "remainder"):
        f = sample(torch.float32, (6,))
        check_op(op, [f, 1.5], fn(f, 1.5))
        check_op(op, [f, -0.75], fn(f, -0.75))
        check_op(op, [i, 2.5], fn(i, 2.5))  # an int tensor and a float: f32


SHIFTS = ["bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("op", SHIFTS)
def test_shifts(op):
    """ATen's lshift/rshift kernels: in the result's width; a shift by a
    negative amount or by the width or more gives 0 (left) or the sign
    (right), the values' top bits shifted out as unsigned."""
    fn = getattr(torch, op)
    for dtype in INTS:
        bits = torch.iinfo(dtype).bits
        lo, hi = torch.iinfo(dtype).min, torch.iinfo(dtype).max
        a = torch.tensor([lo, hi, -1 if lo < 0 else 200, 5, 0, 1, 77, lo // 3 + 1],
                         dtype=torch.int64).to(dtype)
        amounts = [0, 1, 3, bits - 1, bits, bits + 5, 63, -1, -bits]
        b = torch.tensor(amounts if lo < 0 else [v for v in amounts if v >= 0], dtype=dtype)
        x, y = a.reshape(-1, 1), b.reshape(1, -1)
        check_op(op, [x, y], fn(x, y))
        t = sample(dtype, (4, 3))
        check_op(op, [Transposed(t), b[:3]], fn(t, b[:3]))
    # Mixed dtypes promote; the Tensor_Scalar and Scalar_Tensor overloads.
    i8, i64 = sample(torch.int8, (5,)), torch.tensor([0, 2, 7, 9, 70])
    check_op(op, [i8, i64], fn(i8, i64))
    u = torch.tensor([1, 128, 255, 3], dtype=torch.uint8)
    for amount in (2, 7, 8, 9, -1):
        check_op(op, [u, amount], fn(u, amount))
        check_op(op, [i8, amount], fn(i8, amount))
    check_op(op, [3, i8.abs()], fn(3, i8.abs()))
    check_op(op, [-100, torch.tensor([0, 1, 6, 7, 8, 100])],
             fn(-100, torch.tensor([0, 1, 6, 7, 8, 100])))


@pytest.mark.parametrize("op", SHIFTS)
def test_shift_layouts_and_refusals(op):
    fn = getattr(torch, op)
    x, y = sample(torch.int32, (4, 5)), torch.randint(-3, 40, (4, 5), dtype=torch.int32)
    check_op(op, [Transposed(x), y], fn(x, y))
    check_op(op, [Sliced(x), Transposed(y)], fn(x, y))
    e = sample(torch.int16, (0, 5))
    check_op(op, [e, y[0].to(torch.int16)], fn(e, y[0].to(torch.int16)))
    b = sample(torch.bool, (3,))
    with pytest.raises(Exception, match="takes integer tensors"):
        check_op(op, [b, b], b)
    f = sample(torch.float32, (3,))
    with pytest.raises(Exception, match="takes integer tensors"):
        check_op(op, [f, f], f)


def test_shift_operators_import():
    """`<<` and `>>` (aten.__lshift__ / __rshift__, as decompositions write
    them) run as the shifts."""
    import traceir

    class M(torch.nn.Module):
        def forward(self, x, y):
            return (x << y) + (x >> 2) + (x << 3) + (x >> y)

    m = M()
    x = sample(torch.int32, (3, 4))
    y = torch.randint(-2, 35, (3, 4), dtype=torch.int32)
    exe = traceir.compile(traceir.from_torch(m, (x, y)), device=traceir_testing.DEVICE)
    torch.testing.assert_close(exe(x, y), m(x, y), rtol=0, atol=0)


def test_nan_and_signs():
    x = torch.tensor([1.0, NAN, -2.0, NAN, 0.0, -0.0])
    y = torch.tensor([NAN, 1.0, 3.0, NAN, -0.0, 0.0])
    for op in ("maximum", "minimum", "atan2", "fmod", "remainder", "logical_and",
               "logical_or", "logical_xor"):
        check_op(op, [x, y], getattr(torch, op)(x, y))
    # The signs of fmod (the dividend's) and remainder (the divisor's).
    a = torch.tensor([7, -7, 7, -7, 0, 6])
    b = torch.tensor([3, 3, -3, -3, 5, -3])
    check_op("fmod", [a, b], torch.fmod(a, b))
    check_op("remainder", [a, b], torch.remainder(a, b))
    check_op("fmod", [a.float(), b.float()], torch.fmod(a.float(), b.float()))
    check_op("remainder", [a.float(), b.float()], torch.remainder(a.float(), b.float()))
    # The extreme integers: no overflow in % -1.
    m = torch.tensor([-(2 ** 63), 2 ** 63 - 1])
    check_op("remainder", [m, -1], torch.remainder(m, -1))
    check_op("fmod", [m, torch.tensor([-1, 2 ** 62])], torch.fmod(m, torch.tensor([-1, 2 ** 62])))
    big = torch.tensor([2 ** 62 + 1, -(2 ** 62) - 3])
    check_op("maximum", [big, torch.tensor([2 ** 62, -(2 ** 62)])],
             torch.maximum(big, torch.tensor([2 ** 62, -(2 ** 62)])))
    check_op("bitwise_xor", [big, -1], torch.bitwise_xor(big, -1))


def test_clamp():
    x = torch.randn(4, 5) * 3
    check_op("clamp", [x, -1.0, 0.5], torch.clamp(x, -1.0, 0.5))
    check_op("clamp", [x, -1.0], torch.clamp(x, -1.0))  # max left out
    check_op("clamp", [x, None, 0.5], torch.clamp(x, None, 0.5))
    check_op("clamp", [Transposed(x), 0, 1], torch.clamp(x, 0, 1))
    check_op("clamp", [x, 1.0, -1.0], torch.clamp(x, 1.0, -1.0))  # min > max gives max
    n = torch.tensor([NAN, 2.0, -5.0, 0.0])
    check_op("clamp", [n, -1.0, 1.0], torch.clamp(n, -1.0, 1.0))
    check_op("clamp", [n, NAN], torch.clamp(n, NAN))
    # Integer tensors: exact; a float bound promotes to f32.
    i = torch.randint(-9, 9, (10,))
    check_op("clamp", [i, -3, 4], torch.clamp(i, -3, 4))
    check_op("clamp", [i, None, -2 ** 62], torch.clamp(i, None, -2 ** 62))
    check_op("clamp", [i, 2.5], torch.clamp(i, 2.5))
    check_op("clamp", [i.to(torch.uint8).abs(), 3, 5], torch.clamp(i.to(torch.uint8).abs(), 3, 5))
    b = torch.rand(6) > 0.5
    check_op("clamp", [b, 0, 1], torch.clamp(b, 0, 1))  # bool with int bounds: i64
    for dt in (torch.float64, torch.float16, torch.bfloat16, torch.int8):
        v = sample(dt, (7,))
        check_op("clamp", [v, -2, 3], torch.clamp(v, -2, 3), **tol(dt))
    # clamp.Tensor: bounds that broadcast, NaN in a bound propagates.
    lo, hi = torch.randn(5) - 1, torch.randn(4, 1) + 1
    check_op("clamp", [x, lo, hi], torch.clamp(x, lo, hi))
    check_op("clamp", [x, None, hi], torch.clamp(x, None, hi))
    lo_nan = torch.tensor([0.0, NAN, 0.0, 0.0])
    check_op("clamp", [n, lo_nan], torch.clamp(n, lo_nan))
    check_op("clamp", [i, torch.tensor(2.5, dtype=torch.float64)],
             torch.clamp(i, torch.tensor(2.5, dtype=torch.float64)))


def test_copy_and_fill():
    self_ = torch.zeros(3, 4, dtype=torch.int32)
    src = torch.randn(4) * 9
    check_op("copy", [self_, src], torch.ops.aten.copy(self_, src))
    s = torch.randn(2, 3)
    check_op("copy", [torch.zeros(2, 3), Transposed(s)], torch.ops.aten.copy(torch.zeros(2, 3), s))
    check_op("copy", [torch.zeros(5, dtype=torch.bool), torch.tensor([0.0, 1.0, NAN, -0.0, 2.0])],
             torch.ops.aten.copy(torch.zeros(5, dtype=torch.bool),
                                 torch.tensor([0.0, 1.0, NAN, -0.0, 2.0])))
    for self_, value in ((torch.randn(2, 3), 2.5), (torch.zeros(4, dtype=torch.int64), 7),
                         (torch.zeros(4, dtype=torch.int32), 2.7),
                         (torch.zeros(3, dtype=torch.bool), True), (torch.zeros(0, 2), -1.0),
                         (torch.zeros((), dtype=torch.float16), 0.1)):
        check_op("fill", [self_, value], torch.ops.aten.fill(self_, value))


def run_error(op, args, result):
    text, inputs = op_graph(op, args, [result])
    with pytest.raises(Exception) as info:
        run_graph(text, inputs)
    return str(info.value)


def test_errors():
    i = torch.tensor([4, 5, 6])
    # PyTorch raises ZeroDivisionError; the run fails naming the division.
    assert "integer division by zero" in run_error("fmod", [i, torch.tensor([1, 0, 2])], i)
    assert "integer division by zero" in run_error("remainder", [i, 0], i)


def test_inference_refuses_what_pytorch_refuses():
    import traceir
    f = torch.randn(3)
    for op, args, msg in (
            ("bitwise_and", [f, f], "takes integer or bool tensors"),
            ("fmod", [f > 0, f > 0], "takes no bool tensor"),
            ("clamp", [f, None, None], "at least one of 'min' or 'max' must not be None"),
            ("copy", [torch.zeros(3), torch.zeros(2, 3)], "does not broadcast to self's"),
            ("maximum", [torch.zeros(3), torch.zeros(4)], "cannot be broadcast")):
        text, _ = op_graph(op, args, [f])
        with pytest.raises(traceir.TraceIRError, match=msg):
            traceir.Module.parse(text)


@pytest.mark.parametrize("op", ["hardsigmoid", "hardswish", "silu"])
def test_activations(op):
    fn = getattr(torch.nn.functional, op)
    x = torch.cat([torch.linspace(-5, 5, 41), torch.tensor([-3.0, 3.0, NAN, float("inf"),
                                                            float("-inf")])])
    check_op(op, [x], fn(x))
    y = torch.randn(3, 4)
    check_op(op, [Transposed(y)], fn(y))
    for dt in (torch.float64, torch.float16, torch.bfloat16):
        v = sample(dt, (9,))
        check_op(op, [v], fn(v), **tol(dt))
    check_op(op, [torch.randn(0, 3)], fn(torch.randn(0, 3)))


def test_in_place_activations():
    """An in-place op writes its input and returns it: the graph's result is
    the input after the call (check_op passes a copy)."""
    x = torch.randn(4, 6) * 4
    check_op("hardtanh_", [x, -1.0, 2.0], torch.nn.functional.hardtanh(x, -1.0, 2.0))
    check_op("hardtanh_", [x], torch.nn.functional.hardtanh(x))
    check_op("hardswish_", [x], torch.nn.functional.hardswish(x))
    check_op("silu_", [x], torch.nn.functional.silu(x))
    # Through from_torch: ReLU6, Hardswish and SiLU modules in place, as
    # MobileNet and EfficientNet call them, import without decomposing.
    import traceir
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU6(inplace=True),
                                torch.nn.Hardswish(inplace=True), torch.nn.SiLU(inplace=True),
                                torch.nn.Hardsigmoid()).eval()
    img = torch.randn(1, 3, 6, 6)
    m = traceir.from_torch(model, (img,), decompose=False)
    ops = {n.target for g in m.graphs for n in g.nodes if n.op == "pyop"}
    assert {"hardtanh_", "hardswish_", "silu_", "hardsigmoid"} <= ops, ops
    with torch.no_grad():
        want = model(img)
    got = traceir.compile(m.run_passes("free-dead-tensors"), traceir_testing.DEVICE)(img)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["erf_", "exp_", "rsqrt_", "sigmoid_", "sqrt_", "tanh_"])
def test_in_place_math(op):
    """The in-place unary ops --reinplace rewrites their pure forms into: the
    input written and returned, as PyTorch's, over its floating dtypes and
    through a transposed view (the write goes through the view's strides);
    integers refused, as PyTorch refuses to write a float result into them."""
    import traceir
    fn = getattr(torch, op[:-1])
    for dt in FLOATS:
        x = sample(dt, (3, 5))
        if op in ("rsqrt_", "sqrt_"):
            x = x.abs()
        check_op(op, [x], fn(x), **tol(dt))
    x = torch.rand(4, 6) + 0.5
    check_op(op, [Transposed(x)], fn(x))
    i = torch.tensor([1, 2])
    text, _ = op_graph(op, [i], [i])
    with pytest.raises(traceir.TraceIRError, match="takes floating-point tensors"):
        traceir.Module.parse(text)


def test_activations_refuse_integers():
    import traceir
    i = torch.tensor([1, 2])
    for op in ("hardswish", "silu_", "hardsigmoid"):
        text, _ = op_graph(op, [i], [i])
        with pytest.raises(traceir.TraceIRError, match="takes floating-point tensors"):
            traceir.Module.parse(text)
