"""The optimized CPU kernel tier (Runtime/KernelTier.h) against the portable
one and against eager: every elementwise op it instantiates, at each
floating dtype, on contiguous, transposed, broadcast, scalar-operand and
zero-size inputs; the profile's record of which tier ran; results that do
not depend on the thread count; the tier and thread settings' errors."""
import os
import subprocess
import sys

import pytest
import torch

import bundle_record
import traceir
from traceir_testing import Fn

F = torch.nn.functional
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: dict(rtol=1e-12, atol=1e-12),
       torch.float16: dict(rtol=1e-3, atol=1e-5), torch.bfloat16: dict(rtol=1.6e-2, atol=1e-5)}
DTYPES = list(TOL)


UNARY = {
    "neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "exp": torch.exp,
    "log": lambda x: torch.log(x.abs() + 0.5), "sqrt": lambda x: torch.sqrt(x.abs()),
    "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1), "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "hardtanh": F.hardtanh, "silu": F.silu, "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid, "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "reciprocal": lambda x: torch.reciprocal(x.abs() + 0.5), "erf": torch.erf,
    "sin": torch.sin, "cos": torch.cos, "clamp": lambda x: torch.clamp(x, -0.5, 0.7),
    "clone": lambda x: x.clone(),
    "mul_number": lambda x: x * 2.5, "pow_number": lambda x: torch.pow(x, 2),
    # pow's exponents the tier rewrites (1, -1) and those it runs as pow.
    "pow_one": lambda x: torch.pow(x, 1), "pow_reciprocal": lambda x: torch.pow(x, -1),
    "pow_cube": lambda x: torch.pow(x, 3), "pow_half": lambda x: torch.pow(x.abs(), 0.5),
    "pow_fraction": lambda x: torch.pow(x.abs(), 2.5),
}
BINARY = {
    "add": lambda a, b: torch.add(a, b, alpha=0.5), "sub": torch.sub, "mul": torch.mul,
    "div": lambda a, b: a / (b.abs() + 0.5), "maximum": torch.maximum,
    "minimum": torch.minimum, "pow": lambda a, b: torch.pow(a.abs() + 0.5, b),
}


def values(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64) * 2
    return x.to(dtype)


def run_tiers(module, args):
    """The compiled graph and, at the optimized and at the portable tier,
    its results and the profile's ops as (name, tier) pairs."""
    compiled = traceir.compile(traceir.from_torch(module, args), "cpu")
    out = {}
    try:
        for tier in ("optimized", "portable"):
            traceir.set_kernel_tier(tier)
            with traceir.profile() as prof:
                got = compiled(*args)
            out[tier] = (got, [(e["name"], e["args"]["tier"])
                               for e in prof.trace()["traceEvents"] if e.get("cat") == "cpu_op"])
    finally:
        traceir.set_kernel_tier("optimized")
    return compiled, out


def run_both(fn, args):
    """TraceIR's results at the optimized and at the portable tier, and the
    ops' tiers (the profile's) in each."""
    _, out = run_tiers(Fn(fn), args)
    return {tier: (got, [t for _, t in ops]) for tier, (got, ops) in out.items()}


