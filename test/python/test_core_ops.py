"""Core kernels against PyTorch, on the CPU and on CUDA (the `device`
fixture of conftest.py; the cuda cases skip, with one line saying why,
where trace-run finds no CUDA device): elementwise ops with broadcasting,
dtype promotion and non-contiguous operands, views, matrix products (BLAS
on the CPU, cuBLAS on CUDA), sum, mean, amax, amin, prod, any, argmax,
argmin, cumsum, cumprod, var, softmax, log_softmax,
layer_norm, native_layer_norm, cat, embedding and dropout
(lib/Runtime/CPU, CUDA/Reductions.cpp/.cu, CUDA/NN.cpp/.cu), and the
memory report of a run.

Non-contiguous (Transposed, Sliced), 0-d and empty inputs, NaN and -inf,
exact int64 sums, promotion and the kernels' errors run on both devices.
On CUDA only (marked devices("cuda")): shapes that take both of its paths
(a thread per short group, a block per long one, rows longer than a
block), the grids over every dim and keepdim in the float dtypes (f32,
f64, f16, bf16) and over the integer dtypes, f16/bf16 products, and a
second device. Dropout cannot match PyTorch's mask, so its tests check the
drop rate, the 1/(1-p) scaling and that a run's seed fixes the mask.

Tolerances: f32 within rtol 1e-5 / atol 1e-6 of PyTorch; atol 1e-5 for
layer norm and for reductions and softmax over strided or long inputs
(1e-4 where hundreds of elements are summed); matrix products rtol 1e-4 /
atol 1e-5 (the larger ones 1e-4 / 1e-4), the summation order differs; f64
rtol 1e-10 / atol 1e-12; f16/bf16 one rounding step of the result dtype
(the reference is computed in f64 and rounded once, as the kernels do;
products 1e-2 and 5e-2); integer and bool results exactly.
"""
import pytest
import torch
import torch.nn.functional as F

from traceir_testing import (RunError, Sliced, Transposed, check_op, op_graph, reported_device,
                             run_graph)

pytestmark = pytest.mark.usefixtures("device")
CUDA_ONLY = pytest.mark.devices("cuda")

torch.manual_seed(0)

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def check_op_nan(op, args, want, **tol):
    """check_op for results holding NaN (check_op treats NaN as a mismatch)."""
    text, inputs = op_graph(op, args, [want])
    (got,), _ = run_graph(text, inputs)
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, equal_nan=True, **tol)
    return got


def via_f64(fn, x, *rest):
    """fn computed in f64 on x (and tensors in rest), rounded to x's dtype."""
    up = [r.double() if isinstance(r, torch.Tensor) else r for r in rest]
    return fn(x.double(), *up).to(x.dtype)


#===--- elementwise ----------------------------------------------------------===#

BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge,
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_broadcast(op):
    a, b = rnd(3, 1, 4), rnd(5, 1)
    check_op(op, [a, b], BINARY[op](a, b))


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div"])
def test_binary_non_contiguous(op):
    a, b = rnd(4, 3), rnd(4, 3)
    check_op(op, [Transposed(a), Sliced(b)], BINARY[op](a, b))


@pytest.mark.parametrize("op,fn", [("add", torch.add), ("mul", torch.mul), ("div", torch.div),
                                   ("lt", torch.lt), ("pow", torch.pow)])
def test_binary_positive_operands(op, fn):
    # Positive operands (pow's base), broadcast and transposed.
    a, b = torch.rand(3, 1, 4) + 0.5, torch.rand(5, 1) + 0.5
    check_op(op, [a, b], fn(a, b))
    c, d = torch.rand(4, 3) + 0.5, torch.rand(4, 3) + 0.5
    check_op(op, [Transposed(c), d], fn(c, d))


def test_binary_scalars_and_promotion():
    i = torch.randint(-5, 5, (4,))
    x = rnd(4)
    check_op("add", [i, 2], i + 2)
    check_op("mul", [i, 0.5], i * 0.5)  # int tensor x float -> f32
    check_op("add", [x, i], x + i)
    check_op("sub", [3.0, x], 3.0 - x)
    check_op("add", [x, x, 2.5], torch.add(x, x, alpha=2.5))
    check_op("div", [i, 3], torch.div(i, 3))  # true division -> f32
    j = torch.randint(1, 4, (4,))
    check_op("div", [i, j, "floor"], torch.div(i, j, rounding_mode="floor"))
    check_op("div", [i, j, "trunc"], torch.div(i, j, rounding_mode="trunc"))
    b = torch.rand(4) > 0.5
    check_op("add", [b, 1], b + 1)  # bool + int -> i64


def test_integer_division_by_zero_is_an_error():
    a, b = torch.tensor([4, 2]), torch.tensor([2, 0])
    text, inputs = op_graph("div", [a, b, "floor"], [a])
    with pytest.raises(RunError, match="integer division by zero"):
        run_graph(text, inputs)


def test_pow_and_where():
    x = torch.rand(3, 4) + 0.1
    check_op("pow", [x, 2.5], torch.pow(x, 2.5))
    y = torch.rand(3, 4)
    check_op("pow", [x, y], torch.pow(x, y))
    c = torch.rand(3, 4) > 0.5
    check_op("where", [c, x, y], torch.where(c, x, y))
    check_op("where", [c, x, 0.0], torch.where(c, x, 0.0))


