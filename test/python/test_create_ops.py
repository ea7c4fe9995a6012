"""Creation, sorting, two-result reductions and group norm against PyTorch,
on the CPU and on CUDA (the `device` fixture of conftest.py; the cuda cases
skip, with one line saying why, where trace-run finds no CUDA device):
arange (arange.start_step), empty, empty_strided, rand and randn
(CPU/Creation.cpp, CUDA/Creation.cpp/.cu), max.dim and min.dim (argmax and
argmin's kernels with the values, CPU/Reductions.cpp,
CUDA/Reductions.cpp/.cu), sort and topk (Runtime/SortRows.h's order,
CPU/Sorting.cpp, CUDA/Sorting.cpp/.cu), native_group_norm (layer_norm's
kernels over [N, group, C / group, *] rows, CPU/NN.cpp, CUDA/NN.cpp/.cu), and
their import from torch.export (arange.default and arange.start,
max.default, nn.GroupNorm, sort and topk).

Strided (Transposed, Sliced), 0-d and empty inputs, NaN, the dtypes, and
the errors PyTorch raises run on both devices. empty's values are
unspecified (PyTorch's too): its tests check shapes and dtypes and that a
graph filling it runs. rand and randn cannot match PyTorch's generator:
their tests check the distribution within loose bounds, that the run's
seed fixes the values and that two calls in one graph differ. sort and
topk run on inputs without ties (sort.default is not stable in PyTorch).

Tolerances: integer and bool results, positions, and the values of max,
min, sort and topk exactly (they are input elements); arange's float values
within rtol 1e-6 (PyTorch steps f32 in f32 on some paths, TraceIR in
double); group norm in f32 within rtol 1e-5 / atol 1e-5 of PyTorch's f64
result rounded (atol 1e-4 for groups of 800), f64 1e-10 / 1e-12, f16/bf16
one rounding step of the result dtype.
"""
import pytest
import torch

import traceir
import traceir_testing
from traceir_testing import Fn, RunError, Sliced, Transposed, check_op, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

torch.manual_seed(0)

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def check_nan(op, args, want):
    """check_op for results holding NaN (check_op treats NaN as a mismatch)."""
    text, inputs = op_graph(op, args, want)
    got, _ = run_graph(text, inputs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, equal_nan=True, rtol=0, atol=0)


#===--- arange ---------------------------------------------------------------===#

@pytest.mark.parametrize("args,kwargs", [
    ((10, 0, -3), {}), ((0, 0), {}), ((0.5, -2.0, -0.75), {}), ((True, 5), {}),
    # Past 2^53: int64 steps exactly.
    ((2 ** 60, 2 ** 60 + 40, 7), {}),
    # Integer results from floats: the length in double, the values from the
    # truncated numbers (a step of 0.5 truncates to 0, as PyTorch's).
    ((0, 5, 0.5), dict(dtype=torch.int64)),
    ((-2.5, 3), dict(dtype=torch.uint8)), ((0, 300), dict(dtype=torch.int8)),
    ((0, 3, 0.3), dict(dtype=torch.float64)),
    ((0, 9, 0.5), dict(dtype=torch.bfloat16)),
])
def test_arange(args, kwargs):
    want = torch.arange(*args, **kwargs)
    step = args[2] if len(args) > 2 else 1
    dtype = kwargs.get("dtype")
    call = [args[0], args[1], step] + ([str(dtype)] if dtype else [])
    check_op("arange", call, want, rtol=1e-6, atol=0)


def test_arange_in_a_graph():
    """arange as an operand: a graph input plus a position vector."""
    x = rnd(3, 4)
    text = ("trace.graph @g(%x: tensor<3x4xf32> {trace.input = \"x\"}) -> (tensor<3x4xf32>) {\n"
            "  %p = pyop \"arange\"(0, 4) : () -> tensor<4xi64>\n"
            "  %r = pyop \"mul\"(%x, %p) : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<3x4xf32>\n"
            "  ret %r : tensor<3x4xf32>\n}\n")
    (got,), _ = run_graph(text, {"x": x})
    torch.testing.assert_close(got, x * torch.arange(4))


@pytest.mark.parametrize("call,msg", [
    ([0, 5, 0], "step must be nonzero"),
    ([0, 5, -1], "upper bound and lower bound inconsistent with step sign"),
    ([3, 0, 1], "upper bound and lower bound inconsistent with step sign"),
    ([0, 2, 1, "torch.bool"], "arange has no bool kernel"),
    ([0, 1e30, 1, "torch.int64"], "end 1e\\+30 cannot be converted to int64"),
    ([0, 2 ** 62, 2 ** -60], "invalid size, possible overflow"),
])
def test_arange_errors(call, msg):
    text, _ = op_graph("arange", call, [torch.zeros(2, dtype=torch.int64)])
    with pytest.raises(RunError, match=msg):
        run_graph(text)


