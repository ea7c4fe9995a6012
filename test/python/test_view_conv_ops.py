"""diagonal and as_strided (views) and convolution (aten.convolution: 1-D, 2-D
and 3-D, transposed or not) against PyTorch, on the CPU and on CUDA (the
`device` fixture of conftest.py; the cuda cases skip, with one line saying
why, where trace-run finds no CUDA device).

diagonal and as_strided share their input's storage (ViewAlgebra's
Diagonal and AsStrided layouts, lib/Runtime/CPU/Views.cpp, HOST on CUDA):
they copy nothing, an in-place op through them writes the base, and
--free-dead-tensors keeps the base alive while a view is (measured peak ==
predicted, which check_op asserts). as_strided's strides count elements of
the input's storage, as PyTorch's, so it is tested on inputs that are
themselves views (Transposed, Sliced) against as_strided of the same
storage; a view reaching past the storage is refused at run time.

convolution runs the portable kernel of Runtime/Convolution.h (a direct
sum per output element in f64, rounded once), so every dtype is compared
with PyTorch's f64 result rounded to it: f32 within rtol 1e-6 / atol 1e-6,
f64 1e-10 / 1e-12, f16 and bf16 within one rounding step.
"""
import pytest
import torch
import torch.nn.functional as F

from traceir_testing import RunError, Sliced, Transposed, check_op, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

torch.manual_seed(0)

aten = torch.ops.aten
TOL = {torch.float32: dict(rtol=1e-6, atol=1e-6), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=8e-3, atol=8e-3)}


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def check_error(op, args, like, match):
    """Running `op` on `args` (result typed as `like`) fails with `match`."""
    text, inputs = op_graph(op, args, [like])
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs)


def stored(arg):
    """The tensor op_graph stores for a Transposed or Sliced argument, viewed
    as the graph views it: what PyTorch's as_strided reads the storage of."""
    t = arg.tensor
    if isinstance(arg, Transposed):
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    s = torch.zeros((2 * t.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype)
    s[::2] = t
    return s[::2]


#===--- diagonal -------------------------------------------------------------===#

# (shape, offset, dim1, dim2)
DIAG_CASES = [
    ((4, 4), 0, 0, 1), ((4, 4), 1, 0, 1), ((4, 4), -2, 0, 1), ((3, 5), 2, 0, 1),
    ((5, 3), -3, 0, 1), ((3, 5), 1, 1, 0), ((2, 3, 4), 0, 0, 2), ((2, 3, 4), 1, -1, 0),
    ((2, 3, 4), -1, 2, 1), ((2, 3, 4, 5), 0, 1, 3), ((2, 3, 4, 5), -2, -1, -3),
    ((3, 3), 3, 0, 1), ((3, 3), -7, 0, 1), ((3, 3), 100, 0, 1), ((0, 4), 0, 0, 1),
    ((3, 0, 2), 0, 0, 1), ((1, 1), 0, 1, 0),
]


@pytest.mark.parametrize("case", DIAG_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_diagonal(case):
    shape, offset, d1, d2 = case
    x = rnd(*shape)
    check_op("diagonal", [x, offset, d1, d2], aten.diagonal(x, offset, d1, d2))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int8, torch.bool])
def test_diagonal_dtypes(dtype):
    x = rnd(3, 4, 5).to(dtype) if dtype.is_floating_point else torch.randint(0, 2, (3, 4, 5)).to(dtype)
    check_op("diagonal", [x, 1, 2, 0], aten.diagonal(x, 1, 2, 0))


def test_diagonal_defaults_and_strided():
    x = rnd(4, 6)
    check_op("diagonal", [x], aten.diagonal(x))
    check_op("diagonal", [x, -1], aten.diagonal(x, -1))
    check_op("diagonal", [Transposed(x), 2], aten.diagonal(x, 2))
    check_op("diagonal", [Sliced(x), -1, 1, 0], aten.diagonal(x, -1, 1, 0))
    y = rnd(3, 4, 5)
    check_op("diagonal", [Sliced(y), 1, 0, 2], aten.diagonal(y, 1, 0, 2))


