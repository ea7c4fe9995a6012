"""The CUDA reductions and NN kernels against PyTorch: sum, mean, amax,
softmax, log_softmax, layer_norm, native_layer_norm, cat, embedding and
dropout (CUDA/Reductions.cpp/.cu, CUDA/NN.cpp/.cu). Shapes cover both
device paths (a thread per short group, a block per long one, rows longer
than a block), every dim, keepdim, 0-d inputs, non-contiguous inputs
(Transposed, Sliced) and the float and integer dtypes. Dropout cannot match
the CPU's mask, so its tests check the drop rate, the 1/(1-p) scaling and
that a run's seed fixes the mask. Skipped, with one line saying why, where
trace-run finds no CUDA device; scripts/gpu-check.sh runs it on a GPU.

Tolerances: f32 rtol 1e-5 (the device sums in double, in another order);
f16/bf16 one rounding step of the result dtype (the reference is computed
in f64 and rounded once, as the kernels do).
"""
import pytest
import torch
import torch.nn.functional as F

from traceir_testing import (RunError, Sliced, Transposed, check_op, cuda_status, op_graph,
                             run_graph)

AVAILABLE, REASON = cuda_status()
if not AVAILABLE:
    pytest.skip(f"CUDA tier skipped: {REASON}", allow_module_level=True)

torch.manual_seed(0)

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def cuda_op(op, args, expected, **kwargs):
    return check_op(op, args, expected, device="cuda", **kwargs)


def cuda_op_nan(op, args, want, **tol):
    """cuda_op for results holding NaN (check_op treats NaN as a mismatch)."""
    text, inputs = op_graph(op, args, [want])
    (got,), _ = run_graph(text, inputs, device="cuda")
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, equal_nan=True, **tol)
    return got


def via_f64(fn, x, *rest):
    """fn computed in f64 on x (and tensors in rest), rounded to x's dtype."""
    up = [r.double() if isinstance(r, torch.Tensor) else r for r in rest]
    return fn(x.double(), *up).to(x.dtype)


# --- sum / mean / amax -------------------------------------------------------

# (dims, keepdim); None: the argument left out.
REDUCE_DIMS = [(None, False), ((), True), (0, False), (-1, True), ((0, 2), False),
               ((1,), True), ((-3, -1, 1), False)]


@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_reduce_float(op, dtype):
    x = rnd(3, 4, 5, dtype=dtype)
    for dims, keepdim in REDUCE_DIMS:
        if dims is None:
            want = via_f64(lambda t: getattr(t, op)(), x)
            cuda_op(op, [x], want, **TOL[dtype])
            continue
        if op == "amax":
            want = x.amax(dims, keepdim=keepdim)
        else:
            all_dims = dims if dims != () else tuple(range(x.dim()))
            want = via_f64(lambda t: getattr(t, op)(all_dims, keepdim=keepdim), x)
        cuda_op(op, [x, dims, keepdim], want, **TOL[dtype])