def check(fn, args, dtype, optimized=True):
    want = fn(*args)
    out = run_both(fn, args)
    (fast, fast_tiers), (slow, slow_tiers) = out["optimized"], out["portable"]
    assert fast.dtype == want.dtype and fast.shape == want.shape
    torch.testing.assert_close(fast, want, equal_nan=True, **TOL[dtype])
    torch.testing.assert_close(fast, slow, equal_nan=True, **TOL[dtype])
    assert set(slow_tiers) == {"portable"}
    # The op's own kernel took the optimized path (other ops of the graph,
    # views or non-elementwise ones, stay portable).
    assert ("optimized" in fast_tiers) == optimized, fast_tiers


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    fn = UNARY[name]
    check(fn, (values((37, 129), dtype),), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_layouts(name, dtype):
    fn = BINARY[name]
    a, b = values((48, 67), dtype, 1), values((48, 67), dtype, 2)
    check(fn, (a, b), dtype)                                  # contiguous
    check(fn, (a.t(), b.t()), dtype)                          # transposed: coalesced
    check(fn, (a, values((67,), dtype, 3)), dtype)            # a row broadcast
    check(fn, (a, values((48, 1), dtype, 4)), dtype)          # a column broadcast
    check(fn, (values((48, 1, 5), dtype), values((1, 67, 5), dtype, 5)), dtype)
    check(fn, (a[:, :66:3], b[:, 1::3]), dtype)               # strided rows


def test_strided_and_offset_views():
    x = values((6, 40, 40), torch.float32)
    check(lambda t: torch.relu(t[1:, 3:, ::2].permute(2, 0, 1)), (x,), torch.float32)
    check(lambda t: t.permute(2, 0, 1) + 1.0, (x,), torch.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_short_strided_runs(dtype):
    # ConvNeXt's layer scale: [C, 1, 1] times an NHWC result permuted to
    # NCHW, runs of H * W = 4 elements C apart (arithmetic: element by
    # element), and an op of libm's on the same runs (still in blocks).
    s, x = values((24, 1, 1), dtype, 1), values((1, 2, 2, 24), dtype, 2)
    check(lambda s, x: s * x.permute(0, 3, 1, 2), (s, x), dtype)
    check(lambda s, x: torch.add(x.permute(0, 3, 1, 2), s, alpha=0.5), (s, x), dtype)
    check(lambda x: torch.tanh(x.permute(0, 3, 1, 2)), (x,), dtype)
    check(lambda s, x: s * x.permute(0, 3, 1, 2), (s, values((0, 2, 2, 24), dtype)), dtype)


@pytest.mark.parametrize("dtype", DTYPES + [torch.int64, torch.int32, torch.int8, torch.bool])
def test_strided_copies(dtype):
    # contiguous() of transposed and permuted views: the optimized tier's
    # strided copy (the bits, any dtype), against the portable element loop.
    # The transposes and permutes copy in 32 x 32 tiles (partial ones at
    # 33 and 70), the unit-stride input dim next to the innermost or not.
    x = values((5, 33, 70), torch.float64).mul(7).to(dtype)
    for fn in (lambda t: t.transpose(1, 2).contiguous(),
               lambda t: t.permute(2, 0, 1).contiguous(),
               lambda t: t.permute(2, 1, 0).contiguous(),
               lambda t: t[:, 1::2, :60].contiguous()):
        out = run_both(fn, (x,))
        want = fn(x)
        assert torch.equal(out["optimized"][0], want)
        assert torch.equal(out["portable"][0], want)
    # Zero-size: nothing to tile.
    for shape in ((3, 0, 40), (3, 40, 0)):
        z = values(shape, torch.float64).to(dtype)
        out = run_both(lambda t: t.transpose(1, 2).contiguous(), (z,))
        assert out["optimized"][0].shape == (3, shape[2], shape[1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8])
def test_transposing_copy_over_threads(dtype):
    # 64 tiles, over two threads (a thread from 32 tiles of 32 x 32).
    x = values((4, 100, 100), torch.float64).mul(7).to(dtype)
    fn = lambda t: t.transpose(1, 2).contiguous()  # noqa: E731
    before = traceir.num_threads()
    try:
        traceir.set_num_threads(2)
        out = run_both(fn, (x,))
    finally:
        traceir.set_num_threads(before)
    assert torch.equal(out["optimized"][0], fn(x))


def test_pow_edge_values():
    # The rewritten exponents keep pow's answers at zeros, infinities and
    # NaN (for -1: 1 / -0.0 is -inf, as pow(-0.0, -1)).
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-30, -3.0, 7.5])
    for e in (2, 1, -1, 3, 0.5):
        check(lambda t: torch.pow(t, e), (x,), torch.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_keeps_nan_and_negative_zero(dtype):
    # As eager's: NaN passes, and so does -0.0 (its sign too), at both tiers,
    # in place and not, in a vector's body and in its tail.
    x = torch.tensor([-0.0, float("nan"), -1.0, 2.0, float("-inf"), 0.0] * 7, dtype=dtype)
    for fn in (torch.relu, lambda t: torch.relu_(t.clone())):
        want = fn(x)
        out = run_both(fn, (x,))
        for tier, (got, _) in out.items():
            torch.testing.assert_close(got, want, equal_nan=True, rtol=0, atol=0)
            number = ~want.isnan()  # a NaN's sign is not PyTorch's contract
            assert torch.equal(got.signbit()[number], want.signbit()[number]), tier


def test_zero_size_and_scalar():
    for shape in ((0,), (3, 0, 4), ()):
        x = values(shape, torch.float32)
        check(lambda t: torch.sigmoid(t) * 3, (x,), torch.float32)


def test_large_runs_threaded_and_deterministic():
    # Above the grain: the loop splits over threads; results equal at one
    # and two (chunks are independent elementwise work).
    x, y = values((300, 517), torch.float32), values((517,), torch.float32, 1)
    fn = lambda a, b: F.gelu(a) * b + a  # noqa: E731
    compiled = traceir.compile(traceir.from_torch(Fn(fn), (x, y)), "cpu")
    before = traceir.num_threads()
    try:
        traceir.set_num_threads(1)
        one = compiled(x, y)
        traceir.set_num_threads(2)
        assert traceir.num_threads() == 2
        two = compiled(x, y)
    finally:
        traceir.set_num_threads(before)
    assert torch.equal(one, two)
    torch.testing.assert_close(one, fn(x, y), **TOL[torch.float32])


@pytest.mark.parametrize("fn", [lambda a, c, b: a * c + b, lambda a, c, b: torch.tanh(a - c) + b],
                         ids=["arithmetic", "libm"])
def test_rows_over_threads(fn):
    # The row loops take many rows of the innermost dim at a time: at two
    # threads each chunk starts or ends inside a row (41 x 33 x 131 floats
    # split in two) and its rows wrap over both outer dims; c, broadcast
    # along the rows (inner stride 0), is reloaded for each row, b
    # (broadcast along the outer dims) read again for each.
    a = values((41, 33, 131), torch.float32)
    c, b = values((33, 1), torch.float32, 1), values((131,), torch.float32, 2)
    compiled = traceir.compile(traceir.from_torch(Fn(fn), (a, c, b)), "cpu")
    before = traceir.num_threads()
    try:
        got = []
        for threads in (1, 2):
            traceir.set_num_threads(threads)
            got.append(compiled(a, c, b))
    finally:
        traceir.set_num_threads(before)
    assert torch.equal(got[0], got[1])
    torch.testing.assert_close(got[0], fn(a, c, b), **TOL[torch.float32])


def test_deterministic_mode_results_do_not_depend_on_the_thread_count():
    # The libraries' own threading rounds differently at one thread and at
    # two (OpenBLAS's sgemm, oneDNN's convolutions); in deterministic mode
    # every product is split by its shape alone. Sizes above the splits: a
    # product of 2 x 70 = 140 rows (blocks of 128), a convolution of 38M
    # multiply-adds (oneDNN threads those of 4M and more).
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 256, batch_first=True).eval()
    conv = torch.nn.Sequential(torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.Conv2d(32, 8, 3, padding=1)).eval()
    lstm = torch.nn.LSTM(48, 96, num_layers=2).eval()
    cases = [(layer, (torch.randn(2, 70, 64),)), (conv, (torch.randn(2, 16, 64, 64),)),
             (Fn(lambda x: lstm(x)[0]), (torch.randn(150, 2, 48),))]
    before = traceir.num_threads()
    assert traceir.deterministic() is False
    try:
        traceir.set_deterministic(True)
        for module, args in cases:
            compiled = traceir.compile(traceir.from_torch(module, args), "cpu")
            traceir.set_num_threads(1)
            one = compiled(*args)
            traceir.set_num_threads(2)
            two = compiled(*args)
            assert torch.equal(one, two), type(module).__name__
            with torch.no_grad():
                torch.testing.assert_close(one, module(*args), rtol=1e-4, atol=1e-4)
    finally:
        traceir.set_deterministic(False)
        traceir.set_num_threads(before)
    with pytest.raises(TypeError, match="set_deterministic takes a bool"):
        traceir.set_deterministic(1)


