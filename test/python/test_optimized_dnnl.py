"""The optimized tier's conv2d, max_pool2d and avg_pool2d on oneDNN
(CPU/Optimized/DNNL.cpp) against eager and against the portable tier:
groups (depthwise too), stride, padding, dilation, bias, batch and kernel
sizes; conv2d's strided inputs (gathered) and small depthwise convs (a
direct loop); the pools' ceil_mode and count_include_pad; and what the tier
leaves to the portable kernels (f64, a strided weight, divisor_override). In a
runtime built without oneDNN every case still runs, on the portable tier,
and the assertions that the optimized one ran are skipped."""
import pytest
import torch

import traceir
from test_optimized_kernels import run_both

F = torch.nn.functional
HAVE_DNNL = traceir.dnnl_version() is not None
NO_DNNL = "this runtime was built without oneDNN (TRACEIR_USE_DNNL off or libdnnl-dev missing)"
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-12, atol=1e-12)}


def values(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def check(fn, args, optimized=True):
    """fn's result at both tiers matches eager and the other tier; the op
    ran on the optimized tier exactly where `optimized` (and the build has
    oneDNN)."""
    want = fn(*args)
    out = run_both(fn, args)
    (fast, fast_tiers), (slow, slow_tiers) = out["optimized"], out["portable"]
    tol = TOL[args[0].dtype]
    assert fast.shape == want.shape and fast.dtype == want.dtype
    torch.testing.assert_close(fast, want, **tol)
    torch.testing.assert_close(fast, slow, **tol)
    assert set(slow_tiers) == {"portable"}
    assert ("optimized" in fast_tiers) == (optimized and HAVE_DNNL), fast_tiers


CONVS = [
    # (N, C, H, W), (O, C / groups, kH, kW), stride, padding, dilation, groups
    ((1, 3, 17, 19), (8, 3, 3, 3), 1, 1, 1, 1),
    ((3, 3, 32, 30), (16, 3, 7, 7), 2, 3, 1, 1),     # resnet's stem
    ((3, 16, 12, 12), (24, 16, 1, 1), 1, 0, 1, 1),   # a 1x1
    ((1, 16, 12, 12), (24, 16, 1, 1), 2, 0, 1, 1),   # a strided 1x1 (downsample)
    ((3, 8, 15, 13), (12, 4, 3, 3), 1, 1, 1, 2),     # groups 2
    ((3, 12, 14, 14), (12, 1, 3, 3), 2, 1, 1, 12),   # depthwise, stride 2
    ((1, 6, 20, 20), (12, 1, 3, 3), 1, 2, 2, 6),     # depthwise x2, dilation 2
    ((1, 4, 11, 9), (5, 4, 3, 2), (2, 1), (1, 0), (1, 2), 1),
    ((3, 5, 10, 10), (7, 5, 3, 3), 1, "same", 1, 1),
]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("case", CONVS, ids=lambda c: "x".join(map(str, c[0])) + f"-k{c[1]}-g{c[5]}")
def test_conv2d(case, bias):
    xs, ws, stride, padding, dilation, groups = case
    x, w = values(xs), values(ws, seed=1) * 0.2
    b = values((ws[0],), seed=2) if bias else None

    def fn(x, w, *b):
        return F.conv2d(x, w, b[0] if b else None, stride, padding, dilation, groups)

    check(fn, (x, w) + ((b,) if bias else ()))


def test_conv2d_unbatched():
    check(lambda x, w: F.conv2d(x, w, padding=1), (values((4, 9, 9)), values((6, 4, 3, 3), seed=1)))


def test_conv2d_portable_cases():
    # f64 (oneDNN computes no f64), a transposed weight and a zero-size
    # batch run on the portable tier.
    x, w = values((2, 4, 9, 9), torch.float64), values((6, 4, 3, 3), torch.float64, 1)
    check(lambda x, w: F.conv2d(x, w, padding=1), (x, w), optimized=False)
    x, w = values((2, 4, 9, 11)), values((6, 4, 3, 3), seed=1)
    check(lambda x, w: F.conv2d(x, w.transpose(2, 3), padding=1), (x, w), optimized=False)
    check(lambda x, w: F.conv2d(x, w, padding=1), (values((0, 4, 9, 9)), w), optimized=False)


def test_conv2d_strided_inputs():
    # A strided input (ConvNeXt's downsampling conv after LayerNorm2d: NHWC
    # permuted back to NCHW, a transpose, a slice) is gathered for oneDNN.
    w = values((6, 4, 3, 3), seed=1)
    check(lambda x, w: F.conv2d(x.permute(0, 3, 1, 2), w, padding=1), (values((2, 9, 11, 4)), w))
    check(lambda x, w: F.conv2d(x.transpose(2, 3), w, padding=1), (values((2, 4, 9, 11)), w))
    check(lambda x, w: F.conv2d(x[:, :, ::2], w, stride=2), (values((1, 4, 18, 9)), w))


DEPTHWISE_SMALL = [
    # (N, C, H, W), kernel, stride, padding, dilation: at most 8 output
    # pixels, the direct loop (DNNL.cpp's depthwiseDirect)
    ((1, 24, 2, 2), 7, 1, 3, 1),   # ConvNeXt's third stage at 32x32
    ((1, 40, 1, 1), 7, 1, 3, 1),   # its last
    ((2, 8, 4, 2), 3, 1, 1, 1),    # 8 pixels, a batch
    ((1, 6, 5, 3), 3, 2, 1, 2),    # stride 2, dilation 2: 2x1 pixels
    ((1, 5, 3, 3), (3, 1), 1, 0, 1),
]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("case", DEPTHWISE_SMALL, ids=lambda c: "x".join(map(str, c[0])))
def test_conv2d_small_depthwise(case, bias):
    xs, k, stride, padding, dilation = case
    C = xs[1]
    kh, kw = (k, k) if isinstance(k, int) else k
    x, w = values(xs), values((C, 1, kh, kw), seed=1) * 0.2
    b = values((C,), seed=2) if bias else None

    def fn(x, w, *b):
        return F.conv2d(x, w, b[0] if b else None, stride, padding, dilation, C)

    check(fn, (x, w) + ((b,) if bias else ()))
    # The loop reads any strides: a channels-last input permuted to NCHW.
    nhwc = x.permute(0, 2, 3, 1).contiguous()
    check(lambda t, w, *b: fn(t.permute(0, 3, 1, 2), w, *b), (nhwc, w) + ((b,) if bias else ()))


def test_conv2d_small_depthwise_unbatched():
    check(lambda x, w: F.conv2d(x, w, padding=3, groups=12),
          (values((12, 2, 2)), values((12, 1, 7, 7), seed=1)))


def test_conv2d_repeated_shapes_and_new_weights():
    # A cached primitive runs again with other weights (they are reordered
    # on every call, never kept).
    x = values((2, 8, 10, 10))
    for seed in range(3):
        check(lambda x, w: F.conv2d(x, w, padding=1), (x, values((8, 8, 3, 3), seed=seed)))


POOLS = [
    # input, kernel, stride, padding, ceil_mode
    ((2, 3, 17, 17), 3, 2, 1, False),
    ((2, 3, 16, 16), 3, 2, 1, True),
    ((1, 4, 15, 12), 3, 2, 1, True),
    ((3, 2, 9, 11), 2, 2, 0, False),
    ((3, 2, 9, 11), 2, 2, 0, True),
    ((2, 5, 10, 7), (3, 2), (2, 1), (1, 0), False),
]


@pytest.mark.parametrize("case", POOLS, ids=str)
def test_max_pool2d(case):
    xs, k, s, p, ceil = case
    check(lambda x: F.max_pool2d(x, k, s, p, ceil_mode=ceil), (values(xs),))


def test_max_pool2d_dilation_and_unbatched():
    check(lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2), (values((2, 3, 15, 15)),))
    check(lambda x: F.max_pool2d(x, 3, 2, 1), (values((3, 15, 15)),))