def test_diagonal_errors():
    x = rnd(3, 4)
    check_error("diagonal", [x, 0, 1, 1], rnd(3), "diagonal dimensions cannot be identical 1, 1")
    check_error("diagonal", [x, 0, 0, -2], rnd(3), "diagonal dimensions cannot be identical 0, -2")
    check_error("diagonal", [x, 0, 0, 2], rnd(3), "dim2 2 is out of range")
    check_error("diagonal", [x, 0, -3, 1], rnd(3), "dim1 -3 is out of range")
    check_error("diagonal", [rnd(5), 0, 0, 1], rnd(5), "diagonal needs at least 2 dims")
    check_error("diagonal", [x, 0, 0, 1], rnd(4), "diagonal.*declared")


#===--- as_strided -----------------------------------------------------------===#

# (input shape, size, stride, storage_offset)
STRIDED_CASES = [
    ((3, 4), [2, 2], [1, 2], None), ((3, 4), [4, 3], [1, 4], None), ((3, 4), [2, 3], [4, 1], 5),
    ((12,), [3, 3], [3, 1], 3), ((12,), [5, 2], [2, 2], 0), ((2, 3, 4), [4, 6], [6, 1], None),
    ((2, 3, 4), [2, 2, 2], [12, 4, 1], 1), ((3, 4), [2, 0, 3], [1, 1, 1], 11), ((3, 4), [], [], 7),
    ((3, 4), [12], [1], 0), ((3, 4), [3, 3], [0, 1], 9), ((1,), [4, 4], [0, 0], 0),
]


@pytest.mark.parametrize("case", STRIDED_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_as_strided(case):
    shape, size, stride, offset = case
    x = rnd(*shape)
    check_op("as_strided", [x, size, stride, offset], aten.as_strided(x, size, stride, offset))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.int32, torch.uint8, torch.bool])
def test_as_strided_dtypes(dtype):
    x = rnd(4, 5).to(dtype) if dtype.is_floating_point else torch.randint(0, 2, (4, 5)).to(dtype)
    check_op("as_strided", [x, [3, 4], [5, 1], 2], aten.as_strided(x, [3, 4], [5, 1], 2))


def test_as_strided_reads_the_storage_of_a_view():
    """Strides and the default offset are the storage's, not the view's."""
    x = rnd(3, 4)
    for arg in (Transposed(x), Sliced(x)):
        s = stored(arg)
        for size, stride, offset in (([3, 4], [1, 3], None), ([2, 5], [5, 1], 2),
                                     ([4], [2], None), ([2, 2], [4, 1], 1)):
            want = aten.as_strided(s, size, stride, offset)
            check_op("as_strided", [arg, size, stride, offset], want)


def test_as_strided_errors():
    x = rnd(3, 4)
    # Inside the graph's types, but past the input's 12 elements: refused at run time.
    check_error("as_strided", [x, [3, 4], [4, 1], 1], rnd(3, 4), "reaches past its storage of 12")
    check_error("as_strided", [x, [2, 2], [8, 4], None], rnd(2, 2), "reaches past its storage")
    check_error("as_strided", [x, [13], [1], None], rnd(13), "reaches past its storage")
    check_error("as_strided", [x, [2, 2], [-1, 1], 3], rnd(2, 2),
                "negative strides are not supported")
    check_error("as_strided", [x, [2, 2], [1], None], rnd(2, 2), "mismatch in length")
    check_error("as_strided", [x, [2], [1], -1], rnd(2), "invalid storage offset -1")
    check_error("as_strided", [x, [2, -1], [1, 1], None], rnd(2, 1), "negative dim")
    # A huge stride must not wrap into an in-bounds view.
    check_error("as_strided", [x, [2, 2], [2**62, 1], 0], rnd(2, 2), "reaches past its storage")


#===--- aliasing -------------------------------------------------------------===#