def test_uncovered_launches_stay_portable():
    # Integers, mixed dtypes and ops the tier does not instantiate run on
    # the portable kernels, with the same results as before.
    i = torch.arange(12).reshape(3, 4)
    check(lambda a: a * 3 + 1, (i,), torch.float64, optimized=False)
    h, f = values((3, 4), torch.float16), values((3, 4), torch.float32)
    check(lambda a, b: a + b, (h, f), torch.float32, optimized=False)
    check(torch.atan, (f,), torch.float32, optimized=False)


def test_tier_and_thread_errors():
    with pytest.raises(traceir.TraceIRError, match="kernel tier must be 'optimized' or "
                                                   "'portable', got 'fast'"):
        traceir.set_kernel_tier("fast")
    with pytest.raises(TypeError, match="set_kernel_tier"):
        traceir.set_kernel_tier(1)
    assert traceir.kernel_tier() == "optimized"
    with pytest.raises(TypeError, match="set_num_threads takes an int >= 1"):
        traceir.set_num_threads(0)


def current_variant():
    """The CPU variant the optimized loops run as here (the profile says)."""
    x = values((64, 64), torch.float32)
    compiled = traceir.compile(traceir.from_torch(Fn(torch.relu), (x,)), "cpu")
    with traceir.profile() as prof:
        compiled(x)
    (op,) = [e for e in prof.trace()["traceEvents"] if e.get("cat") == "cpu_op"]
    assert op["args"]["tier"] == "optimized"
    return op["args"]["cpu_capability"]


