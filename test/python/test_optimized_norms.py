"""The optimized CPU tier's fused row and channel kernels (CPU/Optimized/
Norm.cpp, Ops.def's FAST_CPU): softmax and log_softmax along any dim,
layer_norm and native_layer_norm, eval batch_norm, native_group_norm,
scaled_dot_product_attention (CPU/Attention.cpp's fast kernel), against
eager and against the portable tier; the profile names the tier that ran;
results equal at one and two threads; the layouts and modes the tier does
not cover run on the portable kernels."""
import pytest
import torch

import traceir

import test_optimized_kernels
from test_optimized_kernels import TOL, values
from traceir_testing import Fn

F = torch.nn.functional
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def run_tiers(module, args):
    """Results and each op's tier (by name) at the optimized and at the
    portable tier."""
    compiled, out = test_optimized_kernels.run_tiers(module, args)
    return compiled, {tier: (got, dict(ops)) for tier, (got, ops) in out.items()}


def check(fn, args, dtype, op, optimized=True, module=None):
    module = module or Fn(fn)
    with torch.no_grad():
        want = module(*args)
    _, out = run_tiers(module, args)
    (fast, fast_ops), (slow, slow_ops) = out["optimized"], out["portable"]
    flat = lambda t: list(t) if isinstance(t, (tuple, list)) else [t]  # noqa: E731
    for f, s, w in zip(flat(fast), flat(slow), flat(want)):
        assert f.dtype == w.dtype and f.shape == w.shape
        torch.testing.assert_close(f, w, **TOL[dtype])
        torch.testing.assert_close(f, s, **TOL[dtype])
    assert set(slow_ops.values()) == {"portable"}
    assert op in fast_ops, fast_ops
    assert fast_ops[op] == ("optimized" if optimized else "portable"), fast_ops


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [-1, 1, 0])
def test_softmax_dims(dim, log, dtype):
    # dim=-1: rows; dim=1 and 0: strided, vectorized across the inner dim
    # (inner 70 and 5 * 70, more than one inner block for dim=0).
    f = F.log_softmax if log else F.softmax
    op = "log_softmax" if log else "softmax"
    x = values((6, 5, 70), dtype)
    check(lambda t: f(t, dim=dim), (x,), dtype, op)


def test_softmax_shapes():
    x = values((3, 1000), torch.float32)
    check(lambda t: F.softmax(t, -1), (x,), torch.float32, "softmax")  # past the lanes
    check(lambda t: F.softmax(t, 0), (x,), torch.float32, "softmax")   # 4 inner blocks
    check(lambda t: F.softmax(t, 0), (values((7,), torch.float32),), torch.float32,
          "softmax")
    check(lambda t: F.log_softmax(t, 0), (values((), torch.float64),), torch.float64,
          "log_softmax")  # 0-d: one element
    # -inf entries, a whole -inf row (NaN, as eager), large values.
    y = values((4, 33), torch.float32) * 30
    y[0, 3] = float("-inf")
    y[1] = float("-inf")
    for f, op in ((F.softmax, "softmax"), (F.log_softmax, "log_softmax")):
        want = f(y, -1)
        _, out = run_tiers(Fn(lambda t: f(t, -1)), (y,))
        torch.testing.assert_close(out["optimized"][0], want, equal_nan=True, **TOL[torch.float32])
        assert out["optimized"][1][op] == "optimized"


def test_softmax_many_rows_special_values():
    # Enough rows to split over threads, a vector max per 16 elements: a
    # row with a NaN or +inf must come out all NaN, as eager's (a max that
    # skipped a NaN, as oneDNN's does, would not), and the rows without one
    # agree with eager and the portable tier; one and two threads bit for
    # bit.
    x = values((4096, 40), torch.float32) * 10
    x[1, 3] = float("nan")
    x[2, 0] = float("inf")
    x[3, 5:] = float("-inf")
    x[4] = float("-inf")
    x[5, 7], x[5, 8] = float("inf"), float("-inf")
    x[-1, -1] = float("nan")
    fn = lambda t: F.softmax(t, -1)  # noqa: E731
    want = fn(x)
    compiled, out = run_tiers(Fn(fn), (x,))
    (fast, ops), (slow, _) = out["optimized"], out["portable"]
    assert ops["softmax"] == "optimized"
    for row in (1, 2, 4, 5, 4095):
        assert fast[row].isnan().all(), row
    torch.testing.assert_close(fast, want, equal_nan=True, **TOL[torch.float32])
    torch.testing.assert_close(fast, slow, equal_nan=True, **TOL[torch.float32])
    before = traceir.num_threads()
    try:
        traceir.set_num_threads(1)
        one = compiled(x)
        traceir.set_num_threads(2)
        assert torch.equal(one.nan_to_num(7), compiled(x).nan_to_num(7))
    finally:
        traceir.set_num_threads(before)