def test_arange_result_shape_checked():
    """A graph stating another length fails inference, naming both."""
    text, _ = op_graph("arange", [0, 5, 1], [torch.zeros(4, dtype=torch.int64)])
    with pytest.raises(RunError, match="tensor<5xi64>"):
        run_graph(text)


#===--- max.dim, min.dim -----------------------------------------------------===#

@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim(op):
    fn = getattr(torch, op)
    x = rnd(3, 4, 5)
    check_op(op, [Transposed(x), -1, True], list(fn(x, -1, keepdim=True)))
    check_op(op, [Sliced(x), 0, True], list(fn(x, 0, keepdim=True)))
    # Long groups take CUDA's block path.
    y = rnd(2, 300)
    check_op(op, [y, 1], list(fn(y, 1)))
    # A 0-d input: dim 0 or -1, itself at position 0.
    s = torch.tensor(2.5)
    check_op(op, [s, -1, True], list(fn(s, -1, keepdim=True)))
    # An empty result of nonempty groups.
    e = torch.zeros(0, 3)
    check_op(op, [e, 1], list(fn(e, 1)))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.int8, torch.uint8, torch.bool])
def test_max_min_dtypes(dtype):
    if dtype.is_floating_point:
        x = rnd(4, 6, dtype=dtype)
    elif dtype == torch.bool:
        x = torch.rand(4, 6) > 0.5
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -100), min(info.max, 100), (4, 6), dtype=dtype)
    x[1] = x[1, 0]  # ties go to the first position
    check_op("max", [x, 1], list(torch.max(x, 1)))
    check_op("min", [Transposed(x), 0, True], list(torch.min(x, 0, keepdim=True)))


def test_max_min_int64_exact():
    x = torch.tensor([[2 ** 62 + 1, 2 ** 62 + 3, 2 ** 62 + 2], [-2 ** 63, 2 ** 63 - 1, 0]])
    check_op("max", [x, 1], list(torch.max(x, 1)))
    check_op("min", [x, 1], list(torch.min(x, 1)))


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_nan(op):
    """The first NaN wins, value and position, as PyTorch's."""
    fn = getattr(torch, op)
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [-float("inf"), 2.0, 2.0, 0.0]])
    check_nan(op, [x, 1], list(fn(x, 1)))
    y = rnd(2, 100)
    y[0, 57] = float("nan")
    y[0, 80] = float("nan")
    check_nan(op, [y, 1], list(fn(y, 1)))


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_errors(op):
    x = torch.zeros(0, 3)
    text, inputs = op_graph(op, [x, 0], [torch.zeros(3), torch.zeros(3, dtype=torch.int64)])
    with pytest.raises(RunError, match="reduction dim 0 has size 0"):
        run_graph(text, inputs)
    x = rnd(2, 3)
    text, inputs = op_graph(op, [x, 2], [torch.zeros(2), torch.zeros(2, dtype=torch.int64)])
    with pytest.raises(RunError, match="dim 2 is out of range"):
        run_graph(text, inputs)
    text, inputs = op_graph(op, [x, None], [torch.zeros(()), torch.zeros((), dtype=torch.int64)])
    with pytest.raises(RunError, match="argument #1 \\(dim\\) must be an int"):
        run_graph(text, inputs)


#===--- native_group_norm ----------------------------------------------------===#