def test_profile_names_the_cpu_variant():
    assert current_variant() in ("default", "avx2", "avx512")


# Narrower variants than the one this CPU gets, which it also runs: each
# below the current one (avx512 > avx2 > default).
NARROWER = {"avx512": ("avx2", "default"), "avx2": ("default",), "default": ()}


@pytest.mark.parametrize("variant", ["default", "avx2"])
def test_narrower_variants_too(variant):
    # The tests above ran at the variant this CPU gets (avx512 where it has
    # AVX-512 F/BW/VL/DQ, else avx2 where it has AVX2 and FMA); this runs
    # them again at each narrower one the CPU also has, as CI runs every
    # variant the machine supports.
    here = current_variant()
    if variant not in NARROWER[here]:
        pytest.skip(f"this CPU runs {here}: {variant} is not a narrower variant it has")
    env = dict(os.environ, TRACEIR_CPU_CAPABILITY=variant)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", __file__, "-k", "not narrower_variants_too"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


# Products: sums of K terms, whose rounding depends on the order (BLAS,
# the tier's dot products); tolerances as for K float terms of size ~2.
MM_TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-10, atol=1e-10),
          torch.float16: dict(rtol=2e-3, atol=2e-3)}


def check_op(fn, args, op, optimized, tol):
    """fn at both tiers against eager and each other, and `op`'s tier."""
    want = fn(*args)
    _, out = run_tiers(Fn(fn), args)
    (fast, fast_ops), (slow, slow_ops) = out["optimized"], out["portable"]
    assert fast.shape == want.shape and fast.dtype == want.dtype
    torch.testing.assert_close(fast, want, **tol)
    torch.testing.assert_close(fast, slow, **tol)
    assert {t for _, t in slow_ops} == {"portable"}
    tiers = {t for name, t in fast_ops if name == op}
    assert tiers == {"optimized" if optimized else "portable"}, fast_ops
    return fast


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 6, 8])
def test_linear_few_rows(rows, dtype):
    # Up to eight rows: the tier's dot products (Linear.cpp), rows in
    # groups of four and a rest (one row four weight rows at a time, two
    # rows two), N a multiple of those and not, K a multiple of the lanes
    # and not, N past one tile of weight rows (64 rows of K = 64 floats).
    for K, N in ((64, 33), (70, 129), (3, 5)):
        x, w = values((rows, K), dtype), values((N, K), dtype, 1) * 0.2
        b = values((N,), dtype, 2)
        check_op(lambda x, w, b: F.linear(x, w, b), (x, w, b), "linear", True, MM_TOL[dtype])
        check_op(lambda x, w: F.linear(x, w), (x, w), "linear", True, MM_TOL[dtype])


def test_linear_few_rows_layouts():
    tol = MM_TOL[torch.float32]
    w, b = values((48, 96), torch.float32, 1) * 0.2, values((48,), torch.float32, 2)
    lin = lambda x, w, b: F.linear(x, w, b)  # noqa: E731
    # A batch that folds into rows: 4-D (ConvNeXt's 2x2 stage), 1-D, and
    # a slice of the last dim (rows a stride apart).
    check_op(lin, (values((1, 2, 2, 96), torch.float32), w, b), "linear", True, tol)
    check_op(lin, (values((96,), torch.float32), w, b), "linear", True, tol)
    check_op(lambda x, w, b: F.linear(x[:, :96], w, b), (values((5, 100), torch.float32), w, b),
             "linear", True, tol)
    # A weight broadcast from one row is still read row by row.
    check_op(lambda x, w, b: F.linear(x, w.expand(48, 96), b), (values((3, 96), torch.float32), w[:1], b),
             "linear", True, tol)
    # Not covered: more rows, rows that do not fold (a permuted batch),
    # strided elements, a transposed weight, f16, zero-size.
    check_op(lin, (values((9, 96), torch.float32), w, b), "linear", False, tol)
    check_op(lambda x, w, b: F.linear(x.permute(1, 0, 2), w, b), (values((2, 3, 96), torch.float32), w, b),
             "linear", False, tol)
    check_op(lambda x, w, b: F.linear(x[:, ::2], w, b), (values((3, 192), torch.float32), w, b),
             "linear", False, tol)
    check_op(lambda x, w, b: F.linear(x, w.t(), b), (values((3, 96), torch.float32), w.t().contiguous(), b),
             "linear", False, tol)
    h = values((3, 96), torch.float16)
    check_op(lin, (h, w.half(), b.half()), "linear", False, MM_TOL[torch.float16])
    check_op(lin, (values((0, 96), torch.float32), w, b), "linear", False, tol)