def test_views_write_through_and_keep_their_base_alive():
    """add_ through a diagonal and an as_strided view writes the base; the
    base (a fresh clone) is freed only after its last view's use, and the
    measured peak is the predicted one."""
    x, y, z = rnd(4, 4), rnd(4), rnd(2, 2)
    f32 = "tensor<4x4xf32>"
    text = f"""trace.graph @g(%x: {f32} {{trace.input = "x"}}, %y: tensor<4xf32> {{trace.input = "y"}}, %z: tensor<2x2xf32> {{trace.input = "z"}}) -> ({f32}, tensor<2x2xf32>, tensor<3xf32>) {{
  %c = pyop "clone"(%x) : ({f32}) -> {f32}
  %d = pyop "diagonal"(%c) : ({f32}) -> tensor<4xf32>
  %e = pyop "add_"(%d, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = pyop "as_strided"(%c, [2, 2], [1, 4], 1) : ({f32}) -> tensor<2x2xf32>
  %m = pyop "mul_"(%a, %z) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %k = pyop "clone"(%x) : ({f32}) -> {f32}
  %kd = pyop "diagonal"(%k, 1) : ({f32}) -> tensor<3xf32>
  %r = pyop "mul"(%kd, %kd) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  ret %c, %a, %r : {f32}, tensor<2x2xf32>, tensor<3xf32>
}}
"""
    outs, report = run_graph(text, {"x": x, "y": y, "z": z})
    want = x.clone()
    want.diagonal().add_(y)
    want.as_strided([2, 2], [1, 4], 1).mul_(z)
    torch.testing.assert_close(outs[0], want)
    torch.testing.assert_close(outs[1], want.as_strided([2, 2], [1, 4], 1))
    torch.testing.assert_close(outs[2], x.diagonal(1) * x.diagonal(1))
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    # %k is freed after its view's last use; %c is returned, never freed.
    assert dev["frees"] >= 1, report


def test_view_of_a_view_is_freed_with_its_base():
    x = rnd(3, 4, 5)
    text = """trace.graph @g(%x: tensor<3x4x5xf32> {trace.input = "x"}) -> (tensor<3xf32>) {
  %c = pyop "mul"(%x, %x) : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %d = pyop "diagonal"(%c, 1, 1, 2) : (tensor<3x4x5xf32>) -> tensor<3x4xf32>
  %a = pyop "as_strided"(%d, [3], [21], 2) : (tensor<3x4xf32>) -> tensor<3xf32>
  %r = pyop "neg"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  ret %r : tensor<3xf32>
}
"""
    outs, report = run_graph(text, {"x": x})
    c = x * x
    torch.testing.assert_close(outs[0], -c.diagonal(1, 1, 2).as_strided([3], [21], 2))
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report


#===--- convolution ----------------------------------------------------------===#

# (input spatial, kernel, stride, padding, dilation, transposed, output_padding, groups, bias)
CONV_CASES = [
    ([9], [3], [1], [0], [1], False, [0], 1, True),
    ([10], [4], [2], [1], [1], False, [0], 2, False),
    ([11], [3], [3], [2], [2], False, [0], 1, True),
    ([7], [3], [2], [1], [1], True, [1], 1, True),
    ([6], [2], [3], [0], [2], True, [1], 2, False),
    ([5], [1], [1], [0], [1], True, [0], 1, True),
    ([5, 6], [3, 2], [1, 2], [1, 0], [1, 1], False, [0, 0], 1, True),
    ([6, 5], [3, 3], [2, 1], [1, 2], [2, 1], False, [0, 0], 2, True),
    ([4, 5], [3, 2], [2, 2], [1, 0], [1, 1], True, [1, 0], 1, True),
    ([3, 4], [2, 3], [2, 3], [0, 1], [2, 1], True, [1, 2], 2, False),
    ([4, 5, 3], [2, 3, 1], [1, 2, 1], [0, 1, 0], [1, 1, 1], False, [0, 0, 0], 1, True),
    ([5, 4, 4], [3, 2, 2], [2, 1, 2], [1, 1, 0], [1, 2, 1], False, [0, 0, 0], 2, False),
    ([3, 3, 2], [2, 2, 2], [2, 1, 2], [1, 0, 1], [1, 1, 1], True, [1, 0, 1], 1, True),
    ([2, 3, 2], [2, 1, 3], [1, 2, 1], [0, 0, 1], [2, 1, 1], True, [0, 1, 0], 2, True),
]


