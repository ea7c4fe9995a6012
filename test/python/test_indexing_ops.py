"""The indexing ops against PyTorch, on the CPU and on CUDA (the `device`
fixture of conftest.py; the cuda cases skip, with one line saying why,
where trace-run finds no CUDA device): index_select, gather, index.Tensor
(gathers), scatter (.src and .value), scatter_add, scatter_reduce.two,
index_put (scatters), slice_scatter and select_scatter
(lib/Runtime/CPU/Indexing.cpp, CUDA/Indexing.cpp/.cu, both reading their
calls with IndexArgs.cpp and running Indexing.h's element functions), and
from_torch of modules that index with x[idx], x[:, idx] and assign to them.

Strided (Transposed, Sliced) operands, 0-d and empty tensors, int32 and
negative indices, broadcast index tensors, duplicate targets and the
out-of-range errors run on both devices.

Tolerances: gathers, assignments and integer or bool results exactly;
float scatter_add/scatter_reduce/index_put(accumulate) f32 within rtol
1e-5 / atol 1e-6 (each target's sources combine in row-major order, each
step rounded to the dtype, as PyTorch's CPU kernels do), f16 one rounding
step (rtol 1e-3).
"""
import pytest
import torch

import traceir
from traceir_testing import RunError, Sliced, Transposed, check_op, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

torch.manual_seed(0)

def rnd(*shape, dtype=torch.float32):
    t = torch.randn(*shape, dtype=torch.float64).mul(5)
    return (t > 0) if dtype == torch.bool else t.to(dtype)


def fails(op, args, result, message):
    text, inputs = op_graph(op, args, [result])
    with pytest.raises(RunError, match=message):
        run_graph(text, inputs)


#===--- index_select / gather ------------------------------------------------===#

def test_index_select():
    x = rnd(4, 5, 3)
    i = torch.tensor([3, 0, 3, 1])
    for d in (0, 1, -1):
        j = i % x.shape[d]
        check_op("index_select", [x, d, j], torch.index_select(x, d, j))
    check_op("index_select", [Transposed(x), 1, i % 3], torch.index_select(x, 1, i % 3))
    check_op("index_select", [Sliced(x), 0, Sliced(i)], torch.index_select(x, 0, i))
    i32 = i.to(torch.int32)
    check_op("index_select", [x, 0, i32], torch.index_select(x, 0, i32))
    check_op("index_select", [x, 2, torch.tensor(2)], torch.index_select(x, 2, torch.tensor(2)))
    e = torch.tensor([], dtype=torch.int64)
    check_op("index_select", [x, 1, e], torch.index_select(x, 1, e))
    z = torch.tensor(2.5)
    check_op("index_select", [z, 0, torch.tensor([0])], torch.index_select(z, 0, torch.tensor([0])))


def test_index_select_dtypes():
    # Gathers copy elements: one of each size, and bool.
    i = torch.tensor([4, 0, 2, 2])
    for dtype in (torch.float64, torch.bfloat16, torch.int32, torch.bool):
        x = rnd(5, 6, dtype=dtype)
        check_op("index_select", [x, 0, i], torch.index_select(x, 0, i), rtol=0, atol=0)


def test_index_select_out_of_range():
    x = rnd(4, 5)
    fails("index_select", [x, 1, torch.tensor([0, 5, 7])], torch.zeros(4, 3),
          "index 5 is out of bounds for dimension 1 with size 5")
    fails("index_select", [x, 0, torch.tensor([-1])], torch.zeros(1, 5),
          "index -1 is out of bounds for dimension 0 with size 4")