def test_linear_few_rows_threads_bit_equal():
    # Above the grain the output columns split over threads; each element
    # is one dot product in a fixed order, so one and two threads agree.
    x, w = values((3, 512), torch.float32), values((2048, 512), torch.float32, 1)
    b = values((2048,), torch.float32, 2)
    fn = lambda x, w, b: F.linear(x, w, b)  # noqa: E731
    compiled = traceir.compile(traceir.from_torch(Fn(fn), (x, w, b)), "cpu")
    before = traceir.num_threads()
    try:
        traceir.set_num_threads(1)
        one = compiled(x, w, b)
        traceir.set_num_threads(2)
        two = compiled(x, w, b)
    finally:
        traceir.set_num_threads(before)
    assert torch.equal(one, two)
    torch.testing.assert_close(one, fn(x, w, b), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_products_split_over_threads(dtype):
    # Above 1M multiply-adds a product splits over the threads, the BLAS on
    # one thread in each part (Gemm/BLAS.cpp): by rows of the result where
    # each thread gets 256 rows or more (or the result is narrow), else by
    # columns in multiples of 16; each operand either way round in memory.
    # (M, K, N, A stored transposed, B stored transposed):
    cases = [(600, 64, 96, False, True),   # rows, A @ B^T (linear's)
             (600, 64, 96, True, False),   # rows, A^T @ B
             (8, 512, 1000, False, True),  # columns 0-495 and 496-999
             (8, 512, 1000, True, False),  # columns, A^T @ B
             (40, 2048, 77, False, True),  # columns 0-31 and 32-76
             (300, 128, 40, False, True)]  # rows: too few columns to split
    before = traceir.num_threads()
    try:
        for M, K, N, ta, tb in cases:
            a = values((K, M) if ta else (M, K), dtype)
            b = values((N, K) if tb else (K, N), dtype, 1)

            def fn(a, b, ta=ta, tb=tb):
                return (a.t() if ta else a) @ (b.t() if tb else b)
            # Any order of summing K products is within K * eps of
            # sum |a_i b_i| of the exact dot product (Higham's bound, with
            # a factor two to spare), whatever the BLAS or CPU; a part of
            # the result computed from the wrong rows or columns is not.
            exact = fn(a.double(), b.double())
            bound = K * torch.finfo(dtype).eps * fn(a.double().abs(), b.double().abs())
            compiled = traceir.compile(traceir.from_torch(Fn(fn), (a, b)), "cpu")
            # A GPU bundle replays the call on its machine's BLAS and thread
            # count: its reference is the exact product, within the bound.
            bundle_record.expectation = ([exact.to(dtype)], 0.0, float(bound.max()))
            for threads in (1, 2):
                traceir.set_num_threads(threads)
                got = compiled(a, b)
                assert got.shape == exact.shape and got.dtype == dtype
                over = (got.double() - exact).abs() > bound
                assert not over.any(), (f"{(M, K, N, ta, tb)} at {threads} threads: "
                                        f"{int(over.sum())} elements past the bound, first at "
                                        f"{over.nonzero()[0].tolist()}")
    finally:
        bundle_record.expectation = None
        traceir.set_num_threads(before)


@pytest.mark.parametrize("wdtype", [torch.float32, torch.float64, torch.float16, torch.int64,
                                    torch.int8, torch.bool])
@pytest.mark.parametrize("idtype", [torch.int64, torch.int32])
def test_embedding_rows(idtype, wdtype):
    # One memcpy a row (Embedding.cpp), any dtype by its size: the exact
    # rows, as eager's and the portable kernel's.
    w = values((50, 24), torch.float64).mul(9).to(wdtype)
    idx = torch.randint(0, 50, (3, 7), generator=torch.Generator().manual_seed(0)).to(idtype)
    _, out = run_tiers(Fn(F.embedding), (idx, w))
    for tier, (got, ops) in out.items():
        assert torch.equal(got, F.embedding(idx, w)), tier
        assert dict(ops)["embedding"] == tier


def test_embedding_layouts():
    w = values((30, 16), torch.float32)
    idx = torch.tensor([[3, 0, 29], [7, 7, 1]])
    cases = [
        (lambda i, w: F.embedding(i % 15, w[::2]), True),   # rows a stride apart
        (lambda i, w: F.embedding(i[:, ::2], w), False),    # strided indices
        (lambda i, w: F.embedding(i % 16, w.t()), False),   # a transposed table
        (lambda i, w: F.embedding(i[:0], w), True),         # no indices
        (lambda i, w: F.embedding(i, w[:, :0]), True),      # rows of no elements
        (lambda i, w: F.embedding(i % 15, w, padding_idx=2), True),
    ]
    for fn, optimized in cases:
        _, out = run_tiers(Fn(fn), (idx, w))
        want = fn(idx, w)
        for tier, (got, ops) in out.items():
            assert got.shape == want.shape and torch.equal(got, want), tier
        assert dict(out["optimized"][1])["embedding"] == ("optimized" if optimized else "portable")


@pytest.mark.parametrize("bad", [30, -1, 1 << 40])
def test_embedding_index_out_of_range(bad):
    # Both tiers name the first bad index in order, the portable kernel's
    # message (NNArgs.cpp's failEmbeddingIndex).
    w = values((30, 8), torch.float32)
    idx = torch.tensor([1, 2, 3, 4])
    compiled = traceir.compile(traceir.from_torch(Fn(F.embedding), (idx, w)), "cpu")
    bad_idx = torch.tensor([1, bad, 31, 2])
    try:
        for tier in ("optimized", "portable"):
            traceir.set_kernel_tier(tier)
            with pytest.raises(traceir.TraceIRError,
                               match=f"index {bad} is out of range for 30 embeddings"):
                compiled(bad_idx, w)
    finally:
        traceir.set_kernel_tier("optimized")


CAT_CASES = [
    # (shapes, dim, optimized): blocks of any size per row of the result.
    ([(2, 3, 4), (2, 5, 4), (2, 1, 4)], 1, True),
    ([(3, 4), (1, 4)], 0, True),                  # one row: each input whole
    ([(2, 3, 4), (2, 3, 2)], -1, True),           # the last dim
    ([(2, 0, 4), (2, 3, 4), (2, 0, 4)], 1, True),  # inputs of no elements
    ([(0, 3), (0, 2)], 1, True),                  # a result of no elements
    ([(4,), (0,), (3,)], 0, True),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8,
                                   torch.bool])