@pytest.mark.parametrize("count_include_pad", [True, False], ids=["include_pad", "exclude_pad"])
@pytest.mark.parametrize("case", POOLS, ids=str)
def test_avg_pool2d(case, count_include_pad):
    xs, k, s, p, ceil = case
    fn = lambda x: F.avg_pool2d(x, k, s, p, ceil_mode=ceil,  # noqa: E731
                                count_include_pad=count_include_pad)
    # PyTorch's count_include_pad divides a window that ceil_mode lets run
    # past the padding by its part within the padded input; oneDNN by the
    # whole window: that case runs on the portable tier.
    x = values(xs)
    last_end = lambda d: (fn(x).shape[2 + d] - 1) * (s if isinstance(s, int) else s[d]) + (  # noqa: E731
        k if isinstance(k, int) else k[d])
    pad = lambda d: p if isinstance(p, int) else p[d]  # noqa: E731
    past = any(last_end(d) > xs[2 + d] + 2 * pad(d) for d in range(2))
    check(fn, (x,), optimized=not (count_include_pad and past))


def test_max_pool2d_nan_wins():
    # oneDNN's max skips a NaN, PyTorch's lets it win: an input with one
    # runs on the portable tier.
    y = values((1, 2, 6, 6))
    y[0, 0, 1, 1] = float("nan")
    want = F.max_pool2d(y, 2, 2)
    got = run_both(lambda y: F.max_pool2d(y, 2, 2), (y,))["optimized"]
    torch.testing.assert_close(got[0], want, equal_nan=True)
    assert "optimized" not in got[1]


