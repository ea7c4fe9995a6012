"""Pooling, padding, resampling and data-movement kernels against PyTorch, on
the CPU and on CUDA (the `device` fixture of conftest.py; the cuda cases
skip, with one line saying why, where trace-run finds no CUDA device):
avg_pool2d, constant_pad_nd, reflection_pad1d/2d/3d, replication_pad1d/2d/3d,
upsample_nearest2d.vec, upsample_bilinear2d.vec, flip, repeat and
_adaptive_avg_pool2d (an alias of adaptive_avg_pool2d)
(lib/Runtime/CPU/Resample.cpp, CUDA/Resample.cpp/.cu, both running the
per-element functions of Runtime/Resample.h).

Strided inputs (Transposed, Sliced), 3-D and 4-D pooling inputs, ceil_mode,
count_include_pad and divisor_override, negative pads, output_size and
scale_factors (integer and fractional), align_corners, 0-d and empty inputs
and the errors PyTorch raises run on both devices.

Tolerances: the pads, flip, repeat and upsample_nearest2d copy elements, so
they match exactly in every dtype. avg_pool2d and upsample_bilinear2d
accumulate in f64 (avg_pool2d's i64 in int64, exactly): f32 within rtol 1e-5 / atol 1e-6 of PyTorch, f64 rtol
1e-10 / atol 1e-12; f16/bf16 avg_pool2d against PyTorch's f64 result rounded
once (what the kernel computes), within one rounding step; f16/bf16
bilinear against PyTorch's own result within 1e-2 / 2e-2 (PyTorch rounds
its weights and partial sums to the dtype).
"""
import pytest
import torch
import torch.nn.functional as F

from traceir_testing import RunError, Sliced, Transposed, check_op, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

torch.manual_seed(0)

aten = torch.ops.aten
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=8e-3, atol=8e-3)}


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def ints(*shape, dtype=torch.int64):
    return torch.randint(-50, 50, shape).to(dtype)


def check_error(op, args, like, match):
    """Running `op` on `args` (result typed as `like`) fails with `match`."""
    text, inputs = op_graph(op, args, [like])
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs)


#===--- avg_pool2d -----------------------------------------------------------===#

# (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [
    ([2, 2], [], 0, False, True, None),
    ([3, 3], [2, 2], 1, False, True, None),
    ([3, 2], [2, 1], [1, 0], True, True, None),
    ([2, 2], [3, 3], 1, True, True, None),
    ([3, 3], [1, 1], 1, False, True, 5),
    ([5, 5], [3, 3], 2, True, False, None),
]


@pytest.mark.parametrize("case", AVG_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_avg_pool2d(case):
    x = rnd(2, 3, 7, 8)
    check_op("avg_pool2d", [x, *case], aten.avg_pool2d(x, *case))


def test_avg_pool2d_unbatched_and_strided():
    x = rnd(3, 6, 5)
    case = ([3, 3], [2, 2], 1, True, False, None)
    check_op("avg_pool2d", [x, *case], aten.avg_pool2d(x, *case))
    y = rnd(2, 3, 5, 6)
    check_op("avg_pool2d", [Transposed(y), 2], aten.avg_pool2d(y, 2))
    check_op("avg_pool2d", [Sliced(y), [2, 3], 1, 1], aten.avg_pool2d(y, [2, 3], 1, 1))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_avg_pool2d_dtypes(dtype):
    x = rnd(2, 3, 6, 6, dtype=dtype)
    case = ([3, 3], [2, 2], 1, True, True, None)
    want = aten.avg_pool2d(x.double(), *case).to(dtype)
    check_op("avg_pool2d", [x, *case], want, **TOL[dtype])


def test_avg_pool2d_int64():
    """PyTorch's CPU kernel sums int64 exactly and divides toward zero."""
    x = ints(2, 2, 5, 6)
    for case in AVG_CASES[1:3] + AVG_CASES[-2:]:
        check_op("avg_pool2d", [x, *case], aten.avg_pool2d(x, *case))


def test_avg_pool2d_empty_batch():
    x = rnd(0, 3, 4, 4)
    check_op("avg_pool2d", [x, 2], aten.avg_pool2d(x, 2))


def test_avg_pool2d_errors():
    x = rnd(1, 2, 4, 4)
    check_error("avg_pool2d", [x, 2, 2, 2], rnd(1, 2, 4, 4), "at most half of kernel 2")
    check_error("avg_pool2d", [x, 2, 2, 0, False, True, 0], rnd(1, 2, 2, 2),
                "divisor must be not zero")
    check_error("avg_pool2d", [x, 5], rnd(1, 2, 1, 1), "larger than the padded input")
    check_error("avg_pool2d", [ints(1, 2, 4, 4, dtype=torch.int32), 2],
                ints(1, 2, 2, 2, dtype=torch.int32), "floating-point")
    check_error("avg_pool2d", [rnd(4, 4), 2], rnd(2, 2), r"\[N, C, H, W\] or \[C, H, W\]")


#===--- pads -----------------------------------------------------------------===#

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8,
                                   torch.uint8, torch.bool])
