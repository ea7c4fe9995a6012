"""masked_scatter against torch.ops.aten, and randperm by distribution (it
is random: a permutation, uniform positions, seeded by the run), through
trace-run on each device (the `device` fixture of conftest.py: the cuda
cases skip with one line where there is no GPU)."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traceir_testing import (RunError, Sliced, Transposed, check_op,  # noqa: E402
                             op_graph, run_graph)

import traceir  # noqa: E402

pytestmark = pytest.mark.usefixtures("device")

A = torch.ops.aten
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]


def gen(seed):
    return torch.Generator().manual_seed(seed)


def unwrap(a):
    return a.tensor if isinstance(a, (Transposed, Sliced)) else a


def values(shape, dtype, seed):
    x = torch.randn(shape, generator=gen(seed)) * 50
    return x > 0 if dtype == torch.bool else x.to(dtype)


def mask(shape, seed, p=0.5):
    return torch.rand(shape, generator=gen(seed)) < p


def check_masked_scatter(self, m, src):
    want = A.masked_scatter(unwrap(self), unwrap(m), unwrap(src))
    check_op("masked_scatter", [self, m, src], want)


def expect_error(op, args, results, match, seed=0):
    text, inputs = op_graph(op, args, results)
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs, seed=seed)


#===--- masked_scatter -------------------------------------------------------===#

@pytest.mark.parametrize("self_shape,mask_shape", [
    ((7,), (7,)), ((3, 4), (3, 4)), ((2, 3, 4), (2, 3, 4)),
    ((3, 4), (4,)),        # the mask broadcasts to self
    ((4,), (3, 4)),        # self broadcasts to the mask: the result is [3, 4]
    ((2, 1, 5), (3, 1)),   # both broadcast
    ((), ()), ((0, 3), (0, 3)),
    ((300, 7), (300, 7)),  # more than one chunk of the CUDA scan
])
def test_masked_scatter_shapes(self_shape, mask_shape):
    self = values(self_shape, torch.float32, 1)
    m = mask(mask_shape, 2)
    n = int(torch.broadcast_tensors(self, m)[1].sum())
    check_masked_scatter(self, m, values((n + 3,), torch.float32, 3))  # extra left unread


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_masked_scatter_dtypes(dtype):
    check_masked_scatter(values((5, 6), dtype, 4), mask((5, 6), 5),
                         values((6, 5), dtype, 6))


def test_masked_scatter_strided_and_extremes():
    self, src = values((6, 5), torch.float64, 7), values((5, 6), torch.float64, 8)
    # Non-contiguous self, mask and source (source read row-major over its
    # own shape, whatever its strides).
    check_masked_scatter(Transposed(self), Transposed(mask((6, 5), 9)), Transposed(src))
    check_masked_scatter(Sliced(self), mask((6, 5), 10), Sliced(src))
    # All True takes source's first elements in order; all False is self.
    check_masked_scatter(self, torch.ones(6, 5, dtype=torch.bool), src)
    check_masked_scatter(self, torch.zeros(6, 5, dtype=torch.bool), src[:0])
    # A 0-d mask covers the whole result.
    check_masked_scatter(self, torch.tensor(True), values((40,), torch.float64, 11))


def test_masked_scatter_source_too_short():
    # Four Trues, three source elements: a run-time error naming the op,
    # before anything reads past source.
    self, m = torch.zeros(2, 3), torch.tensor([[True, False, True], [True, True, False]])
    want = torch.zeros(2, 3)
    expect_error("masked_scatter", [self, m, torch.ones(3)], [want],
                 r"masked_scatter.*source has 3 elements, fewer than the mask's 4 True")
    expect_error("masked_scatter", [torch.zeros(300, 7), torch.ones(300, 7, dtype=torch.bool),
                                    torch.ones(2099)], [torch.zeros(300, 7)],
                 "source has 2099 elements, fewer than the mask's 2100")


def test_masked_scatter_bad_arguments():
    self, want = torch.zeros(2, 3), torch.zeros(2, 3)
    expect_error("masked_scatter", [self, torch.ones(2, 3, dtype=torch.uint8), torch.ones(6)],
                 [want], "mask must be a bool tensor")
    expect_error("masked_scatter", [self, torch.ones(2, 3, dtype=torch.bool),
                                    torch.ones(6, dtype=torch.float64)],
                 [want], "source must have self's dtype")
    expect_error("masked_scatter", [self, torch.ones(4, dtype=torch.bool), torch.ones(6)],
                 [want], "cannot be broadcast")


class MaskedScatter(torch.nn.Module):
    def forward(self, x, src):
        return x.masked_scatter(x > 0, src * 2)


def test_masked_scatter_from_torch(device):
    x, src = torch.randn(4, 5, generator=gen(12)), torch.randn(20, generator=gen(13))
    m = traceir.from_torch(MaskedScatter(), (x, src))
    assert "masked_scatter" in {n.target for n in m.graphs[0].nodes if n.op == "pyop"}
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device=device)
    torch.testing.assert_close(exe(x, src), MaskedScatter()(x, src))


#===--- randperm -------------------------------------------------------------===#

def randperms(n, count, dtype=None, seed=0):
    """`count` calls of randperm(n, dtype) in one graph (each draws anew)."""
    ty = op_graph("randperm", [n], [torch.zeros(n, dtype=dtype or torch.int64)])[0]
    res = ty[ty.index("-> (") + 4:ty.index(") {")]
    arg = f", \"{dtype}\"" if dtype else ""
    body = [f"  %r{i} = pyop \"randperm\"({n}{arg}) : () -> {res}" for i in range(count)]
    text = (f"trace.graph @g() -> ({', '.join([res] * count)}) {{\n" + "\n".join(body) +
            f"\n  ret {', '.join(f'%r{i}' for i in range(count))} : "
            f"{', '.join([res] * count)}\n}}\n")
    outs, _ = run_graph(text, seed=seed)
    return outs


def test_randperm_is_a_uniform_permutation():
    n, draws = 6, 600
    perms = torch.stack(randperms(n, draws, seed=1))
    assert perms.dtype == torch.int64 and perms.shape == (draws, n)
    assert torch.equal(perms.sort(dim=1).values, torch.arange(n).expand(draws, n))
    # How often each value lands at each position: uniform, 100 a cell.
    # Pearson's statistic has about (n - 1)^2 = 25 degrees of freedom; 60 is
    # beyond its 99.99th percentile.
    counts = torch.zeros(n, n)
    for pos in range(n):
        counts[pos] = torch.bincount(perms[:, pos], minlength=n).float()
    expected = draws / n
    chi2 = ((counts - expected) ** 2 / expected).sum().item()
    assert chi2 < 60, (chi2, counts)
    # Two calls in one run differ (nothing CSE'd or reseeded per call).
    # (600 draws of 720 permutations: about 407 distinct ones expected.)
    assert len({tuple(p.tolist()) for p in perms}) > 350


def test_randperm_seeded():
    a, b, c = (randperms(50, 1, seed=s)[0] for s in (3, 3, 4))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(a.sort().values, torch.arange(50))


@pytest.mark.parametrize("dtype,n", [
    (torch.uint8, 256), (torch.int8, 128), (torch.int16, 1000), (torch.int32, 1000),
    (torch.int64, 1000), (torch.float16, 2049), (torch.bfloat16, 257),
    (torch.float32, 1000), (torch.float64, 1000)],
    ids=lambda v: str(v).removeprefix("torch."))
def test_randperm_dtypes(dtype, n):
    (p,) = randperms(n, 1, dtype, seed=5)
    assert p.dtype == dtype and p.shape == (n,)
    # Every value 0..n-1 once, exactly representable (the range check's
    # largest n for the narrow dtypes).
    assert torch.equal(p.double().sort().values, torch.arange(n, dtype=torch.float64))


def test_randperm_empty_and_one():
    assert randperms(0, 1)[0].shape == (0,)
    assert torch.equal(randperms(1, 1)[0], torch.zeros(1, dtype=torch.int64))


@pytest.mark.parametrize("dtype,n", [
    (torch.uint8, 257), (torch.int8, 129), (torch.int16, 32769), (torch.float16, 2050),
    (torch.bfloat16, 258)], ids=lambda v: str(v).removeprefix("torch."))
def test_randperm_range_check(dtype, n):
    expect_error("randperm", [n, str(dtype)], [torch.zeros(n, dtype=dtype)],
                 f"n = {n} is too large for dtype {str(dtype).removeprefix('torch.')}")


def test_randperm_bad_arguments():
    expect_error("randperm", [3, "torch.bool"], [torch.zeros(3, dtype=torch.bool)],
                 "randperm has no bool kernel")
    expect_error("randperm", [-1], [torch.zeros(0, dtype=torch.int64)], "must be non-negative")
    expect_error("randperm", [4], [torch.zeros(5, dtype=torch.int64)], "randperm")


class Shuffle(torch.nn.Module):
    def forward(self, x):
        return x[torch.randperm(x.shape[0])]


def test_randperm_from_torch(device):
    x = torch.arange(24.).reshape(8, 3)
    m = traceir.from_torch(Shuffle(), (x,))
    assert "randperm" in {n.target for n in m.graphs[0].nodes if n.op == "pyop"}
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device=device)
    got = exe(x)
    # The rows of x, shuffled.
    order = got[:, 0].argsort()
    assert torch.equal(got[order], x)


#===--- round(decimals=) and the CPU flash attention (the OpInfo gaps) -----===#

ROUND_VALUES = [0.125, 0.375, 2.5, -2.5, 0.5, 1.5, 1234.5678, -0.0015, 1e-5, 3.14159265,
                65000.0, 1e30, float("inf"), float("nan"), 0.0, -7.25]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16],
                         ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("decimals", [0, 1, 2, 3, -1, -3, 8])
def test_round_decimals(dtype, decimals):
    # ATen's round.decimals: x * 10^d rounded half to even, then / 10^d (x /
    # 10^-d, then * 10^-d, for d < 0), in float below float64: to the bit.
    x = torch.tensor(ROUND_VALUES + (torch.randn(64, generator=gen(14)) * 100).tolist())
    x = x.to(dtype)
    want = torch.round(x, decimals=decimals)
    got = check_op("round", [x, decimals], want, rtol=0, atol=0)[0]
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(torch.nan_to_num(got), torch.nan_to_num(want))


def test_round_decimals_int_is_an_error():
    x = torch.arange(4)
    expect_error("round", [x, 2], [x], "decimals=2 takes floating-point tensors")


class Round(torch.nn.Module):
    def forward(self, x):
        return torch.round(x, decimals=2) + torch.round(x, decimals=-1)


def test_round_decimals_from_torch(device):
    x = torch.randn(5, 7, generator=gen(15)) * 300
    m = traceir.from_torch(Round(), (x,))
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device=device)
    torch.testing.assert_close(exe(x), Round()(x), rtol=0, atol=0)


def flash_args(N, H, L, S, E, Ev, dtype, seed):
    g = gen(seed)
    return (torch.randn(N, H, L, E, generator=g, dtype=dtype),
            torch.randn(N, H, S, E, generator=g, dtype=dtype),
            torch.randn(N, H, S, Ev, generator=g, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64],
                         ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("causal,masked,scale", [(False, False, None), (True, False, None),
                                                 (False, True, None), (False, False, 0.3)])
def test_flash_attention_for_cpu(dtype, causal, masked, scale):
    # Both results: the output [N, H, L, Ev] and each score row's logsumexp
    # [N, H, L] (ATen's kernel keeps it [N, L, H] in memory; the values are
    # what count).
    q, k, v = flash_args(2, 3, 5, 6, 8, 8, dtype, 16)
    mask = torch.randn(5, 6, generator=gen(17), dtype=dtype) if masked else None
    want = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask,
                                                        scale=scale)
    assert want[1].shape == (2, 3, 5)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-10)
    check_op("_scaled_dot_product_flash_attention_for_cpu",
             [q, k, Transposed(v), 0.0, causal, mask, scale], list(want), **tol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16],
                         ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("masked", [False, True])
def test_attention_half_precision(dtype, masked):
    # f16 and bf16 compute in float and round once, as ATen's CPU kernels
    # (the flash op's logsumexp stays float32); sdpa shares the kernel.
    q, k, v = flash_args(2, 2, 5, 6, 8, 8, torch.float32, 20)
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    mask = torch.randn(5, 6, generator=gen(21)).to(dtype) if masked else None
    want = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=mask)
    assert want[1].dtype == torch.float32
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=2e-3, atol=2e-3)
    check_op("_scaled_dot_product_flash_attention_for_cpu",
             [Transposed(q), k, v, 0.0, False, mask, None], list(want), **tol)
    check_op("scaled_dot_product_attention", [q, k, v, mask], want[0], **tol)


class FlashForCpu(torch.nn.Module):
    def forward(self, q, k, v):
        out, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=True)
        return out * 2, lse


def test_flash_attention_for_cpu_from_torch(device):
    args = flash_args(1, 2, 4, 4, 8, 8, torch.float32, 18)
    m = traceir.from_torch(FlashForCpu(), args)
    ops = {n.target for n in m.graphs[0].nodes if n.op == "pyop"}
    assert "_scaled_dot_product_flash_attention_for_cpu" in ops, ops
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device=device)
    for got, want in zip(exe(*args), FlashForCpu()(*args)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_flash_attention_for_cpu_errors():
    q, k, v = flash_args(1, 2, 4, 4, 8, 8, torch.float32, 19)
    out, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v)
    expect_error("_scaled_dot_product_flash_attention_for_cpu", [q, k, v, 0.5], [out, lse],
                 "dropout_p must be 0")
    expect_error("_scaled_dot_product_flash_attention_for_cpu",
                 [q, k, v, 0.0, False, torch.ones(4, 4, dtype=torch.bool)], [out, lse],
                 "attn_mask must have the query's dtype")
    expect_error("_scaled_dot_product_flash_attention_for_cpu", [q[0], k[0], v[0]],
                 [out[0], lse[0]], "must have rank 4")