def conv_inputs(case, dtype=torch.float32, batch=2, cin=4, cout=6):
    spatial, k, stride, padding, dilation, transposed, out_pad, groups, bias = case
    x = rnd(batch, cin, *spatial, dtype=dtype)
    w = (rnd(cin, cout // groups, *k, dtype=dtype) if transposed
         else rnd(cout, cin // groups, *k, dtype=dtype))
    b = rnd(cout, dtype=dtype) if bias else None
    return [x, w, b, stride, padding, dilation, transposed, out_pad, groups]


def conv_want(args):
    """PyTorch's f64 result, rounded to the dtype."""
    x, w, b = args[:3]
    w64 = [t.double() if isinstance(t, torch.Tensor) else t for t in (x, w, b)]
    return aten.convolution(*w64, *args[3:]).to(x.dtype)


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_convolution(case):
    args = conv_inputs(case)
    want = conv_want(args)
    # Also within PyTorch's own f32 result's reach.
    torch.testing.assert_close(aten.convolution(*args), want, rtol=1e-4, atol=1e-5)
    check_op("convolution", args, want, **TOL[torch.float32])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[3], CONV_CASES[7], CONV_CASES[9],
                                  CONV_CASES[12]], ids=lambda c: f"{len(c[0])}d-t{int(c[5])}")
def test_convolution_dtypes(case, dtype):
    args = conv_inputs(case, dtype)
    check_op("convolution", args, conv_want(args), **TOL[dtype])
    if dtype != torch.float64:
        # PyTorch's own (f32-accumulated) result, a rounding step or two away.
        check_op("convolution", args, aten.convolution(*args), rtol=2e-2, atol=2e-2)


def int_conv_inputs(case, dtype):
    """conv_inputs in `dtype`, with values large enough that the products
    and sums wrap, as PyTorch's."""
    info = torch.iinfo(dtype)
    lo, hi = (max(info.min, -2**40), min(info.max, 2**40))
    return [torch.randint(lo, hi, t.shape, dtype=dtype) if isinstance(t, torch.Tensor) else t
            for t in conv_inputs(case)]


# PyTorch's CPU convolution takes int64 in every configuration; its CUDA one
# no integers, so these run on the CPU.
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{len(c[0])}d-t{int(c[5])}-g{c[7]}")
def test_convolution_int64(case):
    args = int_conv_inputs(case, torch.int64)
    check_op("convolution", args, aten.convolution(*args), rtol=0, atol=0, device="cpu")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{len(c[0])}d-t{int(c[5])}-g{c[7]}")
def test_convolution_half_against_eager(case, dtype):
    """f32 accumulation rounded once: PyTorch's float64 result rounded to
    the dtype, at assert_close's own tolerances for it, and never further
    from float64 than eager's own result. (Eager's transposed half
    convolutions round in between on some CPUs, AMD's among them, and come
    out a rounding step or two away: comparing with eager alone would make
    the test depend on the CPU.)"""
    args = conv_inputs(case, dtype)
    tol = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5)}[dtype]
    got = check_op("convolution", args, conv_want(args), rtol=tol[0], atol=tol[1])[0]
    x, w, b = args[:3]
    ref = aten.convolution(*[t.double() if isinstance(t, torch.Tensor) else t for t in (x, w, b)],
                           *args[3:])
    eager_err = (aten.convolution(*args).double() - ref).abs().max()
    assert (got.double() - ref).abs().max() <= eager_err + tol[1]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int64])