UNARY = {
    "neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "exp": torch.exp,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid,
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    x = rnd(3, 5)
    check_op(op, [x], UNARY[op](x))
    check_op(op, [Transposed(x)], UNARY[op](x))


def test_unary_positive_domain():
    x = torch.rand(4, 3) + 0.05
    check_op("log", [x], torch.log(x))
    check_op("sqrt", [x], torch.sqrt(x))
    check_op("rsqrt", [Sliced(x)], torch.rsqrt(x))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    x = rnd(6, 2)
    check_op("gelu", [x, approximate], F.gelu(x, approximate=approximate))
    # Transposed, and "none" left out (the default).
    y = rnd(6, 5)
    given = [approximate] if approximate != "none" else []
    check_op("gelu", [Transposed(y), *given], F.gelu(y, approximate=approximate))


def test_in_place():
    x, y = rnd(3, 4), rnd(4)
    check_op("add_", [x, y], x.clone().add_(y))
    check_op("sub_", [x, y, 2], x.clone().sub_(y, alpha=2))
    check_op("mul_", [x, 3.0], x.clone().mul_(3.0))
    check_op("div_", [x, y], x.clone().div_(y))
    check_op("relu_", [x], x.clone().relu_())
    check_op("zero_", [x], torch.zeros_like(x))
    check_op("fill_", [x, 1.5], torch.full_like(x, 1.5))
    check_op("copy_", [x, y], x.clone().copy_(y))


#===--- views ----------------------------------------------------------------===#

def test_views():
    x = rnd(2, 3, 4)
    check_op("view", [x, (6, 4)], x.view(6, 4))
    check_op("view", [x, (-1, 12)], x.view(-1, 12))
    check_op("reshape", [Transposed(x), (24,)], x.reshape(24))
    check_op("transpose", [x, 0, 2], x.transpose(0, 2))
    check_op("permute", [x, (2, 0, 1)], x.permute(2, 0, 1))
    check_op("t", [x[0]], x[0].t())
    check_op("unsqueeze", [x, -1], x.unsqueeze(-1))
    check_op("squeeze", [x.unsqueeze(1), 1], x.unsqueeze(1).squeeze(1))
    check_op("squeeze", [x.unsqueeze(1)], x.unsqueeze(1).squeeze())
    check_op("flatten", [x, 1], x.flatten(1))
    check_op("flatten", [Transposed(x)], x.flatten())
    e = rnd(3, 1)
    check_op("expand", [e, (2, 3, 4)], e.expand(2, 3, 4))
    check_op("expand", [e, (-1, 5)], e.expand(-1, 5))
    check_op("select", [x, 1, -1], x.select(1, -1))
    check_op("slice", [x, 2, 1, 100, 2], x[:, :, 1::2])
    check_op("slice", [x, 0, -1], x[-1:])
    check_op("narrow", [x, 1, 1, 2], x.narrow(1, 1, 2))
    check_op("contiguous", [Transposed(x)], x.contiguous())
    check_op("clone", [Sliced(x)], x.clone())


def test_view_of_non_viewable_is_an_error():
    x = rnd(3, 4)
    text, inputs = op_graph("view", [Transposed(x), (12,)], [x.reshape(12)])
    with pytest.raises(RunError, match="view: size \\[12\\] is not compatible"):
        run_graph(text, inputs)


#===--- matrix products ------------------------------------------------------===#

def test_matrix_products():
    a, b = rnd(5, 3), rnd(3, 4)
    check_op("mm", [a, b], a @ b, rtol=1e-4, atol=1e-5)
    check_op("mm", [Transposed(a), Transposed(b)], a @ b, rtol=1e-4, atol=1e-5)
    v = rnd(3)
    check_op("matmul", [v, b], v @ b, rtol=1e-4, atol=1e-5)
    check_op("matmul", [a, v], a @ v, rtol=1e-4, atol=1e-5)
    x, y = rnd(2, 1, 5, 3), rnd(4, 3, 6)
    check_op("matmul", [x, y], x @ y, rtol=1e-4, atol=1e-5)
    p, q = rnd(4, 2, 3), rnd(4, 3, 5)
    check_op("bmm", [p, Transposed(q)], torch.bmm(p, q), rtol=1e-4, atol=1e-5)
    w, bias = rnd(7, 3), rnd(7)
    inp = rnd(2, 5, 3)
    check_op("linear", [inp, w, bias], F.linear(inp, w, bias), rtol=1e-4, atol=1e-5)
    check_op("linear", [Sliced(a), w, None], F.linear(a, w), rtol=1e-4, atol=1e-5)
    c = rnd(5, 4)
    check_op("addmm", [c, a, b, 0.5, 2.0], torch.addmm(c, a, b, beta=0.5, alpha=2.0),
             rtol=1e-4, atol=1e-5)
    r = rnd(4)
    check_op("addmm", [r, a, b], torch.addmm(r, a, b), rtol=1e-4, atol=1e-5)
    d = rnd(5, 3, dtype=torch.float64)
    check_op("mm", [d, d.t().contiguous()], d @ d.t(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype,tol", [
    (torch.float32, 1e-4),
    # The CPU's products take f32 and f64 only.
    pytest.param(torch.float16, 1e-2, marks=CUDA_ONLY),
    pytest.param(torch.bfloat16, 5e-2, marks=CUDA_ONLY)])
def test_gemm(dtype, tol):
    a, b = torch.randn(33, 17).to(dtype), torch.randn(17, 9).to(dtype)
    want = (a.float() @ b.float()).to(dtype)
    check_op("mm", [a, b], want, rtol=tol, atol=tol)
    check_op("mm", [Transposed(a), b], want, rtol=tol, atol=tol)
    x, w, bias = torch.randn(2, 5, 8), torch.randn(6, 8), torch.randn(6)
    check_op("linear", [x, w, bias], F.linear(x, w, bias), rtol=1e-4, atol=1e-4)
    p, q = torch.randn(4, 2, 3), torch.randn(4, 3, 5)
    check_op("bmm", [p, q], torch.bmm(p, q), rtol=1e-4, atol=1e-4)


#===--- the memory report ----------------------------------------------------===#

def test_memory_report():
    x = torch.randn(64, 64)
    text, inputs = op_graph("exp", [x], [x])
    _, report = run_graph(text, inputs)
    dev = report["devices"][0]
    assert dev["device"] == reported_device(), report
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"] == 64 * 64 * 4
    assert dev["allocated_peak_bytes"] >= dev["peak_bytes"]


@CUDA_ONLY
def test_second_device_where_present():
    """cuda:1 runs the same graph and reports its own memory (two GPUs only)."""
    x = torch.randn(4, 5)
    text, inputs = op_graph("tanh", [x], [x])
    try:
        outs, report = run_graph(text, inputs, device="cuda:1")
    except RunError as e:  # the runner's message says why
        if "no CUDA device cuda:1" in str(e):
            pytest.skip("one CUDA device only: no cuda:1")
        raise
    assert report["devices"][0]["device"] == "cuda:1"
    torch.testing.assert_close(outs[0], torch.tanh(x), rtol=1e-5, atol=1e-6)


#===--- sum / mean / amax / amin / prod / any --------------------------------===#

def test_reductions():
    x = rnd(3, 4, 5)
    check_op("sum", [x], x.sum())
    check_op("sum", [x, (0, 2), True], x.sum((0, 2), keepdim=True))
    check_op("mean", [Transposed(x), 1], x.mean(1))
    check_op("amax", [x, -1], x.amax(-1))
    check_op("amin", [x, (0, 1), True], x.amin((0, 1), keepdim=True))
    check_op("prod", [x, 1], x.prod(1))
    check_op("any", [x > 1, (0, 2)], (x > 1).any((0, 2)))
    i = torch.randint(0, 9, (3, 4), dtype=torch.int32)
    check_op("sum", [i, 1], i.sum(1))  # ints sum to i64


# (dims, keepdim); None: the argument left out.
REDUCE_DIMS = [(None, False), ((), True), (0, False), (-1, True), ((0, 2), False),
               ((1,), True), ((-3, -1, 1), False)]


@CUDA_ONLY
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_reduce_float(op, dtype):
    x = rnd(3, 4, 5, dtype=dtype)
    for dims, keepdim in REDUCE_DIMS:
        if dims is None:
            want = via_f64(lambda t: getattr(t, op)(), x)
            check_op(op, [x], want, **TOL[dtype])
            continue
        if op in ("amax", "amin"):
            want = getattr(x, op)(dims, keepdim=keepdim)
        else:
            all_dims = dims if dims != () else tuple(range(x.dim()))
            want = via_f64(lambda t: getattr(t, op)(all_dims, keepdim=keepdim), x)
        check_op(op, [x, dims, keepdim], want, **TOL[dtype])


@CUDA_ONLY
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
def test_reduce_long_groups(op):
    # Groups longer than 32 take the block path; longer than 256 loop in it.
    for shape, dims in [((2, 300), 1), ((700,), 0), ((5, 33, 2), (1, 2)), ((4, 1000), (0, 1)),
                        ((257, 3), 0), ((64, 64), None)]:
        x = rnd(*shape)
        args = [x] if dims is None else [x, dims]
        fn = getattr(torch, op)
        want = fn(x) if dims is None else fn(x, dims)
        check_op(op, args, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
def test_reduce_strided(op):
    x = rnd(6, 7, 40)
    fn = getattr(torch, op)
    check_op(op, [Transposed(x), 1], fn(x, 1), rtol=1e-5, atol=1e-5)
    check_op(op, [Transposed(x), (0, 2), True], fn(x, (0, 2), keepdim=True), rtol=1e-5,
             atol=1e-4)
    check_op(op, [Sliced(x), 0], fn(x, 0), rtol=1e-5, atol=1e-5)
    check_op(op, [Sliced(x), (0, 1)], fn(x, (0, 1)), rtol=1e-5, atol=1e-4)
    check_op(op, [Sliced(x), -1, True], fn(x, -1, keepdim=True), rtol=1e-5, atol=1e-5)


def test_reduce_0d():
    x = torch.tensor(2.5)
    check_op("sum", [x], x.sum())
    check_op("mean", [x], x.mean())
    check_op("amax", [x], x.amax())
    check_op("amin", [x, 0, True], x.amin(0, keepdim=True))
    check_op("prod", [x, -1], x.prod(-1))
    check_op("any", [x], x.any())


@CUDA_ONLY
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8,
                                   torch.uint8, torch.bool])