@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reduce_long_groups(op):
    # Groups longer than 32 take the block path; longer than 256 loop in it.
    for shape, dims in [((2, 300), 1), ((700,), 0), ((5, 33, 2), (1, 2)), ((4, 1000), (0, 1)),
                        ((257, 3), 0), ((64, 64), None)]:
        x = rnd(*shape)
        args = [x] if dims is None else [x, dims]
        fn = getattr(torch, op)
        want = fn(x) if dims is None else fn(x, dims)
        cuda_op(op, args, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op", ["sum", "mean", "amax"])
def test_reduce_strided(op):
    x = rnd(6, 7, 40)
    fn = getattr(torch, op)
    cuda_op(op, [Transposed(x), 1], fn(x, 1), rtol=1e-5, atol=1e-5)
    cuda_op(op, [Transposed(x), (0, 2), True], fn(x, (0, 2), keepdim=True), rtol=1e-5, atol=1e-4)
    cuda_op(op, [Sliced(x), 0], fn(x, 0), rtol=1e-5, atol=1e-5)
    cuda_op(op, [Sliced(x), (0, 1)], fn(x, (0, 1)), rtol=1e-5, atol=1e-4)
    cuda_op(op, [Sliced(x), -1, True], fn(x, -1, keepdim=True), rtol=1e-5, atol=1e-5)


def test_reduce_0d():
    x = torch.tensor(2.5)
    cuda_op("sum", [x], x.sum())
    cuda_op("mean", [x], x.mean())
    cuda_op("amax", [x], x.amax())


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
        cuda_op("sum", [x, dims], x.sum(dims))  # sums to i64, exactly
        cuda_op("amax", [Sliced(x), dims, True], x.amax(dims, keepdim=True))
    cuda_op("sum", [Transposed(x), 0, True], x.sum(0, keepdim=True))
    cuda_op("amax", [Transposed(x), 0], x.amax(0))
    cuda_op("sum", [x], x.sum())


def test_sum_int64_is_exact():
    # Beyond double's 53 bits: only an int64 accumulator gets these right.
    big = 2 ** 60
    x = torch.tensor([[big + 1, 3, -big], [big, big, -(2 ** 62)]] * 3, dtype=torch.int64)
    cuda_op("sum", [x, 1], x.sum(1))
    cuda_op("sum", [x], x.sum())
    cuda_op("amax", [x, 0], x.amax(0))
    y = torch.full((2, 100), big + 7, dtype=torch.int64)  # block path
    y[:, ::2] = -big
    cuda_op("sum", [y, 1], y.sum(1))
    cuda_op("amax", [y - big, 1], (y - big).amax(1))
    # Wrapping on overflow, as int64 arithmetic does.
    z = torch.full((40,), 2 ** 62, dtype=torch.int64)
    cuda_op("sum", [z, 0], z.sum(0))


def test_amax_propagates_nan():
    x = rnd(4, 10)
    x[1, 3] = float("nan")
    assert cuda_op_nan("amax", [x, 1], x.amax(1))[1].isnan()
    assert cuda_op_nan("amax", [x, 0], x.amax(0))[3].isnan()
    y = rnd(3, 500)  # block path
    y[2, 417] = float("nan")
    assert cuda_op_nan("amax", [y, 1], y.amax(1))[2].isnan()
    assert cuda_op_nan("amax", [y], y.amax()).isnan()
    z = torch.full((2, 40), float("-inf"))
    cuda_op("amax", [z, 1], z.amax(1))


def test_reduce_empty():
    x = torch.zeros(3, 0)
    cuda_op("sum", [x, 1], x.sum(1))
    assert cuda_op_nan("mean", [x, 1], x.mean(1)).isnan().all()  # 0 / 0
    cuda_op("sum", [x, 0], x.sum(0))
    text, inputs = op_graph("amax", [x, 1], [torch.zeros(3)])
    with pytest.raises(RunError, match="amax of an empty tensor has no identity"):
        run_graph(text, inputs, device="cuda")


# --- softmax / log_softmax ---------------------------------------------------

@pytest.mark.parametrize("op,fn", [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax(op, fn, dtype):
    x = (rnd(3, 4, 5) * 4).to(dtype)
    for dim in (0, 1, -1):
        cuda_op(op, [x, dim], via_f64(lambda t: fn(t, dim), x), **TOL[dtype])
    cuda_op(op, [Transposed(x), -1], via_f64(lambda t: fn(t, -1), x), **TOL[dtype])
    cuda_op(op, [Sliced(x), 0], via_f64(lambda t: fn(t, 0), x), **TOL[dtype])


@pytest.mark.parametrize("op,fn", [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)])
def test_softmax_long_rows(op, fn):
    for shape, dim in [((2, 1000), -1), ((3, 300, 2), 1), ((257,), 0), ((33, 40), 0),
                       ((1, 5000), 1)]:
        x = rnd(*shape) * 3
        cuda_op(op, [x, dim], fn(x, dim), rtol=1e-5, atol=1e-5)
    x = rnd(4, 600)
    cuda_op(op, [Transposed(x), 0], fn(x, 0), rtol=1e-5, atol=1e-5)
    cuda_op(op, [Transposed(x), 1], fn(x, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,fn", [("softmax", torch.softmax), ("log_softmax", torch.log_softmax)])
def test_softmax_extremes(op, fn):
    # Large magnitudes need the max subtracted; -inf entries give 0 (or
    # -inf); a row of -inf only is NaN, as in PyTorch.
    x = rnd(4, 50, dtype=torch.float64) * 500
    x[0, 3] = float("-inf")
    x[2, :] = float("-inf")
    out = cuda_op_nan(op, [x, 1], fn(x, 1), rtol=1e-10, atol=1e-12)
    assert out[2].isnan().all()
    y = rnd(3, 8) * 1000
    cuda_op(op, [y, -1], fn(y, -1), rtol=1e-5, atol=1e-5)


def test_softmax_of_integers_is_f32():
    x = torch.randint(-5, 5, (3, 7))
    cuda_op("softmax", [x, 1], torch.softmax(x.double(), 1).float())
    cuda_op("log_softmax", [x, 0], torch.log_softmax(x.double(), 0).float())


def test_softmax_0d():
    x = torch.tensor(3.0)
    cuda_op("softmax", [x, 0], torch.softmax(x, 0))
    cuda_op("log_softmax", [x, -1], torch.log_softmax(x, -1))


# --- layer_norm / native_layer_norm -----------------------------------------

def test_layer_norm():
    x = rnd(2, 3, 8)
    w, b = rnd(8), rnd(8)
    cuda_op("layer_norm", [x, (8,), w, b, 1e-5], F.layer_norm(x, (8,), w, b, 1e-5), atol=1e-5)
    cuda_op("layer_norm", [x, (8,), w, None, 1e-3], F.layer_norm(x, (8,), w, None, 1e-3), atol=1e-5)
    cuda_op("layer_norm", [x, (8,), None, b], F.layer_norm(x, (8,), None, b), atol=1e-5)
    cuda_op("layer_norm", [x, (3, 8), None, None, 1e-5], F.layer_norm(x, (3, 8)), atol=1e-5)
    cuda_op("layer_norm", [x, (2, 3, 8), None, None, 1e-5], F.layer_norm(x, (2, 3, 8)),
            atol=1e-5)
    w2, b2 = rnd(3, 8), rnd(3, 8)
    cuda_op("layer_norm", [x, (3, 8), w2, b2, 1e-5], F.layer_norm(x, (3, 8), w2, b2), atol=1e-5)


def test_layer_norm_strided():
    z = rnd(2, 8, 3)
    cuda_op("layer_norm", [Transposed(z), (3,), None, None, 1e-5], F.layer_norm(z, (3,)),
            atol=1e-5)
    w = rnd(3)
    cuda_op("layer_norm", [Transposed(z), (8, 3), None, None, 1e-5], F.layer_norm(z, (8, 3)),
            atol=1e-5)
    cuda_op("layer_norm", [Transposed(z), (3,), w, w, 1e-5], F.layer_norm(z, (3,), w, w),
            atol=1e-5)
    s = rnd(5, 4, 6)
    cuda_op("layer_norm", [Sliced(s), (4, 6), None, None, 1e-5], F.layer_norm(s, (4, 6)),
            atol=1e-5)
    cuda_op("layer_norm", [Sliced(s), (6,), None, None, 1e-5], F.layer_norm(s, (6,)), atol=1e-5)


def test_layer_norm_long_rows():
    for shape, norm in [((2, 1000), (1000,)), ((3, 40), (40,)), ((4, 300), (300,)),
                        ((2, 3, 100), (3, 100)), ((70, 2), (2,))]:
        x = rnd(*shape) * 2 + 1
        w, b = rnd(*norm), rnd(*norm)
        cuda_op("layer_norm", [x, norm, w, b, 1e-5], F.layer_norm(x, norm, w, b, 1e-5),
                rtol=1e-5, atol=1e-5)
        want = torch.ops.aten.native_layer_norm(x, list(norm), w, b, 1e-5)
        cuda_op("native_layer_norm", [x, norm, w, b, 1e-5], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_native_layer_norm(dtype):
    x = rnd(2, 3, 8, dtype=dtype)
    w, b = rnd(8, dtype=dtype), rnd(8, dtype=dtype)
    want = [t.to(dtype) for t in
            torch.ops.aten.native_layer_norm(x.double(), [8], w.double(), b.double(), 1e-5)]
    tol = dict(TOL[dtype])
    tol["atol"] = max(tol["atol"], 1e-5)
    cuda_op("native_layer_norm", [x, (8,), w, b, 1e-5], want, **tol)
    want = [t.to(dtype) for t in
            torch.ops.aten.native_layer_norm(x.double(), [3, 8], None, None, 1e-5)]
    cuda_op("native_layer_norm", [Transposed(x), (3, 8), None, None, 1e-5], want, **tol)
    cuda_op("layer_norm", [x, (8,), w, b, 1e-5],
            via_f64(lambda t, ww, bb: F.layer_norm(t, (8,), ww, bb), x, w, b), **tol)


def test_layer_norm_needs_contiguous_weight():
    x, w = rnd(2, 3, 4), rnd(3, 4)
    text, inputs = op_graph("layer_norm", [x, (3, 4), Transposed(w), None, 1e-5], [x])
    with pytest.raises(RunError, match="weight and bias must be contiguous"):
        run_graph(text, inputs, device="cuda")


# --- cat ---------------------------------------------------------------------

def test_cat():
    a, b, c = rnd(2, 3), rnd(4, 3), rnd(1, 3)
    cuda_op("cat", [a, b, c, 0], torch.cat([a, b, c], 0))
    d, e = rnd(2, 3), rnd(2, 5)
    cuda_op("cat", [Transposed(d), e, 1], torch.cat([d, e], 1))
    cuda_op("cat", [Sliced(d), d, -2], torch.cat([d, d], -2))
    cuda_op("cat", [d, Sliced(d), Transposed(d), 0], torch.cat([d, d, d], 0))
    p, q = rnd(2, 3, 4), rnd(2, 5, 4)
    cuda_op("cat", [p, Transposed(q), q, 1], torch.cat([p, q, q], 1))
    cuda_op("cat", [p, p, -1], torch.cat([p, p], -1))
    cuda_op("cat", [Sliced(p), p, 2], torch.cat([p, p], 2))
    cuda_op("cat", [a], torch.cat([a]))  # dim defaults to 0
    cuda_op("cat", [a, b, c], torch.cat([a, b, c]))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32, torch.int8, torch.bool])
def test_cat_dtypes(dtype):
    a, b = rnd(3, 2).to(dtype), rnd(3, 7).to(dtype)
    cuda_op("cat", [a, Transposed(b), 1], torch.cat([a, b], 1))


def test_cat_promotes_and_skips_legacy_empty():
    i, f = torch.randint(-9, 9, (2, 3), dtype=torch.int32), rnd(2, 3)
    cuda_op("cat", [i, f, 0], torch.cat([i, f], 0))
    e = torch.zeros(0)
    cuda_op("cat", [f, e, f, 0], torch.cat([f, e, f], 0))
    cuda_op("cat", [f, torch.zeros(0, 3), 0], torch.cat([f, torch.zeros(0, 3)], 0))


# --- embedding ---------------------------------------------------------------

def test_embedding():
    w = rnd(10, 4)
    idx = torch.randint(0, 10, (3, 5))
    cuda_op("embedding", [w, idx, -1, False, False], F.embedding(idx, w))
    cuda_op("embedding", [w, idx], F.embedding(idx, w))
    cuda_op("embedding", [w, Transposed(idx)], F.embedding(idx, w))
    w2 = rnd(10, 4)
    cuda_op("embedding", [Transposed(w2), Sliced(idx)], F.embedding(idx, w2))
    i32 = idx.to(torch.int32)
    cuda_op("embedding", [w, i32], F.embedding(idx, w))
    scalar = torch.tensor(7)
    cuda_op("embedding", [w, scalar], F.embedding(scalar, w))
    one = torch.tensor([0, 9, 9, 0])
    cuda_op("embedding", [w, one], F.embedding(one, w))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int8])
def test_embedding_dtypes(dtype):
    w = rnd(50, 9).mul(10).to(dtype)
    idx = torch.randint(0, 50, (6, 7))
    cuda_op("embedding", [w, idx], w[idx])
    cuda_op("embedding", [Transposed(w), idx], w[idx])


def test_embedding_large():
    w = rnd(1000, 64)
    idx = torch.randint(0, 1000, (40, 70))
    cuda_op("embedding", [w, idx], F.embedding(idx, w))


def test_embedding_index_out_of_range():
    w = rnd(10, 4)
    for bad, name in [([1, 10], 10), ([3, -1, 2], -1), ([0, 12, 10, -5], 12),
                      ([[0, 1], [2, 11]], 11)]:
        t = torch.tensor(bad)
        shape = tuple(t.shape) + (4,)
        text, inputs = op_graph("embedding", [w, t], [torch.zeros(shape)])
        with pytest.raises(RunError, match=f"index {name} is out of range for 10 embeddings"):
            run_graph(text, inputs, device="cuda")
    # The first bad index in row-major order, also through a strided view.
    t = torch.tensor([[0, 30], [20, 1]])
    text, inputs = op_graph("embedding", [w, Transposed(t)], [torch.zeros(2, 2, 4)])
    with pytest.raises(RunError, match="index 30 is out of range for 10 embeddings"):
        run_graph(text, inputs, device="cuda")


# --- dropout -----------------------------------------------------------------

def run_dropout(op, x, p, seed, train=True):
    text, inputs = op_graph(op, [x, p, train], [x.tensor if hasattr(x, "tensor") else x])
    (out,), _ = run_graph(text, inputs, device="cuda", seed=seed)
    return out


def test_dropout_eval_and_p0_are_identity():
    x = rnd(16, 16)
    cuda_op("dropout", [x, 0.5, False], x)
    cuda_op("dropout", [x, 0.0, True], x)
    cuda_op("dropout", [Transposed(x), 0.3, False], x)
    cuda_op("dropout_", [x, 0.5, False], x)


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
    (a, b), _ = run_graph(text, {"x": x}, device="cuda", seed=11)
    assert not torch.equal(a != 0, b != 0)
    (a2, b2), _ = run_graph(text, {"x": x}, device="cuda", seed=11)
    assert torch.equal(a, a2) and torch.equal(b, b2)