def group_norm_f64(x, w, b, group, eps=1e-5):
    n, c = x.shape[:2]
    hxw = x[0, 0].numel()
    up = lambda t: None if t is None else t.double()  # noqa: E731
    return [t.to(x.dtype) for t in torch.ops.aten.native_group_norm(
        x.double(), up(w), up(b), n, c, hxw, group, eps)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_native_group_norm(dtype):
    x = rnd(2, 6, 3, 4, dtype=dtype)
    w, b = rnd(6, dtype=dtype), rnd(6, dtype=dtype)
    check_op("native_group_norm", [x, w, b, 2, 6, 12, 3, 1e-5],
             group_norm_f64(x, w, b, 3), **TOL[dtype])
    check_op("native_group_norm", [x, None, None, 2, 6, 12, 3, 0.1],
             group_norm_f64(x, None, None, 3, 0.1), **TOL[dtype])


def test_native_group_norm_shapes_and_strides():
    # [N, C]: HxW 1; [N, C, L]; strided inputs; a long group (CUDA's block loop).
    x = rnd(3, 8)
    w = rnd(8)
    check_op("native_group_norm", [x, w, None, 3, 8, 1, 4, 1e-5], group_norm_f64(x, w, None, 4),
             **TOL[torch.float32])
    x = rnd(2, 4, 5)
    check_op("native_group_norm", [Transposed(x), None, w[:4], 2, 4, 5, 2, 1e-5],
             group_norm_f64(x, None, w[:4], 2), **TOL[torch.float32])
    check_op("native_group_norm", [Sliced(x), w[:4], w[:4], 2, 4, 5, 4, 1e-5],
             group_norm_f64(x, w[:4], w[:4], 4), **TOL[torch.float32])
    x = rnd(1, 4, 20, 20)
    check_op("native_group_norm", [x, None, None, 1, 4, 400, 2, 1e-5],
             group_norm_f64(x, None, None, 2), rtol=1e-5, atol=1e-4)


def test_native_group_norm_errors():
    x = rnd(2, 4, 3)
    stats = [torch.zeros(2, 4, 3), torch.zeros(2, 3), torch.zeros(2, 3)]
    text, inputs = op_graph("native_group_norm", [x, None, None, 2, 4, 3, 3, 1e-5], stats)
    with pytest.raises(RunError, match="divisible by num_groups, but got C=4 and num_groups=3"):
        run_graph(text, inputs)
    stats = [torch.zeros(2, 4, 3), torch.zeros(2, 2), torch.zeros(2, 2)]
    text, inputs = op_graph("native_group_norm", [x, None, None, 2, 4, 4, 2, 1e-5], stats)
    with pytest.raises(RunError, match="is not \\[N=2, C=4, \\*\\] with HxW=4"):
        run_graph(text, inputs)
    text, inputs = op_graph("native_group_norm", [x, rnd(3), None, 2, 4, 3, 2, 1e-5], stats)
    with pytest.raises(RunError, match="weight \\[3\\] must have shape \\[C=4\\]"):
        run_graph(text, inputs)
    i = torch.ones(2, 4, 3, dtype=torch.int64)
    text, inputs = op_graph("native_group_norm", [i, None, None, 2, 4, 3, 2, 1e-5],
                            [i, torch.zeros(2, 2, dtype=torch.int64),
                             torch.zeros(2, 2, dtype=torch.int64)])
    with pytest.raises(RunError, match="input must be floating point"):
        run_graph(text, inputs)


#===--- sort, topk -----------------------------------------------------------===#
# Inputs without ties (sort.default is not stable in PyTorch); NaN sorts
# above every number.

def distinct(*shape, dtype=torch.float32):
    """Distinct values of `dtype` in a random order."""
    n = torch.Size(shape).numel()
    v = torch.randperm(n) - n // 2
    return (v.to(torch.float64) / 4).to(dtype).reshape(shape) if dtype.is_floating_point \
        else v.to(dtype).reshape(shape)


def test_sort():
    x = distinct(3, 4, 5)
    check_op("sort", [x], list(torch.sort(x)))
    check_op("sort", [Transposed(x), 1, True], list(torch.sort(x, 1, True)))
    check_op("sort", [Sliced(x), 0], list(torch.sort(x, 0)))
    y = distinct(2, 500)  # long rows
    check_op("sort", [y, 1, True], list(torch.sort(y, 1, True)))
    s = torch.tensor(1.5)
    check_op("sort", [s, 0], list(torch.sort(s, 0)))
    e = torch.zeros(3, 0)
    check_op("sort", [e, 0], list(torch.sort(e, 0)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.int32])
def test_sort_topk_dtypes(dtype):
    x = distinct(4, 6, dtype=dtype) if dtype != torch.uint8 else torch.randperm(24).to(dtype).reshape(4, 6)
    check_op("sort", [x, 1, True], list(torch.sort(x, 1, True)))
    check_op("topk", [x, 3, 0, False], list(torch.topk(x, 3, 0, False)))


def test_sort_int64_exact():
    x = torch.tensor([2 ** 62 + 3, 2 ** 62 + 1, -2 ** 63, 2 ** 63 - 1, 2 ** 62 + 2])
    check_op("sort", [x, 0], list(torch.sort(x)))


def test_sort_topk_nan():
    x = torch.tensor([[3.0, float("nan"), 1.0, -float("inf"), float("inf"), -2.0]])
    for desc in (False, True):
        check_nan("sort", [x, 1, desc], list(torch.sort(x, 1, desc)))
    for largest in (False, True):
        check_nan("topk", [x, 3, 1, largest], list(torch.topk(x, 3, 1, largest)))


def test_topk():
    x = distinct(3, 4, 5)
    for k, dim, largest in ((1, 0, False), (0, 2, True), (5, 2, False)):
        check_op("topk", [x, k, dim, largest], list(torch.topk(x, k, dim, largest)))
    check_op("topk", [Transposed(x), 3, 1], list(torch.topk(x, 3, 1)))
    y = distinct(3, 700)
    check_op("topk", [y, 10, 1], list(torch.topk(y, 10, 1)))
    # sorted=False: PyTorch documents no order; the check is order-free.
    text, inputs = op_graph("topk", [x, 3, 1, True, False], list(torch.topk(x, 3, 1)))
    (values, indices), _ = run_graph(text, inputs)
    want = torch.topk(x, 3, 1)
    assert torch.equal(values.sort(1, True).values, want.values)
    assert torch.equal(torch.gather(x, 1, indices), values)


@pytest.mark.devices("cpu")
@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8, torch.bfloat16, torch.float32])
def test_topk_ties_as_eager(dtype):
    # Rows full of equal values: the CPU's topk picks among ties as ATen's
    # CPU topk does, so the indices match eager's, not only the values (on
    # CUDA, as in ATen, which of the ties comes out is unspecified). k
    # small against the row takes ATen's partial-sort path, larger k its
    # nth_element path (sorted or not).
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 4, (3, 200), generator=g).to(dtype)
    for k, largest, sorted_ in ((2, True, True), (3, False, True), (50, True, True),
                                (50, False, False), (200, True, False), (1, True, True)):
        want = list(torch.topk(x, k, 1, largest, sorted_))
        check_op("topk", [x, k, 1, largest, sorted_], want)
    y = torch.tensor([[1.0, float("nan"), 1.0, float("nan"), 0.0, 1.0]])
    check_nan("topk", [y, 4, 1, True, True], list(torch.topk(y, 4, 1, True, True)))