def test_reduce_integer(dtype):
    if dtype == torch.bool:
        x = torch.rand(4, 50) < 0.5
    elif dtype == torch.uint8:
        x = torch.randint(0, 255, (4, 50), dtype=dtype)
    else:
        x = torch.randint(-100, 100, (4, 50), dtype=dtype)
    for dims in [1, (0, 1)]:
        check_op("sum", [x, dims], x.sum(dims))  # sums to i64, exactly
        check_op("amax", [Sliced(x), dims, True], x.amax(dims, keepdim=True))
    check_op("sum", [Transposed(x), 0, True], x.sum(0, keepdim=True))
    check_op("amax", [Transposed(x), 0], x.amax(0))
    check_op("amin", [Sliced(x), 1], x.amin(1))
    check_op("sum", [x], x.sum())
    # Products wrap in int64, as PyTorch's, in any order.
    check_op("prod", [Transposed(x), 0, True], x.prod(0, keepdim=True))
    check_op("prod", [x], x.prod())
    check_op("any", [Sliced(x), 1], x.any(1))


def test_sum_int64_is_exact():
    # Beyond double's 53 bits: only an int64 accumulator gets these right.
    big = 2 ** 60
    x = torch.tensor([[big + 1, 3, -big], [big, big, -(2 ** 62)]] * 3, dtype=torch.int64)
    check_op("sum", [x, 1], x.sum(1))
    check_op("sum", [x], x.sum())
    check_op("amax", [x, 0], x.amax(0))
    y = torch.full((2, 100), big + 7, dtype=torch.int64)  # the CUDA block path
    y[:, ::2] = -big
    check_op("sum", [y, 1], y.sum(1))
    check_op("amax", [y - big, 1], (y - big).amax(1))
    # Wrapping on overflow, as int64 arithmetic does.
    z = torch.full((40,), 2 ** 62, dtype=torch.int64)
    check_op("sum", [z, 0], z.sum(0))


def test_amax_propagates_nan():
    x = rnd(4, 10)
    x[1, 3] = float("nan")
    assert check_op_nan("amax", [x, 1], x.amax(1))[1].isnan()
    assert check_op_nan("amax", [x, 0], x.amax(0))[3].isnan()
    y = rnd(3, 500)  # the CUDA block path
    y[2, 417] = float("nan")
    assert check_op_nan("amax", [y, 1], y.amax(1))[2].isnan()
    assert check_op_nan("amax", [y], y.amax()).isnan()
    z = torch.full((2, 40), float("-inf"))
    check_op("amax", [z, 1], z.amax(1))


def test_reduce_empty():
    x = torch.zeros(3, 0)
    check_op("sum", [x, 1], x.sum(1))
    assert check_op_nan("mean", [x, 1], x.mean(1)).isnan().all()  # 0 / 0
    check_op("sum", [x, 0], x.sum(0))
    check_op("prod", [x, 1], x.prod(1))  # the empty product is 1
    check_op("prod", [x], x.prod())
    check_op("any", [x, 1], x.any(1))  # the empty any is False
    check_op("amax", [x, 0], x.amax(0))  # an empty result of nonempty groups
    check_op("amin", [x, 0, True], x.amin(0, keepdim=True))
    for op in ("amax", "amin"):
        text, inputs = op_graph(op, [x, 1], [torch.zeros(3)])
        with pytest.raises(RunError, match="reduction dim 1 has size 0, and a reduction "
                                           "without an identity"):
            run_graph(text, inputs)
        text, inputs = op_graph(op, [x], [torch.zeros(())])
        with pytest.raises(RunError, match="reduction dim 1 has size 0"):
            run_graph(text, inputs)