def test_pool_portable_cases():
    check(lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=4), (values((2, 3, 9, 9)),),
          optimized=False)
    check(lambda x: F.max_pool2d(x, 3, 2, 1), (values((2, 3, 9, 9), torch.float64),),
          optimized=False)
    check(lambda x: F.avg_pool2d(x.transpose(2, 3), 3, 2, 1), (values((2, 3, 9, 8)),),
          optimized=False)


def test_threads_do_not_change_results():
    x, w = values((2, 8, 20, 20)), values((16, 8, 3, 3), seed=1)
    before = traceir.num_threads()
    results = []
    try:
        for n in (1, 2):
            traceir.set_num_threads(n)
            results.append(run_both(lambda x, w: F.conv2d(x, w, padding=1), (x, w))["optimized"][0])
    finally:
        traceir.set_num_threads(before)
    torch.testing.assert_close(results[0], results[1], **TOL[torch.float32])


POINTWISE_OVER_THREADS = [
    # (N, C, H, W), O, stride: enough work that the images split over two
    # threads (DNNL.cpp's pointwiseParts), an image count the threads do not
    # divide, and a stride whose pixels each thread gathers into its own
    # scratch.
    ((4, 64, 32, 32), 64, 1),
    ((3, 48, 33, 31), 96, 1),
    ((3, 64, 48, 46), 64, 2),
]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("case", POINTWISE_OVER_THREADS, ids=lambda c: "x".join(map(str, c[0])) + f"-s{c[2]}")
def test_pointwise_conv_images_over_threads(case, bias):
    xs, o, stride = case
    x, w = values(xs), values((o, xs[1], 1, 1), seed=1) * 0.2
    b = values((o,), seed=2) if bias else None
    before = traceir.num_threads()
    try:
        traceir.set_num_threads(2)
        check(lambda x, w, *b: F.conv2d(x, w, b[0] if b else None, stride),
              (x, w) + ((b,) if bias else ()))
    finally:
        traceir.set_num_threads(before)


@pytest.mark.skipif(not HAVE_DNNL, reason=NO_DNNL)
def test_dnnl_version():
    assert traceir.dnnl_version().count(".") == 2
