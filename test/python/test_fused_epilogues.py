"""In-place activations fused into the call before them (Runtime/Epilogues.cpp):
a relu_ or hardtanh_ right after eval batch_norm or after a convolution the
optimized tier computes in its own loops (1x1, small depthwise) is applied
as that kernel writes its result, and the profile shows the activation's
call as "fused". Checked against eager and against the portable tier (which
fuses nothing), with NaN and inf flowing through, at each floating dtype
batch_norm covers; what must stay unfused (a oneDNN convolution, an op in
between, an out-of-place relu, bounds the op rejects); and the memory plan,
which fusion leaves as it is (measured peak == predicted)."""
import pytest
import torch

import traceir
from test_optimized_kernels import run_tiers
from traceir_testing import Fn

nn = torch.nn


def values(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def bn(channels, dtype=torch.float32, seed=0):
    m = nn.BatchNorm2d(channels).eval().to(dtype)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        m.running_mean.copy_(torch.randn(channels, generator=g))
        m.running_var.copy_(torch.rand(channels, generator=g) + 0.5)
        m.weight.copy_(torch.randn(channels, generator=g))
        m.bias.copy_(torch.randn(channels, generator=g))
    return m


def activations(ops):
    """The (name, tier) pairs of the relu_ and hardtanh_ calls, in order."""
    return [(n, t) for n, t in ops if n in ("relu_", "hardtanh_")]


def check(module, args, want_tiers, tol=dict(rtol=1e-5, atol=1e-5)):
    """module's results at both tiers match eager (NaN where eager has NaN);
    the activations ran at `want_tiers` on the optimized tier and all
    portable on the portable one; and the run's measured peak is the
    predicted one."""
    with torch.no_grad():
        want = module(*[a.clone() for a in args])
    compiled, out = run_tiers(module, args)
    (fast, fast_ops), (slow, slow_ops) = out["optimized"], out["portable"]
    torch.testing.assert_close(fast, want, equal_nan=True, **tol)
    torch.testing.assert_close(slow, want, equal_nan=True, **tol)
    assert [t for _, t in activations(fast_ops)] == want_tiers, fast_ops
    assert {t for _, t in activations(slow_ops)} <= {"portable"}, slow_ops
    for dev in compiled.memory_report()["devices"]:
        assert dev["peak_bytes"] == dev["predicted_peak_bytes"], dev


def test_resnet_and_mobilenet_blocks():
    # conv (oneDNN) -> bn -> relu_, a 1x1 -> relu_, a depthwise 3x3 on a
    # 2x2 image (the direct loop) -> relu6, bn -> hardtanh(-0.25, 0.5),
    # then a oneDNN conv -> relu_ (not fused: see DNNL.cpp) and an
    # out-of-place relu.
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), bn(8), nn.ReLU(inplace=True),
        nn.Conv2d(8, 6, 1), nn.ReLU(inplace=True),
        nn.MaxPool2d(4),
        nn.Conv2d(6, 6, 3, padding=1, groups=6), nn.ReLU6(inplace=True),
        bn(6, seed=1), nn.Hardtanh(-0.25, 0.5, inplace=True),
        nn.Conv2d(6, 4, 3, padding=1), nn.ReLU(inplace=True),
        nn.ReLU()).eval()
    check(m, (values((2, 3, 8, 8)),),
          ["fused", "fused", "fused", "fused", "optimized"])


def test_nan_and_inf_pass_as_eager():
    x = values((2, 3, 6, 6))
    x[0, 1, 2, 3] = float("nan")
    x[1, 0, 0, 0] = float("inf")
    x[1, 2, 5, 5] = -float("inf")
    m = nn.Sequential(nn.Conv2d(3, 5, 1), nn.ReLU(inplace=True),
                      bn(5), nn.ReLU6(inplace=True)).eval()
    with torch.no_grad():
        assert m(x.clone()).isnan().any()  # the case is one
    check(m, (x,), ["fused", "fused"])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_batch_norm_dtypes(dtype):
    m = nn.Sequential(bn(4, dtype), nn.ReLU(inplace=True),
                      bn(4, dtype, seed=2), nn.Hardtanh(-0.3, 0.7, inplace=True)).eval()
    tol = {torch.float64: dict(rtol=1e-12, atol=1e-12), torch.float16: dict(rtol=1e-3, atol=1e-3),
           torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2)}[dtype]
    check(m, (values((3, 4, 5, 7), dtype),), ["fused", "fused"], tol)


def optimized_activations(fn, x):
    """fn(x) at the optimized tier against eager; its activations' (name,
    tier) pairs."""
    want = fn(x.clone())
    _, out = run_tiers(Fn(fn), (x,))
    got, ops = out["optimized"]
    torch.testing.assert_close(got, want)
    return activations(ops)


def test_in_place_result_read_after():
    # relu_ changes the convolution's result itself, which the graph reads
    # again after it: fused, that result is the clamped one too.
    w = values((6, 4, 1, 1), seed=1)

    def fn(x):
        y = torch.nn.functional.conv2d(x, w)
        z = y.relu_()
        return y * 2 + z

    assert optimized_activations(fn, values((2, 4, 5, 5))) == [("relu_", "fused")]


def test_not_fused_with_an_op_between():
    w = values((6, 4, 1, 1), seed=1)

    def fn(x):
        y = torch.nn.functional.conv2d(x, w)
        t = y + 1  # reads y before its relu_
        return y.relu_() * t

    assert optimized_activations(fn, values((2, 4, 5, 5))) == [("relu_", "optimized")]


def test_rejected_bounds_fail_as_unfused():
    def fn(x):
        return torch.nn.functional.hardtanh_(torch.nn.functional.conv2d(x, w), 1.0, -1.0)

    w = values((3, 2, 1, 1))
    x = values((1, 2, 3, 3))
    compiled = traceir.compile(traceir.from_torch(Fn(fn), (x,)), "cpu")
    with pytest.raises(RuntimeError, match="min_val cannot be greater than max_val"):
        compiled(x)


def test_profile_summary_counts_fused_calls_as_optimized():
    m = nn.Sequential(bn(3), nn.ReLU(inplace=True)).eval()
    x = values((2, 3, 4, 4))
    compiled = traceir.compile(traceir.from_torch(m, (x,)), "cpu")
    with traceir.profile() as prof:
        compiled(x)
    # The text table's columns: op, calls, optimized, ...
    rows = {line.split()[0]: line.split()[1:3] for line in prof.summary().splitlines()[1:]
            if line.strip()}
    assert rows["relu_"] == ["1", "1"], prof.summary()


def test_fusion_can_be_turned_off(monkeypatch):
    # Read when an executable first runs: this one plans no fusion.
    monkeypatch.setenv("TRACEIR_FUSE_EPILOGUES", "0")
    m = nn.Sequential(bn(3), nn.ReLU(inplace=True)).eval()
    check(m, (values((2, 3, 4, 4)),), ["optimized"])