def test_constant_pad_nd_dtypes(dtype):
    x = rnd(2, 3, 4).to(dtype) if dtype.is_floating_point else ints(2, 3, 4).to(dtype)
    value = 1 if dtype == torch.bool else 3
    check_op("constant_pad_nd", [x, [1, 2, 0, 1], value], aten.constant_pad_nd(x, [1, 2, 0, 1], value))


def test_constant_pad_nd_crops_and_values():
    x = rnd(3, 4, 5)
    for pad, value in [([-1, 2], 0), ([1, -2, -1, 0, 2, 1], -1.5), ([], 0), ([0, 0, 0, 0, 0, 0], 1)]:
        check_op("constant_pad_nd", [x, pad, value], aten.constant_pad_nd(x, pad, value))
    check_op("constant_pad_nd", [Transposed(x), [1, 1, 2, 0]], aten.constant_pad_nd(x, [1, 1, 2, 0]))
    i = ints(2, 3)
    # A float value on an integer tensor truncates, as fill_.
    check_op("constant_pad_nd", [i, [1, 1], 2.7], aten.constant_pad_nd(i, [1, 1], 2.7))
    big = torch.tensor([1], dtype=torch.int64)
    check_op("constant_pad_nd", [big, [1, 0], 2**62 + 1], aten.constant_pad_nd(big, [1, 0], 2**62 + 1))
    # To nothing, and from nothing.
    check_op("constant_pad_nd", [x, [-3, -2]], aten.constant_pad_nd(x, [-3, -2]))
    e = rnd(0, 3)
    check_op("constant_pad_nd", [e, [1, 1, 1, 1], 2.0], aten.constant_pad_nd(e, [1, 1, 1, 1], 2.0))
    s = torch.tensor(1.5)
    check_op("constant_pad_nd", [s, []], aten.constant_pad_nd(s, []))


def test_constant_pad_nd_errors():
    x = rnd(2, 3)
    check_error("constant_pad_nd", [x, [1]], x, "Length of pad must be even")
    check_error("constant_pad_nd", [x, [1, 1, 1, 1, 1, 1]], x, "no more than twice")
    check_error("constant_pad_nd", [x, [-2, -2]], x, "negative output size")


PADS = {
    "reflection_pad1d": ([2, 5], [2, 1], [-1, 2]),
    "reflection_pad2d": ([2, 4, 5], [2, 1, 0, 3], [-1, 2, 1, -2]),
    "reflection_pad3d": ([2, 3, 4, 5], [1, 2, 0, 3, 2, 1], [1, -1, 2, 0, -1, 1]),
    "replication_pad1d": ([2, 5], [3, 7], [-2, 4]),
    "replication_pad2d": ([2, 4, 5], [6, 1, 0, 3], [-1, 5, 4, -2]),
    "replication_pad3d": ([2, 3, 4, 5], [1, 2, 0, 3, 2, 1], [1, -1, 5, 0, -1, 1]),
}