def test_amin_propagates_nan():
    x = rnd(4, 10)
    x[1, 3] = float("nan")
    assert check_op_nan("amin", [x, 1], x.amin(1))[1].isnan()
    y = rnd(3, 500)  # the CUDA block path
    y[2, 417] = float("nan")
    assert check_op_nan("amin", [y, 1], y.amin(1))[2].isnan()
    z = torch.full((2, 40), float("inf"))
    check_op("amin", [z, 1], z.amin(1))
    big = torch.tensor([[2 ** 62, -(2 ** 62) - 5, 7]], dtype=torch.int64)
    check_op("amin", [big, 1], big.amin(1))  # exact beyond double's 53 bits


def test_prod():
    x = rnd(3, 4, 5)
    # prod.default (no dim) and prod.dim_int share the row `prod`.
    check_op("prod", [x], x.prod())
    check_op("prod", [x, -1, True], x.prod(-1, keepdim=True))
    check_op("prod", [x, 0, False, "torch.float64"], x.prod(0, dtype=torch.float64))
    check_op("prod", [x, None, False, "torch.float64"], x.prod(dtype=torch.float64))
    # Bools and narrow ints multiply to i64, as sum.
    b = torch.rand(4, 6) < 0.8
    check_op("prod", [b, 1], b.prod(1))
    i = torch.randint(-3, 4, (4, 9), dtype=torch.int32)
    check_op("prod", [i, 1], i.prod(1))
    check_op("prod", [i], i.prod())
    check_op("prod", [i, 1, False, "torch.int32"], i.prod(1, dtype=torch.int32))
    y = 1 + rnd(2, 300) / 100  # the CUDA block path, near 1 to stay finite
    check_op("prod", [y, 1], y.prod(1), rtol=1e-5, atol=1e-5)
    n = x.clone()
    n[2, 1, 3] = float("nan")
    assert check_op_nan("prod", [n, 2], n.prod(2))[2, 1].isnan()
    # prod.dim_int takes one dim: a list is refused, as PyTorch does.
    text, inputs = op_graph("prod", [x, (0, 1)], [torch.zeros(5)])
    with pytest.raises(RunError, match="dim"):
        run_graph(text, inputs)


def test_any():
    x = torch.tensor([[0.0, 0.5, 0.0], [0.0, 0.0, 0.0], [float("nan"), 0.0, -0.0]])
    check_op("any", [x, 1], x.any(1))  # 0.5 and NaN are true, -0.0 is not
    check_op("any", [x], x.any())
    check_op("any", [x, (0, 1), True], x.any((0, 1), keepdim=True))
    check_op("any", [Transposed(x), 0], x.any(0))
    # any.dims with an empty list reduces nothing (where amax reduces all).
    check_op("any", [x, ()], torch.ops.aten.any.dims(x, []))
    check_op("any", [x, None, True], x.any(None, keepdim=True))
    b = torch.rand(5, 70) < 0.01  # the CUDA block path
    check_op("any", [b, 1], b.any(1))
    i = torch.randint(0, 2, (4, 40), dtype=torch.int64) * 3
    check_op("any", [i, 1], i.any(1))
    u = torch.randint(0, 2, (4, 8), dtype=torch.uint8)
    check_op("any", [u, 0], u.any(0))  # uint8 stays uint8, as PyTorch


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin(op):
    fn = getattr(torch, op)
    x = rnd(3, 4, 5)
    check_op(op, [x], fn(x))  # dim=None: a position in the flattened input
    check_op(op, [x, None, True], fn(x, None, keepdim=True))
    check_op(op, [x, 1], fn(x, 1))
    check_op(op, [Transposed(x), -1, True], fn(x, -1, keepdim=True))
    check_op(op, [Sliced(x), 0], fn(x, 0))
    # Ties go to the first position; the first NaN wins, as PyTorch's.
    t = torch.tensor([[1.0, 3.0, 3.0, -1.0, -1.0], [float("nan"), 2.0, float("nan"), 9.0, -9.0],
                      [0.0, 0.0, 0.0, 0.0, 0.0]])
    check_op(op, [t, 1], fn(t, 1))
    check_op(op, [t], fn(t))
    y = rnd(3, 400)  # the CUDA block path, ties and NaN across threads
    y[0, 100:] = y[0].max() + 1 if op == "argmax" else y[0].min() - 1
    y[1, 333] = y[1, 77] = float("nan")
    check_op(op, [y, 1], fn(y, 1))
    # Integers compare exactly beyond double's 53 bits.
    big = 2 ** 60
    i = torch.tensor([[big + 1, big + 3, big + 2], [-big - 1, -big - 3, -big - 2]])
    check_op(op, [i, 1], fn(i, 1))
    u = torch.randint(0, 255, (4, 50), dtype=torch.uint8)
    check_op(op, [u, 0], fn(u, 0))
    check_op(op, [torch.tensor(2.5), 0], fn(torch.tensor(2.5), 0))
    e = torch.zeros(0, 3)
    check_op(op, [e, 1], fn(e, 1))  # an empty result of nonempty groups
    text, inputs = op_graph(op, [e, 0], [torch.zeros(3, dtype=torch.int64)])
    with pytest.raises(RunError, match="reduction dim 0 has size 0"):
        run_graph(text, inputs)
    b = torch.ones(4, 2, dtype=torch.bool)  # PyTorch orders no bools
    text, inputs = op_graph(op, [b, 0], [torch.zeros(2, dtype=torch.int64)])
    with pytest.raises(RunError, match=f"{op}.*does not support bool input"):
        run_graph(text, inputs)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")
def test_var():
    # var.correction(self, dim=None, *, correction=None, keepdim=False).
    x = rnd(3, 4, 5)
    check_op("var", [x], x.var())
    check_op("var", [x, 1], x.var(1))
    check_op("var", [x, (0, 2), 0, True], x.var((0, 2), correction=0, keepdim=True))
    check_op("var", [Transposed(x), -1, 2.5], x.var(-1, correction=2.5))
    check_op("var", [Sliced(x), ()], x.var(()))  # [] reduces every dim, as sum
    y = 3 + rnd(2, 300)  # the CUDA block path; an offset mean
    check_op("var", [y, 1], y.var(1), rtol=1e-5, atol=1e-5)
    d = rnd(4, 6, dtype=torch.float64)
    check_op("var", [d, 0, 1], d.var(0, correction=1), rtol=1e-10, atol=1e-12)
    # A group of 1: correction=1 divides 0 by 0 (nan), correction=0 gives 0;
    # correction past n divides a nonzero sum by 0 (inf) as PyTorch's max(0, .).
    one = rnd(3, 1)
    assert check_op_nan("var", [one, 1], one.var(1)).isnan().all()
    check_op("var", [one, 1, 0], one.var(1, correction=0))
    two = torch.tensor([[1.0, 2.0]])
    check_op("var", [two, 1, 3], two.var(1, correction=3))
    e = torch.zeros(0, 3)
    assert check_op_nan("var", [e, 0], e.var(0)).isnan().all()
    check_op("var", [e, 1], e.var(1))
    i = torch.ones(3, dtype=torch.int64)
    text, inputs = op_graph("var", [i], [torch.zeros(())])
    with pytest.raises(RunError, match="var.*only support floating point"):
        run_graph(text, inputs)