def test_sort_topk_errors():
    x = distinct(2, 3)
    text, inputs = op_graph("topk", [x, 4, 1], [torch.zeros(2, 4), torch.zeros(2, 4, dtype=torch.int64)])
    with pytest.raises(RunError, match="selected index k out of range"):
        run_graph(text, inputs)
    text, inputs = op_graph("sort", [x, 2], [x, torch.zeros(2, 3, dtype=torch.int64)])
    with pytest.raises(RunError, match="dim 2 is out of range"):
        run_graph(text, inputs)


#===--- empty, empty_strided, rand, randn -------------------------------------===#
# empty's values are unspecified (as PyTorch's): its tests check the shape
# and dtype, and that a graph writing into it runs. rand and randn cannot
# match PyTorch's generator: their tests check the distribution (range,
# mean, variance, within bounds a correct generator misses with odds
# below 1e-9), that a run's seed fixes the values and that two calls in one
# graph differ (random ops are never CSE'd).

@pytest.mark.parametrize("op,args", [
    ("empty", [(2, 3)]), ("empty", [(0, 4), "torch.int64"]), ("empty", [(), "torch.bool"]),
    ("empty_strided", [(2, 3), (1, 2)]), ("empty_strided", [(4,), (1,), "torch.float16"]),
])
def test_empty_shape_and_dtype(op, args):
    dtype = {"torch.int64": torch.int64, "torch.bool": torch.bool,
             "torch.float16": torch.float16}.get(args[-1], torch.float32)
    want = torch.empty(args[0], dtype=dtype)
    text, inputs = op_graph(op, args, [want])
    (got,), _ = run_graph(text, inputs)
    assert got.shape == want.shape and got.dtype == want.dtype


def test_empty_then_filled():
    """Two empties written in place stay two tensors (not CSE'd)."""
    text = ("trace.graph @g() -> (tensor<3xf32>, tensor<3xf32>) {\n"
            "  %a = pyop \"empty\"((3,)) : () -> tensor<3xf32>\n"
            "  %b = pyop \"empty\"((3,)) : () -> tensor<3xf32>\n"
            "  %c = pyop \"fill_\"(%a, 1.5) : (tensor<3xf32>) -> tensor<3xf32>\n"
            "  %d = pyop \"fill_\"(%b, -2.0) : (tensor<3xf32>) -> tensor<3xf32>\n"
            "  ret %c, %d : tensor<3xf32>, tensor<3xf32>\n}\n")
    (c, d), _ = run_graph(text)
    assert torch.equal(c, torch.full((3,), 1.5)) and torch.equal(d, torch.full((3,), -2.0))