@pytest.mark.parametrize("op", sorted(PADS))
def test_pad_modes(op):
    shape, pad, crop = PADS[op]
    fn = getattr(aten, op)
    x = rnd(*shape)
    check_op(op, [x, pad], fn(x, pad))
    check_op(op, [x, crop], fn(x, crop))
    b = rnd(2, *shape)  # batched
    check_op(op, [Transposed(b), pad], fn(b, pad))
    i = ints(*shape, dtype=torch.int32)
    check_op(op, [i, pad], fn(i, pad))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.int64, torch.uint8])
def test_reflection_pad2d_dtypes(dtype):
    x = rnd(1, 3, 4, 4).to(dtype) if dtype.is_floating_point else ints(1, 3, 4, 4).to(dtype)
    check_op("reflection_pad2d", [x, [3, 3, 1, 2]], aten.reflection_pad2d(x, [3, 3, 1, 2]))
    check_op("replication_pad2d", [x, [3, 3, 1, 2]], aten.replication_pad2d(x, [3, 3, 1, 2]))


def test_pad_empty_batch():
    x = rnd(0, 3, 4)
    check_op("reflection_pad1d", [x, [2, 1]], aten.reflection_pad1d(x, [2, 1]))
    y = rnd(0, 2, 3, 4)
    check_op("replication_pad2d", [y, [2, 1, 1, 0]], aten.replication_pad2d(y, [2, 1, 1, 0]))


def test_pad_errors():
    x = rnd(2, 4)
    check_error("reflection_pad1d", [x, [4, 1]], rnd(2, 9), "Padding size should be less than")
    check_error("reflection_pad1d", [x, [1, 1, 1]], x, "padding size is expected to be 2")
    check_error("reflection_pad2d", [x, [1, 1, 1, 1]], x, "Expected 3D or 4D")
    check_error("replication_pad1d", [rnd(2, 0), [1, 1]], rnd(2, 2), "non-zero dimensions")
    check_error("replication_pad1d", [x, [-2, -2]], rnd(2, 1), "too small")
    b = torch.ones(2, 4, dtype=torch.bool)
    check_error("reflection_pad1d", [b, [1, 1]], torch.ones(2, 6, dtype=torch.bool), "no bool")


#===--- upsampling -----------------------------------------------------------===#

# (output_size, scale_factors)
NEAREST_CASES = [([10, 12], None), ([7, 5], None), ([3, 4], None),
                 (None, [2.0, 2.0]), (None, [1.7, 0.6]), (None, [0.5, 2.5])]


@pytest.mark.parametrize("case", NEAREST_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_upsample_nearest2d(case):
    x = rnd(2, 3, 5, 6)
    check_op("upsample_nearest2d", [x, *case], aten.upsample_nearest2d.vec(x, *case))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16, torch.uint8])
def test_upsample_nearest2d_dtypes(dtype):
    x = rnd(1, 2, 4, 3).to(dtype) if dtype.is_floating_point else ints(1, 2, 4, 3).to(dtype)
    check_op("upsample_nearest2d", [Transposed(x), None, [1.3, 2.2]],
             aten.upsample_nearest2d.vec(x, None, [1.3, 2.2]))


# (output_size, align_corners, scale_factors)
BILINEAR_CASES = [([10, 12], False, None), ([10, 12], True, None), ([3, 1], True, None),
                  ([5, 6], False, None), (None, True, [1.7, 0.6]), (None, False, [1.7, 0.6]),
                  (None, False, [0.5, 3.0])]