def test_cumsum():
    x = rnd(3, 4, 5)
    check_op("cumsum", [x, 1], x.cumsum(1), rtol=1e-5, atol=1e-5)
    check_op("cumsum", [Transposed(x), -1], x.cumsum(-1), rtol=1e-5, atol=1e-5)
    check_op("cumsum", [Sliced(x), 0], x.cumsum(0), rtol=1e-5, atol=1e-5)
    check_op("cumsum", [x, 2, "torch.float64"], x.cumsum(2, dtype=torch.float64))
    check_op("cumsum", [torch.tensor(2.5), 0], torch.tensor(2.5).cumsum(0))
    e = torch.zeros(3, 0)
    check_op("cumsum", [e, 1], e.cumsum(1))
    check_op("cumsum", [e, 0], e.cumsum(0))
    # Integers and bools sum to i64, exactly and wrapping; dtype= casts.
    i = torch.randint(-100, 100, (4, 50), dtype=torch.int32)
    check_op("cumsum", [i, 1], i.cumsum(1))
    check_op("cumsum", [i, 0, "torch.int32"], i.cumsum(0, dtype=torch.int32))
    b = torch.rand(4, 7) < 0.5
    check_op("cumsum", [b, 1], b.cumsum(1))
    big = torch.tensor([2 ** 62, 2 ** 62, 2 ** 62, 1], dtype=torch.int64)
    check_op("cumsum", [big, 0], big.cumsum(0))
    n = x.clone()
    n[1, 2, 0] = float("nan")
    assert check_op_nan("cumsum", [n, 1], n.cumsum(1))[1, 3, 0].isnan()
    text, inputs = op_graph("cumsum", [x, 3], [x])
    with pytest.raises(RunError, match="dim 3 is out of range for a tensor of rank 3"):
        run_graph(text, inputs)


def test_cumprod():
    # cumsum's kernel with products: the same layouts, dtypes and wrapping.
    x = rnd(3, 4, 5)
    check_op("cumprod", [x, 1], x.cumprod(1), rtol=1e-5, atol=1e-6)
    check_op("cumprod", [Transposed(x), -1], x.cumprod(-1), rtol=1e-5, atol=1e-6)
    check_op("cumprod", [Sliced(x), 0], x.cumprod(0), rtol=1e-5, atol=1e-6)
    check_op("cumprod", [x, 2, "torch.float64"], x.cumprod(2, dtype=torch.float64))
    e = torch.zeros(3, 0)
    check_op("cumprod", [e, 1], e.cumprod(1))
    i = torch.randint(-3, 4, (4, 30), dtype=torch.int32)
    check_op("cumprod", [i, 1], i.cumprod(1))
    b = torch.rand(4, 7) < 0.7
    check_op("cumprod", [b, 1], b.cumprod(1))
    big = torch.tensor([2 ** 40, 2 ** 40, 3], dtype=torch.int64)
    check_op("cumprod", [big, 0], big.cumprod(0))
    z = torch.tensor([2.0, 0.0, float("inf"), 3.0])
    check_op_nan("cumprod", [z, 0], z.cumprod(0))
    text, inputs = op_graph("cumprod", [x, -4], [x])
    with pytest.raises(RunError, match="dim -4 is out of range for a tensor of rank 3"):
        run_graph(text, inputs)


#===--- softmax / log_softmax ------------------------------------------------===#

SOFTMAX = [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)]


@pytest.mark.parametrize("op,fn", SOFTMAX)
def test_softmax(op, fn):
    x = rnd(3, 4, 5) * 4
    for dim in (0, 1, -1):
        check_op(op, [x, dim], fn(x, dim))
    check_op(op, [Transposed(x), 1], fn(x, 1))


@CUDA_ONLY
@pytest.mark.parametrize("op,fn", SOFTMAX)
@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_dtypes(op, fn, dtype):
    x = (rnd(3, 4, 5) * 4).to(dtype)
    for dim in (0, 1, -1):
        check_op(op, [x, dim], via_f64(lambda t: fn(t, dim), x), **TOL[dtype])
    check_op(op, [Transposed(x), -1], via_f64(lambda t: fn(t, -1), x), **TOL[dtype])
    check_op(op, [Sliced(x), 0], via_f64(lambda t: fn(t, 0), x), **TOL[dtype])