def test_gather():
    x = rnd(4, 5, 3)
    for d in (0, 1, -1):
        idx = torch.randint(0, x.shape[d], (3, 4, 2))
        check_op("gather", [x, d, idx], torch.gather(x, d, idx))
    idx = torch.randint(0, 5, (4, 7, 3))
    check_op("gather", [x, 1, idx, False], torch.gather(x, 1, idx))
    check_op("gather", [x, 1, idx.to(torch.int32)], torch.gather(x, 1, idx))
    idx = torch.randint(0, 3, (4, 5, 2))
    check_op("gather", [Transposed(x), 2, Transposed(idx)], torch.gather(x, 2, idx))
    idx = torch.randint(0, 4, (2, 5, 3))
    check_op("gather", [Sliced(x), 0, Sliced(idx)], torch.gather(x, 0, idx))
    z, k = torch.tensor(1.5), torch.tensor(0)
    check_op("gather", [z, 0, k], torch.gather(z, 0, k))
    e = torch.zeros(4, 0, 3, dtype=torch.int64)
    check_op("gather", [x, 1, e], torch.gather(x, 1, e))
    for dtype in (torch.float16, torch.uint8):
        y = rnd(3, 4, dtype=dtype)
        i = torch.randint(0, 4, (3, 6))
        check_op("gather", [y, 1, i], torch.gather(y, 1, i), rtol=0, atol=0)


def test_gather_out_of_range():
    x = rnd(3, 4)
    fails("gather", [x, 1, torch.tensor([[0, 1], [4, 0]])], torch.zeros(2, 2),
          "index 4 is out of bounds for dimension 1 with size 4")
    # The first bad one in row-major order of the index, not of its storage
    # (stored transposed, -3 comes first there).
    fails("gather", [x, 0, Transposed(torch.tensor([[0, 9], [-3, 1]]))], torch.zeros(2, 2),
          "index 9 is out of bounds for dimension 0 with size 3")


#===--- scatter / scatter_add / scatter_reduce -------------------------------===#

def perm_index(shape, dim, size):
    """Distinct targets along `dim` in every line (scatter's result is only
    defined without duplicates)."""
    lines = torch.randperm(size).narrow(0, 0, shape[dim])
    view = [1] * len(shape)
    view[dim] = shape[dim]
    return lines.view(view).expand(shape).contiguous()


def test_scatter():
    x, src = rnd(4, 5), rnd(4, 5)
    for d in (0, 1, -1):
        idx = perm_index((3, 4), d, x.shape[d])
        check_op("scatter", [x, d, idx, src], torch.scatter(x, d, idx, src))
    idx = perm_index((4, 3), 1, 5)
    check_op("scatter", [Transposed(x), 1, idx, Transposed(src)], torch.scatter(x, 1, idx, src))
    check_op("scatter", [Sliced(x), 1, Sliced(idx), src], torch.scatter(x, 1, idx, src))
    check_op("scatter", [x, 1, idx, 2.5], torch.scatter(x, 1, idx, 2.5))
    n = torch.arange(20).view(4, 5)
    check_op("scatter", [n, 1, idx, -7], torch.scatter(n, 1, idx, -7))
    check_op("scatter", [n, 1, idx, 2.75], torch.scatter(n, 1, idx, 2.75))
    b = rnd(4, 5, dtype=torch.bool)
    check_op("scatter", [b, 1, idx, 0.5], torch.scatter(b, 1, idx, 0.5))
    e = torch.zeros(4, 0, dtype=torch.int64)
    check_op("scatter", [x, 1, e, src], torch.scatter(x, 1, e, src))
    z = torch.tensor(1.5)
    check_op("scatter", [z, 0, torch.tensor(0), torch.tensor(4.0)],
             torch.scatter(z, 0, torch.tensor(0), torch.tensor(4.0)))
    fails("scatter", [x, 1, torch.tensor([[0, 5]]), src], x,
          "index 5 is out of bounds for dimension 1 with size 5")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int8])