@pytest.mark.parametrize("case", BILINEAR_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_upsample_bilinear2d(case):
    x = rnd(2, 3, 5, 6)
    check_op("upsample_bilinear2d", [x, *case], aten.upsample_bilinear2d.vec(x, *case), rtol=1e-5,
             atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_upsample_bilinear2d_dtypes(dtype):
    x = rnd(1, 2, 4, 5, dtype=dtype)
    case = (None, False, [1.5, 2.3])
    want = aten.upsample_bilinear2d.vec(x, *case)
    tol = {torch.float64: TOL[torch.float64], torch.float16: dict(rtol=1e-2, atol=1e-2),
           torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}[dtype]
    check_op("upsample_bilinear2d", [Sliced(x), *case], want, **tol)


def u8(*shape):
    return torch.randint(0, 256, shape, dtype=torch.uint8)


# u8 bilinear: eager CPU's fixed-point separable kernel, bit for bit. Up and
# down, each dim alone (one pass skipped), an output size of 1 and the sizes
# kept (a copy), with align_corners both ways. (Eager's AVX2 kernel asserts
# on a 1x1 output.)
U8_BILINEAR_CASES = [([10, 12], False, None), ([10, 12], True, None), ([3, 2], False, None),
                     ([3, 2], True, None), ([5, 13], False, None), ([11, 6], True, None),
                     ([1, 9], True, None), ([4, 1], False, None), ([5, 6], False, None),
                     (None, False, [1.7, 0.6]), (None, True, [1.7, 0.6]),
                     (None, False, [0.5, 3.0]), (None, False, [2.0, 2.0]),
                     (None, False, [0.3, 0.45])]


@pytest.mark.parametrize("case", U8_BILINEAR_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_upsample_bilinear2d_u8(case):
    # 3 channels take eager's AVX2 kernel, 5 its generic one: both agree,
    # except that the generic one gives every row of a width-1 output the
    # weights of row 0 (its vertical loop reads them once per inner loop,
    # which TensorIterator runs along the height there); TraceIR computes
    # what the AVX2 kernel (and the float one, rounded) does.
    for channels in (3, 5) if case[0] is None or case[0][1] != 1 else (3,):
        x = u8(2, channels, 5, 6)
        check_op("upsample_bilinear2d", [x, *case], aten.upsample_bilinear2d.vec(x, *case))


def test_upsample_bilinear2d_u8_strided_and_large():
    x = u8(1, 2, 37, 29)
    case = (None, False, [0.37, 2.9])
    check_op("upsample_bilinear2d", [Transposed(x), *case], aten.upsample_bilinear2d.vec(x, *case))
    check_op("upsample_bilinear2d", [Sliced(x), [64, 9], True, None],
             aten.upsample_bilinear2d.vec(x, [64, 9], True, None))
    # Extreme values: the rounding and the clamp to 0..255.
    y = torch.tensor([[[[0, 255, 0], [255, 0, 255]]]], dtype=torch.uint8)
    check_op("upsample_bilinear2d", [y, [7, 8], False, None],
             aten.upsample_bilinear2d.vec(y, [7, 8], False, None))


def test_interpolate_bilinear_u8_import():
    class M(torch.nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=1.6, mode="bilinear", align_corners=False)

    import traceir
    import traceir_testing

    m, x = M(), u8(1, 3, 6, 7)
    exe = traceir.compile(traceir.from_torch(m, (x,)), device=traceir_testing.DEVICE)
    torch.testing.assert_close(exe(x), m(x), rtol=0, atol=0)


def test_upsample_errors():
    x = rnd(1, 2, 4, 4)
    check_error("upsample_nearest2d", [x, [8, 8], [2.0, 2.0]], rnd(1, 2, 8, 8), "exactly one of")
    check_error("upsample_nearest2d", [x, None, None], x, "exactly one of")
    check_error("upsample_nearest2d", [rnd(2, 4, 4), [8, 8], None], rnd(2, 8, 8),
                "input_size equals to 4")
    check_error("upsample_nearest2d", [x, [0, 8], None], rnd(1, 2, 0, 8), "greater than 0")
    check_error("upsample_bilinear2d", [x, None, False, [0.1, 1.0]], rnd(1, 2, 0, 4),
                "greater than 0")
    check_error("upsample_bilinear2d", [ints(1, 1, 2, 2, dtype=torch.int16), [4, 4], False, None],
                ints(1, 1, 4, 4, dtype=torch.int16), "floating-point or u8")
    check_error("upsample_nearest2d", [ints(1, 1, 2, 2), [4, 4], None], ints(1, 1, 4, 4),
                "floating-point or u8")


#===--- flip, repeat ---------------------------------------------------------===#

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int16, torch.bool])
def test_flip(dtype):
    x = rnd(2, 3, 4).to(dtype) if dtype.is_floating_point else ints(2, 3, 4).to(dtype)
    check_op("flip", [x, [0, -1]], torch.flip(x, [0, -1]))


def test_flip_dims():
    x = rnd(2, 3, 4)
    for dims in ([0], [-1], [2, 1, 0], []):
        check_op("flip", [x, dims], torch.flip(x, dims))


def test_flip_strided_scalar_empty():
    x = rnd(4, 5)
    check_op("flip", [Transposed(x), [1]], torch.flip(x, [1]))
    check_op("flip", [Sliced(x), [0, 1]], torch.flip(x, [0, 1]))
    s = torch.tensor(2.5)
    check_op("flip", [s, [0]], torch.flip(s, [0]))
    e = rnd(0, 3)
    check_op("flip", [e, [0, 1]], torch.flip(e, [0, 1]))
    check_error("flip", [x, [0, 0]], x, "appears more than once")
    check_error("flip", [x, [2]], x, "out of range")


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.int32, torch.uint8, torch.bool])
def test_repeat(dtype):
    x = rnd(2, 3).to(dtype) if dtype.is_floating_point else ints(2, 3).to(dtype)
    check_op("repeat", [x, [2, 1, 2]], x.repeat(2, 1, 2))