@CUDA_ONLY
@pytest.mark.parametrize("op,fn", SOFTMAX)
def test_softmax_long_rows(op, fn):
    for shape, dim in [((2, 1000), -1), ((3, 300, 2), 1), ((257,), 0), ((33, 40), 0),
                       ((1, 5000), 1)]:
        x = rnd(*shape) * 3
        check_op(op, [x, dim], fn(x, dim), rtol=1e-5, atol=1e-5)
    x = rnd(4, 600)
    check_op(op, [Transposed(x), 0], fn(x, 0), rtol=1e-5, atol=1e-5)
    check_op(op, [Transposed(x), 1], fn(x, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,fn", SOFTMAX)
def test_softmax_extremes(op, fn):
    # Large magnitudes need the max subtracted; -inf entries give 0 (or
    # -inf); a row of -inf only is NaN, as in PyTorch.
    x = rnd(4, 50, dtype=torch.float64) * 500
    x[0, 3] = float("-inf")
    x[2, :] = float("-inf")
    out = check_op_nan(op, [x, 1], fn(x, 1), rtol=1e-10, atol=1e-12)
    assert out[2].isnan().all()
    y = rnd(3, 8) * 1000
    check_op(op, [y, -1], fn(y, -1), rtol=1e-5, atol=1e-5)


def test_softmax_of_integers_is_f32():
    x = torch.randint(-5, 5, (3, 7))
    check_op("softmax", [x, 1], torch.softmax(x.double(), 1).float())
    check_op("log_softmax", [x, 0], torch.log_softmax(x.double(), 0).float())


def test_softmax_0d():
    x = torch.tensor(3.0)
    check_op("softmax", [x, 0], torch.softmax(x, 0))
    check_op("log_softmax", [x, -1], torch.log_softmax(x, -1))


#===--- layer_norm / native_layer_norm ---------------------------------------===#

def test_layer_norm():
    x = rnd(2, 3, 8)
    w, b = rnd(8), rnd(8)
    check_op("layer_norm", [x, (8,), w, b, 1e-5], F.layer_norm(x, (8,), w, b, 1e-5), atol=1e-5)
    check_op("layer_norm", [x, (8,), w, None, 1e-3], F.layer_norm(x, (8,), w, None, 1e-3),
             atol=1e-5)
    check_op("layer_norm", [x, (8,), None, b], F.layer_norm(x, (8,), None, b), atol=1e-5)
    check_op("layer_norm", [x, (3, 8), None, None, 1e-5], F.layer_norm(x, (3, 8)), atol=1e-5)
    check_op("layer_norm", [x, (2, 3, 8), None, None, 1e-5], F.layer_norm(x, (2, 3, 8)),
             atol=1e-5)
    w2, b2 = rnd(3, 8), rnd(3, 8)
    check_op("layer_norm", [x, (3, 8), w2, b2, 1e-5], F.layer_norm(x, (3, 8), w2, b2), atol=1e-5)
    y = rnd(4, 3, 8)
    check_op("layer_norm", [y, (3, 8), None, None, 1e-5], F.layer_norm(y, (3, 8)), atol=1e-5)
    out, mean, rstd = torch.ops.aten.native_layer_norm(x, [8], w, b, 1e-5)
    check_op("native_layer_norm", [x, (8,), w, b, 1e-5], [out, mean, rstd], atol=1e-5)


def test_layer_norm_strided():
    z = rnd(2, 8, 3)  # passed as a non-contiguous view
    check_op("layer_norm", [Transposed(z), (3,), None, None, 1e-5], F.layer_norm(z, (3,)),
             atol=1e-5)
    w = rnd(3)
    check_op("layer_norm", [Transposed(z), (8, 3), None, None, 1e-5], F.layer_norm(z, (8, 3)),
             atol=1e-5)
    check_op("layer_norm", [Transposed(z), (3,), w, w, 1e-5], F.layer_norm(z, (3,), w, w),
             atol=1e-5)
    s = rnd(5, 4, 6)
    check_op("layer_norm", [Sliced(s), (4, 6), None, None, 1e-5], F.layer_norm(s, (4, 6)),
             atol=1e-5)
    check_op("layer_norm", [Sliced(s), (6,), None, None, 1e-5], F.layer_norm(s, (6,)), atol=1e-5)


@CUDA_ONLY
def test_layer_norm_long_rows():
    for shape, norm in [((2, 1000), (1000,)), ((3, 40), (40,)), ((4, 300), (300,)),
                        ((2, 3, 100), (3, 100)), ((70, 2), (2,))]:
        x = rnd(*shape) * 2 + 1
        w, b = rnd(*norm), rnd(*norm)
        check_op("layer_norm", [x, norm, w, b, 1e-5], F.layer_norm(x, norm, w, b, 1e-5),
                 rtol=1e-5, atol=1e-5)
        want = torch.ops.aten.native_layer_norm(x, list(norm), w, b, 1e-5)
        check_op("native_layer_norm", [x, norm, w, b, 1e-5], want, rtol=1e-5, atol=1e-5)


@CUDA_ONLY
@pytest.mark.parametrize("dtype", FLOATS)
def test_native_layer_norm(dtype):
    x = rnd(2, 3, 8, dtype=dtype)
    w, b = rnd(8, dtype=dtype), rnd(8, dtype=dtype)
    want = [t.to(dtype) for t in
            torch.ops.aten.native_layer_norm(x.double(), [8], w.double(), b.double(), 1e-5)]
    tol = dict(TOL[dtype])
    tol["atol"] = max(tol["atol"], 1e-5)
    check_op("native_layer_norm", [x, (8,), w, b, 1e-5], want, **tol)
    want = [t.to(dtype) for t in
            torch.ops.aten.native_layer_norm(x.double(), [3, 8], None, None, 1e-5)]
    check_op("native_layer_norm", [Transposed(x), (3, 8), None, None, 1e-5], want, **tol)
    check_op("layer_norm", [x, (8,), w, b, 1e-5],
             via_f64(lambda t, ww, bb: F.layer_norm(t, (8,), ww, bb), x, w, b), **tol)


def test_layer_norm_needs_contiguous_weight():
    x, w = rnd(2, 3, 4), rnd(3, 4)
    text, inputs = op_graph("layer_norm", [x, (3, 4), Transposed(w), None, 1e-5], [x])
    with pytest.raises(RunError, match="weight and bias must be contiguous"):
        run_graph(text, inputs)


#===--- cat ------------------------------------------------------------------===#

def test_cat():
    a, b, c = rnd(2, 3), rnd(4, 3), rnd(1, 3)
    check_op("cat", [a, b, c, 0], torch.cat([a, b, c], 0))
    d, e = rnd(2, 3), rnd(2, 5)
    check_op("cat", [Transposed(d), e, 1], torch.cat([d, e], 1))
    check_op("cat", [Sliced(d), d, -2], torch.cat([d, d], -2))
    check_op("cat", [d, Sliced(d), Transposed(d), 0], torch.cat([d, d, d], 0))
    p, q = rnd(2, 3, 4), rnd(2, 5, 4)
    check_op("cat", [p, Transposed(q), q, 1], torch.cat([p, q, q], 1))
    check_op("cat", [p, p, -1], torch.cat([p, p], -1))
    check_op("cat", [Sliced(p), p, 2], torch.cat([p, p], 2))
    check_op("cat", [a], torch.cat([a]))  # dim defaults to 0
    check_op("cat", [a, b, c], torch.cat([a, b, c]))


@CUDA_ONLY
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32, torch.int8, torch.bool])
def test_cat_dtypes(dtype):
    a, b = rnd(3, 2).to(dtype), rnd(3, 7).to(dtype)
    check_op("cat", [a, Transposed(b), 1], torch.cat([a, b], 1))


def test_cat_promotes_and_skips_legacy_empty():
    i, f = torch.randint(-9, 9, (2, 3), dtype=torch.int32), rnd(2, 3)
    check_op("cat", [i, f, 0], torch.cat([i, f], 0))
    e = torch.zeros(0)
    check_op("cat", [f, e, f, 0], torch.cat([f, e, f], 0))
    check_op("cat", [f, torch.zeros(0, 3), 0], torch.cat([f, torch.zeros(0, 3)], 0))


#===--- embedding ------------------------------------------------------------===#