def test_conv2d_dtypes(dtype):
    """conv2d (im2col + gemm) in the half types (f32, rounded once) and in
    integers (exact, wrapping), against PyTorch's CPU conv2d."""
    x, w, b = rnd(2, 4, 6, 7), rnd(6, 2, 3, 3), rnd(6)
    if dtype.is_floating_point:
        x, w, b = x.to(dtype), w.to(dtype), b.to(dtype)
        tol = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5)}[dtype]
    else:
        info = torch.iinfo(dtype)
        x, w, b = (torch.randint(max(info.min, -2**40), min(info.max, 2**40), t.shape, dtype=dtype)
                   for t in (x, w, b))
        tol = (0, 0)
    for args in ([x, w, b, [2, 1], [1, 0], [1, 2], 2], [x[0], w, None, [1, 1], "same", [1, 1], 2]):
        want = torch.nn.functional.conv2d(*args)
        check_op("conv2d", args, want, rtol=tol[0], atol=tol[1], device="cpu")


def test_convolution_strided_operands():
    """Transposed and Sliced inputs, weights and biases: any strided view."""
    for case in (CONV_CASES[0], CONV_CASES[4], CONV_CASES[7], CONV_CASES[10], CONV_CASES[13]):
        x, w, b, *rest = conv_inputs(case)
        want = conv_want([x, w, b, *rest])
        check_op("convolution", [Transposed(x), Sliced(w), b, *rest], want, **TOL[torch.float32])
        check_op("convolution", [Sliced(x), Transposed(w), Sliced(b) if b is not None else None, *rest], want,
                 **TOL[torch.float32])


def test_convolution_params_as_one_int_and_edges():
    # One-element lists apply to every spatial dim, as PyTorch's.
    x, w = rnd(1, 2, 5, 6, 4), rnd(3, 2, 2, 3, 2)
    args = [x, w, None, [2], [1], [1], False, [0], 1]
    check_op("convolution", args, conv_want(args), **TOL[torch.float32])
    # An empty batch, a kernel the size of the padded input, a 1x1 kernel.
    for x, w in ((rnd(0, 2, 5), rnd(3, 2, 3)), (rnd(2, 2, 3), rnd(3, 2, 5)),
                 (rnd(2, 4, 3, 3), rnd(5, 4, 1, 1))):
        args = [x, w, None, [1], [1], [1], False, [0], 1]
        check_op("convolution", args, conv_want(args), **TOL[torch.float32])
    # Depthwise, and a transposed convolution with groups = channels.
    x, w = rnd(2, 4, 7), rnd(4, 1, 3)
    for transposed in (False, True):
        args = [x, w, rnd(4), [2], [1], [1], transposed, [1 if transposed else 0], 4]
        check_op("convolution", args, conv_want(args), **TOL[torch.float32])


def test_convolution_keeps_conv2d():
    """conv2d is unchanged, and the 2-D non-transposed convolution agrees."""
    x, w, b = rnd(2, 4, 6, 7), rnd(6, 2, 3, 3), rnd(6)
    args = [x, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 2]
    want = aten.convolution(*args)
    check_op("convolution", args, want, rtol=1e-5, atol=1e-5)
    check_op("conv2d", [x, w, b, [2, 1], [1, 0], [1, 2], 2], want, rtol=1e-5, atol=1e-5)