def test_repeat_counts():
    x = rnd(2, 3)
    for reps in ([2, 3], [1, 1], [3, 0, 1], [2, 2, 1, 1]):
        check_op("repeat", [x, reps], x.repeat(reps))


def test_repeat_strided_scalar_errors():
    x = rnd(3, 4)
    check_op("repeat", [Transposed(x), [2, 1]], x.repeat(2, 1))
    check_op("repeat", [Sliced(x), [1, 2, 2]], x.repeat(1, 2, 2))
    s = torch.tensor(4.0)
    check_op("repeat", [s, [3]], s.repeat(3))
    check_op("repeat", [s, []], s.repeat([]))
    check_error("repeat", [x, [2]], x, "can not be smaller")
    check_error("repeat", [x, [2, -1]], x, "negative dimension")


#===--- _adaptive_avg_pool2d -------------------------------------------------===#

def test_adaptive_avg_pool2d_alias():
    x = rnd(2, 3, 7, 5)
    check_op("_adaptive_avg_pool2d", [x, [3, 2]], aten._adaptive_avg_pool2d(x, [3, 2]))
    check_op("_adaptive_avg_pool2d", [Transposed(x), [1, 1]], aten._adaptive_avg_pool2d(x, [1, 1]))


#===--- import ---------------------------------------------------------------===#

def test_import_interpolate_and_pads():
    """from_torch keeps the ops (no decomposition) and their None and float-list
    arguments."""
    import traceir
    import traceir_testing

    class M(torch.nn.Module):
        def forward(self, x):
            y = F.interpolate(x, scale_factor=1.5, mode="nearest")
            z = F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False)
            p = F.pad(x, (1, 2, 2, 1), mode="reflect") + F.pad(x, (1, 2, 2, 1), mode="replicate")
            q = F.pad(x, (1, -1), value=2.0)
            return (y.sum() + z.sum(), p.flip(-1), q.repeat(1, 2, 1, 1),
                    F.avg_pool2d(x, 3, 2, 1, ceil_mode=True))

    m, x = M(), rnd(1, 2, 5, 6)
    exe = traceir.compile(traceir.from_torch(m, (x,)), device=traceir_testing.DEVICE)
    got = exe(x)
    for g, w in zip(got, m(x)):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