def test_softmax_layouts_fall_back():
    x = values((40, 30), torch.float32)
    # A transposed input is not contiguous: the portable kernel runs it.
    check(lambda t: F.softmax(t.t(), -1), (x,), torch.float32, "softmax", optimized=False)
    check(lambda t: F.softmax(t[:, ::2], 1), (x,), torch.float32, "softmax", optimized=False)
    # Zero-size: nothing to compute.
    check(lambda t: F.softmax(t, -1), (values((0, 5), torch.float32),), torch.float32,
          "softmax", optimized=False)
    # A dtype argument converts: not covered.
    check(lambda t: F.softmax(t, -1, dtype=torch.float64), (x,), torch.float64, "softmax",
          optimized=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine, dtype):
    x = values((4, 7, 96), dtype)
    w, b = values((96,), dtype, 1), values((96,), dtype, 2)
    if affine:
        check(lambda t, w, b: F.layer_norm(t, (96,), w, b), (x, w, b), dtype, "layer_norm")
    else:
        check(lambda t: F.layer_norm(t, (96,)), (x,), dtype, "layer_norm")
    # Two normalized dims, a row longer than the summation block.
    y = values((3, 80, 70), dtype) + 3
    check(lambda t: F.layer_norm(t, (80, 70), eps=1e-3), (y,), dtype, "layer_norm")


def test_native_layer_norm_stats():
    x, w, b = values((5, 64), torch.float32), values((64,), torch.float32, 1), None
    fn = lambda t, w: torch.ops.aten.native_layer_norm(t, [64], w, b, 1e-5)  # noqa: E731
    check(fn, (x, w), torch.float32, "native_layer_norm")
    x64 = values((5, 64), torch.float64)
    check(fn, (x64, w.double()), torch.float64, "native_layer_norm")


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_strided_inputs(dtype):
    # A strided input is gathered into the result and normalized there:
    # ConvNeXt's norm over C of an NCHW tensor seen as NHWC, a transpose,
    # a slice of the last dim, and a weight broadcast over a 4-D input.
    x = values((2, 96, 5, 6), dtype)
    w, b = values((96,), dtype, 1), values((96,), dtype, 2)
    check(lambda t, w, b: F.layer_norm(t.permute(0, 2, 3, 1), (96,), w, b, 1e-6),
          (x, w, b), dtype, "layer_norm")
    y = values((6, 32), dtype)
    check(lambda t: F.layer_norm(t.t(), (6,)), (y,), dtype, "layer_norm")
    check(lambda t: F.layer_norm(t[:, ::2], (16,)), (y,), dtype, "layer_norm")
    check(lambda t: F.layer_norm(t.permute(0, 2, 3, 1), (6, 96)), (x,), dtype, "layer_norm")


def test_native_layer_norm_strided_stats():
    x, w = values((3, 64, 4), torch.float32), values((64,), torch.float32, 1)
    fn = lambda t, w: torch.ops.aten.native_layer_norm(t.transpose(1, 2), [64], w, None, 1e-5)  # noqa: E731,E501
    check(fn, (x, w), torch.float32, "native_layer_norm")


def test_layer_norm_fallbacks():
    check(lambda t: F.layer_norm(t, (32,)), (values((0, 32), torch.float32),), torch.float32,
          "layer_norm", optimized=False)
    check(lambda t: F.layer_norm(t.permute(1, 0, 2), (32,)), (values((3, 0, 32), torch.float32),),
          torch.float32, "layer_norm", optimized=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batch_norm_eval(dtype):
    bn = torch.nn.BatchNorm2d(16).to(dtype).eval()
    with torch.no_grad():
        bn.running_mean.copy_(values((16,), dtype, 1))
        bn.running_var.copy_(values((16,), dtype, 2).abs() + 0.5)
        bn.weight.copy_(values((16,), dtype, 3))
        bn.bias.copy_(values((16,), dtype, 4))
    x = values((3, 16, 9, 11), dtype)
    check(None, (x,), dtype, "batch_norm", module=bn)
    nb = torch.nn.BatchNorm2d(16, affine=False).to(dtype).eval()
    check(None, (x,), dtype, "batch_norm", module=nb)
    b1 = torch.nn.BatchNorm1d(16).to(dtype).eval()
    check(None, (values((5, 16), dtype),), dtype, "batch_norm", module=b1)


def test_batch_norm_fallbacks():
    bn = torch.nn.BatchNorm2d(8).eval()
    x = values((2, 8, 6, 6), torch.float32)
    # Channels-last strides are not contiguous: portable.
    check(lambda t: bn(t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)), (x,),
          torch.float32, "batch_norm", optimized=False)
    # Training mode stays portable (batch statistics, running stats updated).
    x = values((2, 8, 6, 6), torch.float32)
    fn = lambda t, rm, rv: F.batch_norm(t, rm, rv, training=True)  # noqa: E731
    rm, rv = torch.zeros(8), torch.ones(8)
    compiled, out = run_tiers(Fn(fn), (x, rm.clone(), rv.clone()))
    assert out["optimized"][1]["batch_norm"] == "portable"