def test_convolution_errors():
    x, w = rnd(1, 4, 6), rnd(6, 2, 3)
    ok = [[1], [0], [1], False, [0], 2]
    check_error("convolution", [x, rnd(6, 1, 3), None, *ok[:5], 4], rnd(1, 6, 4),
                "not divisible by groups=4")
    check_error("convolution", [x, rnd(6, 3, 3), None, *ok], rnd(1, 6, 4),
                r"has 4 channels but weight \[6, 3, 3\] with groups=2 expects 6")
    check_error("convolution", [x, w, rnd(5), *ok], rnd(1, 6, 4), "bias must have 6 elements")
    check_error("convolution", [x, rnd(6, 2, 9), None, *ok], rnd(1, 6, 1),
                "larger than the padded input")
    check_error("convolution", [x, w, None, [0], [0], [1], False, [0], 2], rnd(1, 6, 4),
                "non-positive stride")
    check_error("convolution", [x, w, None, [1], [-1], [1], False, [0], 2], rnd(1, 6, 4),
                "negative padding")
    check_error("convolution", [x, w, None, [1], [0], [0], False, [0], 2], rnd(1, 6, 4),
                "dilation should be greater than zero")
    check_error("convolution", [x, w, None, [1], [0], [1], False, [0], 0], rnd(1, 6, 4),
                "non-positive groups")
    check_error("convolution", [x, rnd(4, 3, 3), None, [1], [0], [1], True, [1], 2], rnd(1, 6, 8),
                "output padding must be smaller than either stride or dilation")
    check_error("convolution", [x, w, None, [1, 1], [0], [1], False, [0], 2], rnd(1, 6, 4),
                r"stride must have 1 or 1 values")
    check_error("convolution", [rnd(1, 4, 6, 6), w, None, *ok], rnd(1, 6, 4),
                "expected a 3-D input")
    check_error("convolution", [x, rnd(6, 2), None, *ok], rnd(1, 6, 4),
                "weight must have 3, 4 or 5 dims")
    check_error("convolution", [x, w.double(), None, *ok], rnd(1, 6, 4), "one dtype")
    for dt in (torch.int32, torch.bool):
        check_error("convolution", [x.to(dt), w.to(dt), None, *ok], rnd(1, 6, 4).to(dt),
                    "floating-point dtypes and int64, got")
    check_error("convolution", [x, w, None, *ok], rnd(1, 6, 5), "convolution.*declared")
    # Transposed sizes that overflow int64 are refused, never wrapped.
    check_error("convolution", [rnd(1, 4, 3), rnd(4, 3, 2), None, [2**62], [0], [1], True, [0], 1],
                rnd(1, 3, 4), "overflowing output size")
    check_error("convolution", [x, w, None, [1], [2**62], [1], False, [0], 2], rnd(1, 6, 4),
                "overflows int64")


#===--- import ---------------------------------------------------------------===#

def run_module(m, *xs, rtol=1e-5, atol=1e-5, method="export"):
    """from_torch -> compile on the test device, against eager; returns the
    graph's text."""
    import traceir
    import traceir_testing

    g = traceir.from_torch(m, xs, method=method)
    exe = traceir.compile(g, device=traceir_testing.DEVICE)
    got = exe(*xs)
    want = m(*xs)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b.detach(), rtol=rtol, atol=atol)
    return str(g)


def test_import_diagonal_and_as_strided():
    class M(torch.nn.Module):
        def forward(self, x):
            d = torch.diagonal(x, 1, -1, -2) * 2
            a = torch.as_strided(x, (3, 2), (2, 5), 1) + 1
            return d, a, torch.diagonal(x[0]).sum()

    text = run_module(M(), rnd(2, 4, 5))
    assert '"diagonal"' in text and '"as_strided"' in text, text


@pytest.mark.parametrize("method", ["export", "jit"])
@pytest.mark.parametrize("name", ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                                  "ConvTranspose3d"])
def test_import_conv_modules(name, method):
    """torch.export's aten.convolution and torch.jit.trace's
    aten::_convolution both become convolution (conv2d where 2-D and not
    transposed)."""
    torch.manual_seed(1)
    spatial = int(name[-2])
    cls = getattr(torch.nn, name)
    transposed = name.startswith("ConvTranspose")
    kw = dict(stride=2, padding=1, dilation=1, groups=2)
    if transposed:
        kw["output_padding"] = 1
    m = cls(4, 6, 3, **kw).eval()
    x = rnd(2, 4, *([5, 4, 3][:spatial]))
    text = run_module(m, x, method=method)
    assert '"convolution"' in text, text
    # Without bias, and chained with a Conv2d (which stays conv2d).
    if spatial == 2:
        seq = torch.nn.Sequential(cls(4, 6, 2, stride=2, bias=False), torch.nn.ReLU(),
                                  torch.nn.Conv2d(6, 3, 3, padding=1)).eval()
        text = run_module(seq, x, method=method)
        assert '"conv2d"' in text and '"convolution"' in text, text
    else:
        run_module(cls(4, 6, 2, bias=False).eval(), x, method=method)