def test_scatter_add(dtype):
    x, src = rnd(3, 6, dtype=dtype), rnd(3, 8, dtype=dtype)
    idx = torch.randint(0, 6, (3, 8))  # duplicates add up
    # In f16 TraceIR rounds after each add into the target (as PyTorch's
    # CUDA kernel, whose atomics add in f16), PyTorch's CPU kernel once at
    # the end: with duplicates the two differ by a few f16 steps of the
    # sum's size (up to 0.016 for these sums of up to ~20).
    tol = dict(rtol=1e-2, atol=5e-2) if dtype == torch.float16 else {}
    check_op("scatter_add", [x, 1, idx, src], torch.scatter_add(x, 1, idx, src), **tol)
    idx0 = torch.randint(0, 3, (5, 6))
    src0 = rnd(5, 6, dtype=dtype)
    check_op("scatter_add", [Sliced(x), 0, idx0, Transposed(src0)],
             torch.scatter_add(x, 0, idx0, src0), **tol)


REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce(reduce):
    x, src = rnd(3, 5), rnd(3, 9)
    idx = torch.randint(0, 4, (3, 9))  # duplicates; column 4 untouched
    for include_self in (True, False):
        want = torch.scatter_reduce(x, 1, idx, src, reduce, include_self=include_self)
        check_op("scatter_reduce", [x, 1, idx, src, reduce, include_self], want)
    # Integers exactly (mean floors), one include_self each.
    n, nsrc = rnd(3, 5, dtype=torch.int64), rnd(3, 9, dtype=torch.int64)
    include_self = reduce in ("sum", "amax")
    want = torch.scatter_reduce(n, 1, idx, nsrc, reduce, include_self=include_self)
    check_op("scatter_reduce", [n, 1, idx, nsrc, reduce, include_self], want)


def test_scatter_reduce_more():
    x, src = rnd(4, 3), rnd(6, 3)
    idx = torch.randint(0, 4, (6, 3))
    check_op("scatter_reduce", [Transposed(x), 0, idx, src, "amax"],
             torch.scatter_reduce(x, 0, idx, src, "amax"))
    src[2, 1] = float("nan")
    want = torch.scatter_reduce(x, 0, idx, src, "amin", include_self=False)
    text, inputs = op_graph("scatter_reduce", [x, 0, idx, src, "amin", False], [want])
    (got,), _ = run_graph(text, inputs)
    torch.testing.assert_close(got, want, equal_nan=True)
    b, bsrc = rnd(4, 3, dtype=torch.bool), rnd(6, 3, dtype=torch.bool)
    check_op("scatter_reduce", [b, 0, idx, bsrc, "prod"],
             torch.scatter_reduce(b, 0, idx, bsrc, "prod"))


#===--- index.Tensor / index_put ---------------------------------------------===#

def test_index():
    x = rnd(4, 5, 6)
    i = torch.tensor([3, 0, -1, 3])
    j = torch.tensor([[1], [-5], [2]], dtype=torch.int32)
    check_op("index", [x, i], x[i])
    check_op("index", [x, None, i], x[:, i])
    check_op("index", [x, None, None, i], x[:, :, i])
    check_op("index", [x, i, j], x[i, j])
    check_op("index", [x, None, i, j], x[:, i, j])
    check_op("index", [x, i, None, j], x[i, :, j])
    check_op("index", [x, i, j, torch.tensor(2)], x[i, j, 2])
    check_op("index", [Transposed(x), None, Transposed(j)], x[:, j])
    check_op("index", [Sliced(x), Sliced(i)], x[i])
    check_op("index", [x, torch.tensor(1)], x[torch.tensor(1)])
    e = torch.tensor([], dtype=torch.int64)
    check_op("index", [x, None, e], x[:, e])
    for dtype in (torch.int64, torch.bool):
        y = rnd(4, 5, dtype=dtype)
        check_op("index", [y, None, i], y[:, i], rtol=0, atol=0)


def test_index_out_of_range():
    x = rnd(4, 5)
    fails("index", [x, torch.tensor([0, 4])], torch.zeros(2, 5),
          "index 4 is out of bounds for dimension 0 with size 4")
    fails("index", [x, None, torch.tensor([1, -6])], torch.zeros(4, 2),
          "index -6 is out of bounds for dimension 1 with size 5")