def test_cat_contiguous(dtype):
    # Cat.cpp: the result written front to back from each input's block,
    # the exact bytes, as eager's and the portable kernel's.
    for shapes, dim, optimized in CAT_CASES:
        args = tuple(values(s, torch.float64, seed=k).mul(9).to(dtype)
                     for k, s in enumerate(shapes))
        fn = lambda *t, dim=dim: torch.cat(t, dim)  # noqa: E731
        _, out = run_tiers(Fn(fn), args)
        want = fn(*args)
        for tier, (got, ops) in out.items():
            assert got.dtype == want.dtype and torch.equal(got, want), (shapes, tier)
        assert dict(out["optimized"][1])["cat"] == "optimized", shapes


def test_cat_layouts_it_leaves_to_the_portable_kernel():
    a, b = values((3, 4), torch.float32), values((3, 4), torch.float32, seed=1)
    cases = [
        lambda a, b: torch.cat([a.t(), b.t()], 1),                # transposed inputs
        lambda a, b: torch.cat([a, b.double()], 0),               # promoted: f32 and f64
        lambda a, b: torch.cat([a, torch.empty(0), b], 0),        # a legacy empty [0]
    ]
    for fn in cases:
        _, out = run_tiers(Fn(fn), (a, b))
        want = fn(a, b)
        for tier, (got, ops) in out.items():
            assert got.dtype == want.dtype and torch.equal(got, want), tier
        assert dict(out["optimized"][1])["cat"] == "portable"