def test_embedding():
    w = rnd(10, 4)
    idx = torch.randint(0, 10, (3, 5))
    check_op("embedding", [w, idx, -1, False, False], F.embedding(idx, w))
    check_op("embedding", [w, idx], F.embedding(idx, w))
    check_op("embedding", [w, Transposed(idx)], F.embedding(idx, w))
    w2 = rnd(10, 4)
    check_op("embedding", [Transposed(w2), Sliced(idx)], F.embedding(idx, w2))
    i32 = idx.to(torch.int32)
    check_op("embedding", [w, i32], F.embedding(idx, w))
    scalar = torch.tensor(7)
    check_op("embedding", [w, scalar], F.embedding(scalar, w))
    one = torch.tensor([0, 9, 9, 0])
    check_op("embedding", [w, one], F.embedding(one, w))


@CUDA_ONLY
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int8])
def test_embedding_dtypes(dtype):
    w = rnd(50, 9).mul(10).to(dtype)
    idx = torch.randint(0, 50, (6, 7))
    check_op("embedding", [w, idx], w[idx])
    check_op("embedding", [Transposed(w), idx], w[idx])


@CUDA_ONLY
def test_embedding_large():
    w = rnd(1000, 64)
    idx = torch.randint(0, 1000, (40, 70))
    check_op("embedding", [w, idx], F.embedding(idx, w))


def test_embedding_index_out_of_range():
    w = rnd(10, 4)
    for bad, name in [([1, 10], 10), ([3, -1, 2], -1), ([0, 12, 10, -5], 12),
                      ([[0, 1], [2, 11]], 11)]:
        t = torch.tensor(bad)
        shape = tuple(t.shape) + (4,)
        text, inputs = op_graph("embedding", [w, t], [torch.zeros(shape)])
        with pytest.raises(RunError, match=f"index {name} is out of range for 10 embeddings"):
            run_graph(text, inputs)
    # The first bad index in row-major order, also through a strided view.
    t = torch.tensor([[0, 30], [20, 1]])
    text, inputs = op_graph("embedding", [w, Transposed(t)], [torch.zeros(2, 2, 4)])
    with pytest.raises(RunError, match="index 30 is out of range for 10 embeddings"):
        run_graph(text, inputs)


#===--- dropout --------------------------------------------------------------===#

def run_dropout(op, x, p, seed, train=True):
    text, inputs = op_graph(op, [x, p, train], [x.tensor if hasattr(x, "tensor") else x])
    (out,), _ = run_graph(text, inputs, seed=seed)
    return out


def test_dropout_eval_and_p0_are_identity():
    x = rnd(16, 16)
    check_op("dropout", [x, 0.5, False], x)  # eval: identity (a view)
    check_op("dropout", [x, 0.0, True], x)
    check_op("dropout", [Transposed(x), 0.3, False], x)
    check_op("dropout_", [x, 0.5, False], x)


@pytest.mark.parametrize("op", ["dropout", "dropout_"])
@pytest.mark.parametrize("p", [0.1, 0.25, 0.5, 0.9])
def test_dropout_statistics(op, p):
    x = rnd(256, 256).abs() + 1  # no zeros: a zero in the output is a drop
    out = run_dropout(op, x, p, seed=3)
    kept = out != 0
    frac = 1 - kept.float().mean().item()
    n = x.numel()
    sigma = (p * (1 - p) / n) ** 0.5
    assert abs(frac - p) < 6 * sigma, (frac, p)
    torch.testing.assert_close(out[kept], x[kept] / (1 - p))
    # Unbiased: the mean is kept (loosely; 6 sigma of the Bernoulli mean).
    assert abs(out.double().mean().item() - x.double().mean().item()) < 0.05 * (1 + p / (1 - p))
    # Rows and columns both see drops (no per-thread or per-block pattern).
    assert (kept.float().mean(0) < 1).all() and (kept.float().mean(1) < 1).all()


@pytest.mark.parametrize("op", ["dropout", "dropout_"])
def test_dropout_is_seeded(op):
    x = rnd(64, 64).abs() + 1
    out = run_dropout(op, x, 0.25, seed=3)
    again = run_dropout(op, x, 0.25, seed=3)
    assert torch.equal(out, again)  # the run's seed fixes the mask
    other = run_dropout(op, x, 0.25, seed=4)
    assert not torch.equal(out, other)


def test_dropout_strided_and_dtypes():
    x = rnd(40, 30).abs() + 1
    out = run_dropout("dropout", Transposed(x), 0.5, seed=7)
    kept = out != 0
    assert 0.4 < 1 - kept.float().mean().item() < 0.6
    torch.testing.assert_close(out[kept], x[kept] * 2)
    # The mask follows the logical element order, not the memory layout.
    assert torch.equal(out, run_dropout("dropout", x, 0.5, seed=7))
    s = run_dropout("dropout", Sliced(x), 0.5, seed=7)
    assert torch.equal(s, out)
    for dtype in [torch.float64, torch.float16, torch.bfloat16]:
        xd = x.to(dtype)
        o = run_dropout("dropout", xd, 0.2, seed=1)
        k = o != 0
        assert o.dtype == dtype
        assert 0.1 < 1 - k.float().mean().item() < 0.3
        torch.testing.assert_close(o[k], (xd.double()[k] / 0.8).to(dtype), **TOL[dtype])


def test_dropout_p1_zeroes_everything():
    x = rnd(30, 30)
    x[0, 0] = float("inf")
    out = run_dropout("dropout", x, 1.0, seed=5)
    assert torch.equal(out, torch.zeros_like(x))


def test_dropout_draws_a_fresh_mask_per_call():
    x = rnd(32, 32).abs() + 1
    t = "tensor<32x32xf32>"
    text = (f'trace.graph @g(%x: {t} {{trace.input = "x"}}) -> ({t}, {t}) {{\n'
            f'  %a = pyop "dropout"(%x, 0.5, True) : ({t}) -> {t}\n'
            f'  %b = pyop "dropout"(%x, 0.5, True) : ({t}) -> {t}\n'
            f'  ret %a, %b : {t}, {t}\n}}\n')
    (a, b), _ = run_graph(text, {"x": x}, seed=11)
    assert not torch.equal(a != 0, b != 0)
    (a2, b2), _ = run_graph(text, {"x": x}, seed=11)
    assert torch.equal(a, a2) and torch.equal(b, b2)


