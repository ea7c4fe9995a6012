"""Core CPU kernels against PyTorch: elementwise ops with broadcasting,
dtype promotion and non-contiguous operands, views, BLAS products,
reductions, softmax, embedding, dropout, layer_norm and cat.

Tolerances: float32 results within rtol 1e-5 / atol 1e-6 of PyTorch (BLAS
products: rtol 1e-4 / atol 1e-5, since the summation order differs);
integer and bool results exactly.
"""
import pytest
import torch

from traceir_testing import RunError, Sliced, Transposed, check_op, op_graph, run_graph

torch.manual_seed(0)


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


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
    check_op("gelu", [x, approximate], torch.nn.functional.gelu(x, approximate=approximate))


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
    check_op("linear", [inp, w, bias], torch.nn.functional.linear(inp, w, bias), rtol=1e-4, atol=1e-5)
    check_op("linear", [Sliced(a), w, None], torch.nn.functional.linear(a, w), rtol=1e-4, atol=1e-5)
    c = rnd(5, 4)
    check_op("addmm", [c, a, b, 0.5, 2.0], torch.addmm(c, a, b, beta=0.5, alpha=2.0), rtol=1e-4, atol=1e-5)
    r = rnd(4)
    check_op("addmm", [r, a, b], torch.addmm(r, a, b), rtol=1e-4, atol=1e-5)
    d = rnd(5, 3, dtype=torch.float64)
    check_op("mm", [d, d.t().contiguous()], d @ d.t(), rtol=1e-10, atol=1e-12)


def test_reductions():
    x = rnd(3, 4, 5)
    check_op("sum", [x], x.sum())
    check_op("sum", [x, (0, 2), True], x.sum((0, 2), keepdim=True))
    check_op("mean", [Transposed(x), 1], x.mean(1))
    check_op("amax", [x, -1], x.amax(-1))
    i = torch.randint(0, 9, (3, 4), dtype=torch.int32)
    check_op("sum", [i, 1], i.sum(1))  # ints sum to i64


@pytest.mark.parametrize("op,fn", [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)])
def test_softmax(op, fn):
    x = rnd(3, 4, 5) * 4
    for dim in (0, 1, -1):
        check_op(op, [x, dim], fn(x, dim))
    check_op(op, [Transposed(x), 1], fn(x, 1))


def test_embedding():
    w = rnd(10, 4)
    idx = torch.randint(0, 10, (3, 5))
    check_op("embedding", [w, idx, -1, False, False], torch.nn.functional.embedding(idx, w))
    bad = torch.tensor([1, 10])
    text, inputs = op_graph("embedding", [w, bad], [torch.zeros(2, 4)])
    with pytest.raises(RunError, match="index 10 is out of range for 10 embeddings"):
        run_graph(text, inputs)


def test_dropout():
    x = rnd(64, 64).abs() + 1
    check_op("dropout", [x, 0.5, False], x)  # eval: identity (a view)
    text, inputs = op_graph("dropout", [x, 0.25, True], [x])
    (out,), _ = run_graph(text, inputs, seed=3)
    kept = out != 0
    frac = 1 - kept.float().mean().item()
    assert 0.2 < frac < 0.3, frac
    torch.testing.assert_close(out[kept], x[kept] / 0.75)
    (again,), _ = run_graph(text, inputs, seed=3)
    assert torch.equal(out, again)  # seeded
    (other,), _ = run_graph(text, inputs, seed=4)
    assert not torch.equal(out, other)


def test_layer_norm():
    x = rnd(2, 3, 8)
    w, b = rnd(8), rnd(8)
    check_op("layer_norm", [x, (8,), w, b, 1e-5], torch.nn.functional.layer_norm(x, (8,), w, b, 1e-5), atol=1e-5)
    z = rnd(2, 8, 3)  # passed as a non-contiguous view
    check_op("layer_norm", [Transposed(z), (3,), None, None, 1e-5],
             torch.nn.functional.layer_norm(z, (3,)), atol=1e-5)
    y = rnd(4, 3, 8)
    check_op("layer_norm", [y, (3, 8), None, None, 1e-5], torch.nn.functional.layer_norm(y, (3, 8)), atol=1e-5)
    out, mean, rstd = torch.ops.aten.native_layer_norm(x, [8], w, b, 1e-5)
    check_op("native_layer_norm", [x, (8,), w, b, 1e-5], [out, mean, rstd], atol=1e-5)


def test_cat():
    a, b, c = rnd(2, 3), rnd(4, 3), rnd(1, 3)
    check_op("cat", [a, b, c, 0], torch.cat([a, b, c], 0))
    d, e = rnd(2, 3), rnd(2, 5)
    check_op("cat", [Transposed(d), e, 1], torch.cat([d, e], 1))
    check_op("cat", [Sliced(d), d, -2], torch.cat([d, d], -2))


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