@pytest.mark.parametrize("threads", [1, 2])
def test_cat_split_over_threads(threads):
    # 1.2 MB of result: two threads split it by bytes, the split falling
    # inside an input's block of a row.
    args = (values((5, 7, 2000), torch.float32), values((5, 13, 2000), torch.float32, seed=1),
            values((5, 11, 2000), torch.float32, seed=2))
    before = traceir.num_threads()
    traceir.set_num_threads(threads)
    try:
        _, out = run_tiers(Fn(lambda *t: torch.cat(t, 1)), args)
    finally:
        traceir.set_num_threads(before)
    got, ops = out["optimized"]
    assert torch.equal(got, torch.cat(args, 1)) and dict(ops)["cat"] == "optimized"


# Reductions (Norm.cpp's ReduceRows): sums in float lanes, blocks of 4096
# added in double, against eager's float cascade and the portable double
# sum; extrema exactly.
REDUCE_TOL = {torch.float32: dict(rtol=1e-5, atol=1e-4), torch.float64: dict(rtol=1e-12, atol=1e-12),
              torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=8e-3, atol=8e-3)}
REDUCTIONS = {
    "sum": lambda x, d, k: torch.sum(x, d, keepdim=k),
    "mean": lambda x, d, k: torch.mean(x, d, keepdim=k),
    "amax": lambda x, d, k: torch.amax(x, d, keepdim=k),
    "amin": lambda x, d, k: torch.amin(x, d, keepdim=k),
}
# (shape, dims): rows (inner 1), columns (inner > 1, past one block of 256),
# several adjacent dims, size-1 dims among them, every dim, long rows of
# several 4096-element blocks (few: split over the threads by block).
REDUCE_CASES = [((37, 129), -1), ((37, 129), 0), ((5, 300, 7), 1), ((4, 6, 5, 3), (1, 2)),
                ((4, 1, 6, 1, 5), (2, 4)), ((3, 4, 5), (0, 1, 2)), ((2, 9000), 1),
                ((3, 5000, 2), 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, dtype):
    red = REDUCTIONS[name]
    tol = dict(rtol=0, atol=0) if name in ("amax", "amin") else REDUCE_TOL[dtype]
    for i, (shape, dims) in enumerate(REDUCE_CASES):
        x = values(shape, dtype, i)
        for keep in (False, True):
            check_op(lambda t: red(t, dims, keep), (x,), name, True, tol)


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_reduction_extrema_propagate_nan(name):
    x = values((6, 40, 300), torch.float32)
    x[2, 5, 7] = float("nan")   # a row's
    x[4, 39, 299] = float("nan")  # in the last lanes' tail
    for dims in (-1, 1, (1, 2)):
        got = traceir.compile(traceir.from_torch(Fn(lambda t: REDUCTIONS[name](t, dims, False)),
                                                 (x,)), "cpu")(x)
        torch.testing.assert_close(got, REDUCTIONS[name](x, dims, False), equal_nan=True,
                                   rtol=0, atol=0)


def test_reductions_left_to_the_portable_kernel():
    x = values((6, 7, 8), torch.float32)
    # Two runs of reduced dims, a strided input, a result of another dtype,
    # an integer input, an empty reduced dim.
    check_op(lambda t: t.sum((0, 2)), (x,), "sum", False, REDUCE_TOL[torch.float32])
    check_op(lambda t: t.transpose(0, 2).sum(1), (x,), "sum", False, REDUCE_TOL[torch.float32])
    check_op(lambda t: t.sum(1, dtype=torch.float64), (x,), "sum", False,
             REDUCE_TOL[torch.float64])
    i = torch.arange(24).reshape(4, 6)
    check_op(lambda t: t.sum(1), (i,), "sum", False, dict(rtol=0, atol=0))
    check_op(lambda t: t.mean(1), (values((3, 0, 4), torch.float32),), "mean", False,
             dict(REDUCE_TOL[torch.float32], equal_nan=True))  # 0 / 0


@pytest.mark.parametrize("shape,dims", [((2, 40000), 1), ((400, 300), -1), ((3, 700, 300), 1)])
def test_reductions_do_not_depend_on_the_thread_count(shape, dims):
    # Above the grain: rows, blocks of long rows (with partials) or column
    # blocks split over the threads; each output's sum in a fixed order.
    # Shifted both ways too: every value of a sign (amax of all-negative
    # blocks is no 0 a combination could start from).
    x = values(shape, torch.float32)
    before = traceir.num_threads()
    try:
        for name, red in REDUCTIONS.items():
            compiled = traceir.compile(traceir.from_torch(Fn(lambda t: red(t, dims, False)), (x,)),
                                       "cpu")
            for v in (x, x - 10, x + 10):
                got = []
                for threads in (1, 2):
                    traceir.set_num_threads(threads)
                    got.append(compiled(v))
                assert torch.equal(got[0], got[1]), name
                torch.testing.assert_close(got[0], red(v, dims, False),
                                           **REDUCE_TOL[torch.float32])
    finally:
        traceir.set_num_threads(before)


def dropout_graph(op, shape, dtype, view=False):
    """A graph of dropout (or native_dropout) at p = 0.3 in training, of
    the input or, with `view`, of its transpose (`t`, a strided view)."""
    t = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
         torch.bfloat16: "bf16"}[dtype]
    dims = "x".join(map(str, shape))
    ty, mask = f"tensor<{dims}x{t}>", f"tensor<{dims}xi1>"
    res = f"({ty}, {mask})" if op == "native_dropout" else ty
    outs, rets = ("%a, %m", f"{ty}, {mask}") if op == "native_dropout" else ("%a", ty)
    src = ty
    if view:
        src = f"tensor<{'x'.join(map(str, shape[::-1]))}x{t}>"
    lines = [f'trace.graph @g(%x: {src} {{trace.input = "x"}}) -> {res} {{']
    arg = "%x"
    if view:
        lines.append(f'  %v = pyop "t"(%x) : ({src}) -> {ty}')
        arg = "%v"
    lines += [f'  {outs} = pyop "{op}"({arg}, 0.3, True) : ({ty}) -> {res}',
              f"  ret {outs} : {rets}", "}"]
    compiled = traceir.compile(traceir.Module.parse("\n".join(lines) + "\n"), "cpu")
    compiled.seed = 5
    return compiled