def test_resnet_eval_batch_norm_is_optimized():
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet18(num_classes=10).eval()
    x = values((1, 3, 32, 32), torch.float32)
    module = traceir.from_torch(model, (x,))
    assert "\"batch_norm\"" in str(module)
    compiled = traceir.compile(module, "cpu")
    with traceir.profile() as prof:
        got = compiled(x)
    tiers = {e["args"]["tier"] for e in prof.trace()["traceEvents"]
             if e.get("cat") == "cpu_op" and e["name"] == "batch_norm"}
    assert tiers == {"optimized"}
    with torch.no_grad():
        torch.testing.assert_close(got, model(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_group_norm(dtype):
    x = values((2, 12, 5, 7), dtype)
    w, b = values((12,), dtype, 1), values((12,), dtype, 2)
    check(lambda t, w, b: F.group_norm(t, 4, w, b), (x, w, b), dtype, "native_group_norm")
    check(lambda t: F.group_norm(t, 3), (x,), dtype, "native_group_norm")


def test_threads_bit_equal():
    # Above the grains: rows and channels split over threads; each row is
    # one thread's in a fixed order, so one and two threads agree bit for bit.
    x = values((64, 48, 256), torch.float32)
    w, b = values((256,), torch.float32, 1), values((256,), torch.float32, 2)
    bn = torch.nn.BatchNorm2d(48).eval()
    fns = [(lambda t: F.softmax(t, -1), (x,)), (lambda t: F.log_softmax(t, 1), (x,)),
           (lambda t, w, b: F.layer_norm(t, (256,), w, b), (x, w, b)),
           (lambda t: bn(t.reshape(16, 48, 32, 32)), (x,)),
           (lambda t: F.group_norm(t, 8), (x,))]
    before = traceir.num_threads()
    try:
        for fn, args in fns:
            compiled = traceir.compile(traceir.from_torch(Fn(fn), args), "cpu")
            traceir.set_num_threads(1)
            one = compiled(*args)
            traceir.set_num_threads(2)
            two = compiled(*args)
            assert torch.equal(one, two)
            with torch.no_grad():
                torch.testing.assert_close(one, fn(*args), **TOL[torch.float32])
    finally:
        traceir.set_num_threads(before)


SDPA = "scaled_dot_product_attention"


def qkv(B, H, L, S, E, Ev, dtype):
    # Unit variance: with values()' std of 2 the scores reach +-15, where
    # float's rounding of them alone (eager's too) moves the result past
    # f32's tolerance.
    return (values((B, H, L, E), dtype, 5) / 2, values((B, H, S, E), dtype, 6) / 2,
            values((B, H, S, Ev), dtype, 7) / 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sdpa(dtype):
    sdpa = F.scaled_dot_product_attention
    q, k, v = qkv(2, 3, 17, 17, 16, 16, dtype)
    check(lambda q, k, v: sdpa(q, k, v), (q, k, v), dtype, SDPA)
    check(lambda q, k, v: sdpa(q, k, v, is_causal=True), (q, k, v), dtype, SDPA)
    # L != S (fewer and more queries than keys, causal keeps the top-left
    # triangle), Ev != E, a scale.
    for L, S in ((9, 40), (40, 9)):
        q, k, v = qkv(2, 3, L, S, 16, 24, dtype)
        check(lambda q, k, v: sdpa(q, k, v, scale=0.3), (q, k, v), dtype, SDPA)
        check(lambda q, k, v: sdpa(q, k, v, is_causal=True), (q, k, v), dtype, SDPA)
    # A float mask broadcast over the heads, and one over everything but
    # L x S given transposed (its columns strided).
    q, k, v = qkv(2, 3, 9, 40, 16, 24, dtype)
    m = values((2, 1, 9, 40), dtype, 8)
    check(lambda q, k, v, m: sdpa(q, k, v, attn_mask=m), (q, k, v, m), dtype, SDPA)
    mt = values((40, 9), dtype, 9)
    check(lambda q, k, v, m: sdpa(q, k, v, attn_mask=m.t()), (q, k, v, mt), dtype, SDPA)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sdpa_bool_mask_fully_masked_row(dtype):
    # A row with nothing to attend to gives zeros, as eager (not NaN).
    q, k, v = qkv(2, 3, 6, 33, 8, 8, dtype)
    g = torch.Generator().manual_seed(3)
    m = torch.rand((2, 3, 6, 33), generator=g) > 0.4
    m[0, 1, 2] = False
    m[1, :, 5] = False
    fn = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)  # noqa: E731
    with torch.no_grad():
        assert torch.equal(fn(q, k, v, m)[0, 1, 2], torch.zeros(8, dtype=dtype))
    check(fn, (q, k, v, m), dtype, SDPA)
    # A bool mask broadcast over batches and heads, strided columns.
    m2 = (torch.rand((33, 6), generator=g) > 0.5)
    m2[:, 4] = False
    fn2 = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m.t())  # noqa: E731
    check(fn2, (q, k, v, m2), dtype, SDPA)


def test_sdpa_head_split_views():
    # q, k, v as nn.MultiheadAttention and TransformerEncoderLayer make
    # them: [B, L, H * E] split into heads and transposed, not contiguous.
    B, L, H, E = 3, 11, 4, 8

    def fn(x, y):
        q = x.view(B, L, H, E).transpose(1, 2)
        k = y.view(B, L, H, E).transpose(1, 2)
        v = (y * 0.5).view(B, L, H, E).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    x, y = (values((B, L, H * E), torch.float32, s) / 2 for s in (1, 2))
    check(fn, (x, y), torch.float32, SDPA)
    # Sequence-first, as MultiheadAttention without batch_first.
    def fn2(x):
        q = x.view(L, B * H, E).transpose(0, 1).view(B, H, L, E)
        return F.scaled_dot_product_attention(q, q, q)

    check(fn2, (values((L, B, H * E), torch.float32, 3) / 2,), torch.float32, SDPA)


def test_sdpa_threads_bit_equal():
    # 32 batch matrices of 64 x 64 x 32: split over threads, a part each
    # (Attention.cpp's attentionParts); one and two threads agree bit for
    # bit.
    q, k, v = qkv(4, 8, 64, 64, 32, 32, torch.float32)
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    compiled = traceir.compile(traceir.from_torch(Fn(fn), (q, k, v)), "cpu")
    before = traceir.num_threads()
    try:
        traceir.set_num_threads(1)
        one = compiled(q, k, v)
        traceir.set_num_threads(2)
        assert torch.equal(one, compiled(q, k, v))
    finally:
        traceir.set_num_threads(before)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sdpa_batches_over_threads(dtype):
    # At two threads, shapes whose batches split over them (B x H = 21 and
    # 20, not multiples of the parts): against eager and the portable tier,
    # with a float mask broadcast over the heads, causal, and on head-split
    # views (strided rows).
    sdpa = F.scaled_dot_product_attention
    before = traceir.num_threads()
    try:
        traceir.set_num_threads(2)
        q, k, v = qkv(3, 7, 64, 48, 32, 40, dtype)
        check(lambda q, k, v: sdpa(q, k, v), (q, k, v), dtype, SDPA)
        check(lambda q, k, v: sdpa(q, k, v, is_causal=True), (q, k, v), dtype, SDPA)
        m = values((3, 1, 64, 48), dtype, 8)
        check(lambda q, k, v, m: sdpa(q, k, v, attn_mask=m), (q, k, v, m), dtype, SDPA)
        B, L, H, E = 4, 64, 5, 32

        def split(x, y):
            q = x.view(B, L, H, E).transpose(1, 2)
            kv = y.view(B, L, H, E).transpose(1, 2)
            return sdpa(q, kv, kv * 0.5, is_causal=True)

        x, y = (values((B, L, H * E), dtype, s) / 2 for s in (1, 2))
        check(split, (x, y), dtype, SDPA)
    finally:
        traceir.set_num_threads(before)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_sdpa_half_stays_portable(dtype):
    # The portable kernel (float copies) runs at both tiers: the same
    # result. (Against eager, test_attention.py: eager rounds to half in
    # between, so the f32 tolerances of check() do not apply.)
    q, k, v = qkv(2, 2, 5, 7, 8, 8, dtype)
    _, out = run_tiers(Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v)), (q, k, v))
    assert out["optimized"][1][SDPA] == "portable"
    assert torch.equal(out["optimized"][0], out["portable"][0])


def test_errors_still_reported():
    # The optimized kernels decode with the portable ones' checks.
    x = values((4, 8), torch.float32)
    compiled = traceir.compile(traceir.from_torch(Fn(lambda t: F.softmax(t, -1)), (x,)), "cpu")
    with pytest.raises(traceir.TraceIRError):
        compiled(values((4, 9), torch.float32))