def test_index_put():
    x = rnd(4, 5)
    i = torch.tensor([2, 0, -1])
    v = rnd(3, 5)
    aten = torch.ops.aten.index_put
    check_op("index_put", [x, i, v], aten(x, [i], v))
    check_op("index_put", [x, i, v, False], aten(x, [i], v, False))
    w = rnd(4, 3)
    check_op("index_put", [x, None, i, w], aten(x, [None, i], w))
    check_op("index_put", [Transposed(x), None, i, Transposed(w)],
             aten(x, [None, i], w))
    # Duplicates accumulate; values broadcast.
    d = torch.tensor([1, 3, 1, 1, -4])
    vals = rnd(5, 5)
    check_op("index_put", [x, d, vals, True], aten(x, [d], vals, True))
    check_op("index_put", [x, None, d, torch.tensor(2.0), True],
             aten(x, [None, d], torch.tensor(2.0), True))
    j = torch.tensor([[0], [3]])
    vv = rnd(2, 3)
    check_op("index_put", [x, j, i % 5, vv, True], aten(x, [j, i % 5], vv, True))
    n = torch.arange(20).view(4, 5)
    check_op("index_put", [n, d, torch.tensor(7), True], aten(n, [d], torch.tensor(7), True))
    fails("index_put", [x, torch.tensor([4]), rnd(1, 5)], x,
          "index 4 is out of bounds for dimension 0 with size 4")


#===--- slice_scatter / select_scatter ---------------------------------------===#

def test_slice_scatter():
    x = rnd(4, 6)
    aten = torch.ops.aten.slice_scatter
    a = rnd(4, 3)
    check_op("slice_scatter", [x, a, 1, 0, None, 2], aten(x, a, 1, 0, None, 2))
    b = rnd(2, 6)
    check_op("slice_scatter", [Transposed(x), b, 0, -3, -1], aten(x, b, 0, -3, -1))
    c = torch.randint(0, 9, (4, 2))
    check_op("slice_scatter", [x, c, 1, 4, 100], aten(x, c, 1, 4, 100))
    e = torch.zeros(0, 6)
    check_op("slice_scatter", [x, e, 0, 3, 1], aten(x, e, 0, 3, 1))
    fails("slice_scatter", [x, rnd(4, 2), 1, 0, None, 2], x,
          r"src \[4, 2\] must have the slice's shape \[4, 3\]")


def test_select_scatter():
    x = rnd(3, 4, 5)
    aten = torch.ops.aten.select_scatter
    s = rnd(3, 5)
    check_op("select_scatter", [x, s, 1, -1], aten(x, s, 1, -1))
    t = rnd(3, 4)
    check_op("select_scatter", [Sliced(x), t, 2, 0], aten(x, t, 2, 0))
    n = torch.randint(0, 9, (4, 5))
    check_op("select_scatter", [x, n, 0, 2], aten(x, n, 0, 2))
    fails("select_scatter", [x, s, 1, 4], x, "index 4 is out of range for dim 1 of size 4")


#===--- from_torch -----------------------------------------------------------===#

class Indexing(torch.nn.Module):
    def forward(self, x, i):
        y = x[:, i] * 2 + x[i, :2].sum()
        z = x.clone()
        z[:, i] = y
        return y, x[i], z


@pytest.mark.skipif(not traceir.HAS_COMPILER, reason="from_torch needs the compiler")
def test_from_torch_indexing(device):
    x, i = rnd(4, 4), torch.tensor([2, 0, 3])
    m = traceir.from_torch(Indexing(), (x, i)).run_passes("free-dead-tensors")
    text = str(m)
    assert 'pyop "index"(' in text and 'pyop "index_put"(' in text and "None" in text, text
    got = traceir.compile(m, device=device)(x, i)
    want = Indexing()(x, i)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