def test_empty_errors():
    text, _ = op_graph("empty_strided", [(2, 3), (1,)], [torch.zeros(2, 3)])
    with pytest.raises(RunError, match="must have one entry per dim"):
        run_graph(text)
    text, _ = op_graph("empty", [(2, -1)], [torch.zeros(2, 1)])
    with pytest.raises(RunError, match="negative dim"):
        run_graph(text)


def draw(op, shape, dtype=None, seed=0):
    args = [shape] + ([str(dtype)] if dtype else [])
    text, _ = op_graph(op, args, [torch.zeros(shape, dtype=dtype or torch.float32)])
    (got,), _ = run_graph(text, seed=seed)
    return got


@pytest.mark.parametrize("dtype", [None, torch.float64, torch.bfloat16])
def test_rand_distribution(dtype):
    x = draw("rand", (200, 100), dtype)
    assert x.dtype == (dtype or torch.float32) and x.shape == (200, 100)
    v = x.double()
    assert v.min() >= 0 and v.max() < 1
    # 20000 uniforms: mean 1/2 (sd 0.002), variance 1/12.
    assert abs(v.mean() - 0.5) < 0.015 and abs(v.var() - 1 / 12) < 0.01
    assert len(v.unique()) > (200 if dtype == torch.bfloat16 else 1000)


@pytest.mark.parametrize("dtype", [None, torch.bfloat16])
def test_randn_distribution(dtype):
    v = draw("randn", (200, 100), dtype).double()
    # 20000 normals: mean 0 (sd 0.007), variance 1 (sd 0.01).
    assert abs(v.mean()) < 0.05 and abs(v.var() - 1) < 0.07
    assert (v.abs() < 1).double().mean().sub(0.6827).abs() < 0.02
    assert v.abs().max() < 7


@pytest.mark.parametrize("op", ["rand", "randn"])
def test_random_seeded(op):
    a, b, c = draw(op, (64,), seed=3), draw(op, (64,), seed=3), draw(op, (64,), seed=4)
    assert torch.equal(a, b) and not torch.equal(a, c)
    text = ("trace.graph @g() -> (tensor<8xf32>, tensor<8xf32>) {\n"
            f"  %a = pyop \"{op}\"((8,)) : () -> tensor<8xf32>\n"
            f"  %b = pyop \"{op}\"((8,)) : () -> tensor<8xf32>\n"
            "  ret %a, %b : tensor<8xf32>, tensor<8xf32>\n}\n")
    (x, y), _ = run_graph(text)
    assert not torch.equal(x, y)  # two draws, not one CSE'd


def test_random_errors():
    text, _ = op_graph("rand", [(2,), "torch.int64"], [torch.zeros(2, dtype=torch.int64)])
    with pytest.raises(RunError, match="draws floating point values, got dtype i64"):
        run_graph(text)


#===--- import ---------------------------------------------------------------===#

IMPORTS = {
    # torch.export keeps arange.default and arange.start whole once arange has
    # a kernel (the importer rewrites them); with another op lacking a
    # kernel, run_decompositions makes them arange.start_step.
    "arange": (lambda x: (x * torch.arange(4), torch.arange(1, 5) + torch.arange(0.0, 2.0, 0.5),
                          torch.arange(2, 20, 5, dtype=torch.float64)), (rnd(3, 4),)),
    "max_min": (lambda x: (torch.max(x, 1), torch.min(x, 0, keepdim=True)[1], x.max(), x.min()),
                (rnd(3, 4),)),
    "group_norm": (torch.nn.GroupNorm(2, 6), (rnd(2, 6, 5),)),
    "sort_topk": (lambda x: (torch.sort(x, 1, descending=True), torch.topk(x, 2, largest=False)),
                  (distinct(3, 5),)),
    "group_norm_no_affine": (torch.nn.GroupNorm(3, 6, affine=False, eps=1e-3), (rnd(2, 6, 2, 2),)),
}


@pytest.mark.parametrize("case,decompose", [(case, None) for case in sorted(IMPORTS)]
                         + [("arange", True)])
def test_imports_and_runs(case, decompose):
    fn, args = IMPORTS[case]
    model = (fn if isinstance(fn, torch.nn.Module) else Fn(fn)).eval()
    m = traceir.from_torch(model, args, decompose=decompose)
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device=traceir_testing.DEVICE)
    with torch.no_grad():
        want = model(*args)
    want = torch.utils._pytree.tree_leaves(want)
    got = torch.utils._pytree.tree_leaves(exe(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