def run_dropout(compiled, x, tier):
    """Results (a tuple) and the dropout op's tier in one run at `tier`."""
    traceir.set_kernel_tier(tier)
    try:
        with traceir.profile() as prof:
            got = compiled(x)
    finally:
        traceir.set_kernel_tier("optimized")
    tiers = {e["args"]["tier"] for e in prof.trace()["traceEvents"]
             if e.get("cat") == "cpu_op" and "dropout" in e["name"]}
    return (got if isinstance(got, tuple) else (got,)), tiers


def same(a, b):
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["dropout", "native_dropout"])
def test_dropout_dense_loop_draws_as_the_portable_one(op, dtype):
    # A contiguous input takes the optimized loop (NN.cpp's dropoutDense):
    # the portable loop's draws, values and stores, so the same results for
    # a seed at both tiers; a transposed view takes the portable loop at the
    # optimized tier too, with the same draws in the view's element order.
    # Against PyTorch: what is kept is x / (1 - p), about 30% is dropped.
    x = values((48, 67), dtype).abs() + 1
    x[3, 5] = float("nan")
    compiled = dropout_graph(op, (48, 67), dtype)
    fast, tiers = run_dropout(compiled, x, "optimized")
    assert tiers == {"optimized"}, tiers
    slow, tiers = run_dropout(compiled, x, "portable")
    assert tiers == {"portable"}, tiers
    assert all(same(a, b) for a, b in zip(fast, slow))
    on_view, tiers = run_dropout(dropout_graph(op, (48, 67), dtype, view=True),
                                 x.t().contiguous(), "optimized")
    assert tiers == {"portable"}, tiers
    assert all(same(a, b) for a, b in zip(fast, on_view))
    out = fast[0]
    kept = fast[1] if op == "native_dropout" else out != 0
    assert 0.2 < 1 - kept.float().mean().item() < 0.4
    finite = kept & ~x.isnan()
    torch.testing.assert_close(out[finite], x[finite] / (1 - 0.3), **TOL[dtype])
    # native_dropout multiplies as ATen's (a NaN stays NaN); dropout stores 0.
    assert out[3, 5].isnan().item() == (op == "native_dropout" or kept[3, 5].item())
    assert (out[~kept & ~x.isnan()] == 0).all()


@pytest.mark.parametrize("op", ["dropout", "native_dropout"])
def test_dropout_of_nothing(op):
    compiled = dropout_graph(op, (0, 5), torch.float32)
    got, tiers = run_dropout(compiled, torch.ones(0, 5), "optimized")
    assert got[0].shape == (0, 5) and tiers == {"optimized"}