def test_hardtanh():
    # The OpInfo samples (test_opinfo.py) cover the rest; here: NaN passes
    # through, integer bounds, a strided input, bounds out of order.
    x = torch.tensor([float("nan"), -3.0, -0.25, 0.5, 4.0])
    want = torch.nn.functional.hardtanh(x, -1.0, 2.0)
    outputs, _ = run_graph(*op_graph("hardtanh", [x, -1.0, 2.0], [want]))
    torch.testing.assert_close(outputs[0], want, equal_nan=True)
    i = torch.tensor([-5, -1, 0, 3, 9])
    check_op("hardtanh", [i, -2, 4], torch.nn.functional.hardtanh(i, -2, 4))
    y = rnd(4, 3)
    check_op("hardtanh", [Transposed(y)], torch.nn.functional.hardtanh(y))
    text, inputs = op_graph("hardtanh", [x, 2.0, 1.0], [x])
    with pytest.raises(RunError, match="min_val cannot be greater than max_val"):
        run_graph(text, inputs)


def test_full_full_like_scalar_tensor():
    # Made from scalars alone (no tensor operand); the fill value converts to
    # the result's dtype as torch.full's does, an int64 exactly.
    check_op("full", [[2, 3], -1.5], torch.full((2, 3), -1.5))
    big = 2 ** 53 + 1  # not a double
    check_op("full", [[4], big], torch.full((4,), big))
    check_op("full", [[3], True], torch.full((3,), True))
    check_op("full", [[2, 2], 7, "torch.float16"], torch.full((2, 2), 7, dtype=torch.float16))
    check_op("full", [[0, 3], 1.0], torch.full((0, 3), 1.0))
    x = rnd(3, 4)
    low = torch.finfo(torch.float32).min  # what attention masks fill with
    check_op("full_like", [x, low], torch.full_like(x, low))
    check_op("full_like", [x, 2, "torch.int32"], torch.full_like(x, 2, dtype=torch.int32))
    check_op("scalar_tensor", [3], torch.scalar_tensor(3))
    check_op("scalar_tensor", [1, "torch.int64"], torch.scalar_tensor(1, dtype=torch.int64))
    text, _ = op_graph("full", [[2, -1], 1.0], [torch.zeros(2, 1)])
    with pytest.raises(RunError, match=r"size \[2, -1\] has a negative dim"):
        run_graph(text, {})


@pytest.mark.parametrize("src,dst", [
    (torch.float32, torch.int64), (torch.float32, torch.bool), (torch.float32, torch.float16),
    (torch.float64, torch.bfloat16), (torch.int64, torch.float32), (torch.int64, torch.int8),
    (torch.bool, torch.float32), (torch.int32, torch.int64),
], ids=str)
def test_to_copy(src, dst):
    # As .to(dtype): floats truncate toward zero into integers, any nonzero
    # (NaN too) is True, integers wrap into narrower ones.
    x = torch.tensor([-2.75, -0.5, 0.0, 0.25, 3.5, 130.0, -129.0, float("nan")])
    if not src.is_floating_point:
        x = x.nan_to_num(0).to(torch.int64)
    x = x.to(src)
    if dst in (torch.int64, torch.int8) and src.is_floating_point:
        x = x[:-1]  # NaN to an integer is undefined in C++ and in PyTorch
    want = x.to(dst)
    outputs, _ = run_graph(*op_graph("_to_copy", [x, str(dst)], [want]))
    assert outputs[0].dtype == dst
    torch.testing.assert_close(outputs[0], want, rtol=0, atol=0, equal_nan=True)
    # dtype=None keeps the dtype; a strided input copies to a contiguous one.
    y = torch.arange(6).reshape(2, 3).to(src)
    check_op("_to_copy", [Transposed(y)], y)


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("op", ["ceil", "floor", "round", "trunc", "sign"])
def test_rounding_and_sign_special_values(op):
    # The OpInfo samples cover ordinary values; here: NaN, signed zeros,
    # infinities, halves (round is half to even), int64 beyond 2^53 (which
    # a round trip through double would change), bools for sign.
    x = torch.tensor([NAN, -0.0, 0.0, INF, -INF, 0.5, 1.5, 2.5, -0.5, -2.5, 2.7, -2.7])
    want = getattr(torch, op)(x)
    got = check_op_nan(op, [x], want)
    assert torch.equal(got.signbit(), want.signbit())  # -0.0 stays -0.0; sign(-0.0) is +0.0
    i = torch.tensor([-2**62 - 1, -3, 0, 7, 2**62 + 1])
    check_op(op, [i], getattr(torch, op)(i))
    y = rnd(3, 4) * 4
    check_op(op, [Transposed(y)], getattr(torch, op)(y))
    b = torch.tensor([True, False])
    if op == "sign":
        check_op(op, [b], torch.sign(b))
    else:
        with pytest.raises(RunError, match=f'"{op}": takes no bool tensor'):
            run_graph(*op_graph(op, [b], [b]))


def test_predicates_and_bitwise_not():
    # isnan, isinf and logical_not of floats (NaN's not is False), integers
    # and bools; bitwise_not of integers (int32 stays int32) and bools (~ is
    # not), refused for floats as in PyTorch.
    x = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.5, -1e38])
    i = torch.tensor([-2**63, -3, 0, 5, 2**63 - 1])
    b = torch.tensor([True, False, True])
    for op in ("isnan", "isinf", "logical_not"):
        for t in (x, i, b, i.to(torch.int32)):
            check_op(op, [t], getattr(torch, op)(t))
    for t in (i, b, i.to(torch.int32), torch.tensor([0, 255], dtype=torch.uint8)):
        check_op("bitwise_not", [t], torch.bitwise_not(t))
    with pytest.raises(RunError, match='"bitwise_not": takes integer or bool tensors, got f32'):
        run_graph(*op_graph("bitwise_not", [x], [x]))


@pytest.mark.parametrize("op,args", [
    ("leaky_relu", []), ("leaky_relu", [0.3]), ("leaky_relu", [-2]),
    ("elu", []), ("elu", [0.5, 2.0, 1.5]), ("elu", [1.0, 1.0, 3])])
def test_leaky_relu_and_elu(op, args):
    # NaN passes through, signed zeros, given and default parameters
    # (elu's alpha, scale and input_scale; leaky_relu's slope, an int one
    # too); a strided input; integers are refused as in PyTorch.
    x = torch.tensor([NAN, -30.0, -3.0, -0.5, -0.0, 0.0, 0.5, 4.0])
    fn = getattr(torch.ops.aten, op)
    check_op_nan(op, [x, *args], fn(x, *args))
    y = rnd(4, 3) * 3
    check_op(op, [Transposed(y), *args], fn(y, *args))
    i = torch.tensor([-2, 3])
    with pytest.raises(RunError, match=f'"{op}": takes floating-point tensors, got i64'):
        run_graph(*op_graph(op, [i, *args], [i]))
