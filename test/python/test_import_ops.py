"""Every op of the runtime's op set as torch.export (and torch.jit.trace)
records it from ordinary PyTorch code, imported with traceir.from_torch and
run against PyTorch eager: the import's argument forms must be the ones the
registry and the kernels read.
"""
import pytest
import torch
import torch.nn.functional as F

import traceir
import traceir_testing
from traceir_testing import DEVICE


class Fn(traceir_testing.Fn):
    """traceir_testing.Fn with its forward in this file: the import errors'
    locations tested below are that line."""

    def forward(self, *xs):
        return self.fn(*xs)


torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def pos(*shape):
    return torch.rand(*shape) + 0.5


def rounded(a):
    return torch.round(a) + a.ceil() + a.floor() + a.trunc() + a.sign()


CASES = {
    "add": (lambda a, b: a + b * 2, (r(3, 4), r(4))),
    "sub_alpha": (lambda a, b: torch.sub(a, b, alpha=3), (r(3, 4), r(3, 4))),
    "mul_div": (lambda a, b: a * b / (b + 3), (r(2, 3), pos(2, 3))),
    "neg_abs": (lambda a: -a.abs(), (r(5),)),
    "unary": (lambda a: torch.exp(a).log() + a.sqrt() + a.rsqrt() + torch.tanh(a) + torch.sigmoid(a),
              (pos(4, 3),)),
    "relu_gelu": (lambda a: F.relu(a) + F.gelu(a), (r(6),)),
    "float_functions": (lambda a: torch.sin(a) + a.cos() + a.tan() + a.asin() + a.acos() + a.atan()
                        + a.sinh() + a.cosh() + a.asinh() + torch.acosh(a + 1) + a.atanh()
                        + torch.erf(a) + a.expm1() + a.log1p() + a.log2() + a.log10()
                        + a.reciprocal(), (torch.rand(4, 3) * 0.8 + 0.1,)),
    "rounding_predicates": (lambda a, i: rounded(torch.where(torch.logical_not(a.isnan()), a, 0.0))
                            + a.isinf() + ~i,
                            (torch.tensor([float("nan"), float("inf"), -2.5, 0.5, 1.7, -0.3]),
                             torch.tensor([3, -1, 0, 7, -8, 2]))),
    "leaky_relu_elu": (lambda a: F.leaky_relu(a) + F.leaky_relu(a, 0.2) + F.elu(a) + F.elu(a, 0.5),
                       (r(7),)),
    "pow": (lambda a: a ** 2.5, (pos(3),)),
    "where_compare": (lambda a, b: torch.where(a > b, a, b) + torch.where(a <= b, a, 1.5), (r(4), r(4))),
    "sum_mean_amax": (lambda a: a.sum(1, keepdim=True) + a.mean(-1, keepdim=True) + a.amax(1, True),
                      (r(3, 5),)),
    "softmax": (lambda a: F.softmax(a, -1) + F.log_softmax(a, 0), (r(3, 4),)),
    "linear_addmm": (lambda a, w, b: F.linear(a, w, b) + torch.addmm(b, a, w.t()), (r(2, 5), r(3, 5), r(3))),
    "matmul_bmm": (lambda a, b: torch.matmul(a, b) + torch.bmm(a, b), (r(2, 3, 4), r(2, 4, 5))),
    "mm_t": (lambda a, b: torch.mm(a, b.t()), (r(3, 4), r(5, 4))),
    "views": (lambda a: a.view(6, 4).t().reshape(2, 12).unsqueeze(0).squeeze(0).permute(1, 0)
              .flatten().expand(2, 24), (r(2, 3, 4),)),
    "select_slice_narrow": (lambda a: a[:, 1] + a[:, 1:3].sum(1) + a.narrow(1, 0, 1).squeeze(1), (r(3, 4),)),
    "transpose_contiguous": (lambda a: a.transpose(0, 1).contiguous() * 2, (r(3, 4),)),
    "cat": (lambda a, b: torch.cat([a, b, a], dim=1), (r(2, 3), r(2, 1))),
    "embedding": (lambda w, i: F.embedding(i, w), (r(10, 4), torch.tensor([[1, 2], [9, 0]]))),
    "layer_norm": (lambda a, w, b: F.layer_norm(a, (4,), w, b, 1e-5), (r(2, 3, 4), r(4), r(4))),
    "conv_pool": (lambda x, w: F.adaptive_avg_pool2d(F.max_pool2d(F.conv2d(x, w, padding=1), 2), (1, 1)),
                  (r(1, 2, 6, 6), r(3, 2, 3, 3))),
    "losses": (lambda a, t: F.cross_entropy(a, t) + F.nll_loss(F.log_softmax(a, 1), t),
               (r(4, 5), torch.tensor([0, 4, 2, 1]))),
    "dropout_eval": (lambda a: F.dropout(a, 0.3, training=False) * 2, (r(5),)),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                  (r(2, 3, 5, 8), r(2, 3, 5, 8), r(2, 3, 5, 8))),
    "unflatten": (lambda a: a.unflatten(1, (2, 3)) + 1, (r(4, 6),)),
    # Tensor lists: each piece a view (narrow, select); chunk's last is short.
    "chunk_split_unbind": (lambda a: sum(a.chunk(3, 1)[i].sum(1) for i in range(3))
                           + torch.split(a, [2, 5], -1)[1].sum(1) + a.split(2, 0)[1].sum()
                           + a.unbind(0)[2].sum(), (r(3, 7),)),
    # dtype= arguments (torch.jit.trace records them as ints).
    "dtype_arguments": (lambda a: F.softmax(a, -1, dtype=torch.float64)
                        + a.sum(-1, keepdim=True, dtype=torch.float64)
                        + a.mean(0, dtype=torch.float64), (r(3, 4),)),
    # Conversions, and a 0-d tensor made from constants.
    "to_and_constants": (lambda a: torch.where(a > 0, a, torch.tensor(0.5))
                         + a.to(torch.int64).to(a.dtype) + a.double().float()
                         + (a > 0).to(torch.float32) + a.type_as(a), (r(3, 4),)),
}


@pytest.mark.parametrize("method", ["export", "jit"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_op_imports_and_runs(case, method):
    fn, args = CASES[case]
    model = Fn(fn).eval()
    m = traceir.from_torch(model, args, method=method).run_passes("free-dead-tensors")
    exe = traceir.compile(m, device=DEVICE)
    with torch.no_grad():
        want = model(*args)
    torch.testing.assert_close(exe(*args), want, rtol=1e-4, atol=1e-5)
    dev = exe.memory_report()["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], dev


def test_tensor_constants_become_trace_constants():
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.tensor([1.0, -2.0, 0.5])  # neither a parameter nor a buffer

        def forward(self, x):
            return x * self.scale

    model, x = Scaled(), torch.randn(2, 3)
    m = traceir.from_torch(model, (x,))
    assert " = constant dense<" in str(m) and not m.params
    torch.testing.assert_close(traceir.compile(m, device=DEVICE)(x), model(x))


class WithConstant(torch.nn.Module):
    """A tensor attribute that is neither a parameter nor a buffer: a lifted
    constant for torch.export, a prim::Constant for torch.jit.trace."""

    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        if self.c.dtype is torch.bool:
            return torch.where(self.c, x, -x)
        return x + self.c


CONSTANTS = {
    # A bool constant of more than one element failed as text ("elements hex
    # data size is invalid for provided type": MLIR packs i1 as bits).
    "bool3": torch.tensor([True, False, True]),
    "bool11": torch.tensor([True, False, False] * 3 + [True, True]),
    "bool0d": torch.tensor(True),
    "int64": torch.tensor([1, -2, 3]),
    "int64_0d": torch.tensor(7),
    "int32": torch.tensor([1, 2, 3], dtype=torch.int32),
    "uint8": torch.tensor([0, 200, 255], dtype=torch.uint8),
    "float16": torch.tensor([0.5, -1.0, 2.0], dtype=torch.float16),
    "bfloat16": torch.tensor([0.5, -1.0, 2.0], dtype=torch.bfloat16),
    "float_0d": torch.tensor(2.5),
    "float_view": torch.arange(6.0).reshape(3, 2)[:, 1],  # not contiguous
}


@pytest.mark.parametrize("method", ["export", "jit"])
@pytest.mark.parametrize("case", sorted(CONSTANTS))
def test_constants_of_every_dtype(case, method):
    c = CONSTANTS[case]
    x = torch.randn(c.shape if c.dim() else (3,))
    model = WithConstant(c)
    m = traceir.from_torch(model, (x,), method=method)
    consts = [n for n in m.graphs[0].nodes if n.op == "constant"]
    assert len(consts) == 1 and not m.params
    got = consts[0].value
    assert got.dtype == c.dtype and tuple(got.shape) == tuple(c.shape) and torch.equal(got, c)
    if method == "export":  # named as torch.export's placeholder for it
        ph = [n.name for n in torch.export.export(model, (x,)).graph.nodes if n.op == "placeholder"]
        assert consts[0].name in ph
    torch.testing.assert_close(traceir.compile(m, device=DEVICE)(x), model(x))


class Gaps(torch.nn.Module):
    def forward(self, x):
        # Neither op has a kernel or a decomposition that leads to kernels.
        return torch.logcumsumexp(x, 0).kthvalue(2, 1).values + torch.logcumsumexp(x, 1)[0, :3]


def test_check_and_compile_report_every_missing_op_at_once():
    x = r(3, 4)
    gaps = traceir.check(Gaps(), (x,))
    assert list(gaps) == ["logcumsumexp", "kthvalue"], gaps
    assert len(gaps["logcumsumexp"]) == 2 and all("test_import_ops.py" in loc
                                                  for loc in gaps["logcumsumexp"])
    m = traceir.from_torch(Gaps(), (x,))
    with pytest.raises(traceir.TraceIRError,
                       match=r"no kernel for op 'logcumsumexp' on cpu \(at .*test_import_ops.py:\d+"
                             r".*, .*test_import_ops.py:\d+.*\), nor for 'kthvalue' \(at "):
        traceir.compile(m)
    assert traceir.check(Fn(lambda a: a.relu()), (x,)) == {}


def test_decompositions_beyond_the_core_table():
    # addmv keeps whole in torch.export's core table and has no kernel:
    # torch._decomp's full table makes it mv's mul and sum, and add.
    model = Fn(lambda v, m, x: torch.addmv(v, m, x, beta=0.5, alpha=2.0))
    args = (r(3), r(3, 4), r(4))
    m = traceir.from_torch(model, args)
    ops = {n.target for n in m.graphs[0].nodes if n.op == "pyop"}
    assert "addmv" not in ops, ops
    torch.testing.assert_close(traceir.compile(m)(*args), model(*args))


def test_prims_dtype_casts_import_as_to_copy():
    # renorm's f16 decomposition (torch._refs) casts with
    # prims.convert_element_type, not an aten op: it imports as _to_copy.
    model = Fn(lambda x: torch.renorm(x, 2, 0, 1.0))
    x = torch.randn(4, 5).half()
    m = traceir.from_torch(model, (x,))
    ops = {n.target for n in m.graphs[0].nodes if n.op == "pyop"}
    assert "_to_copy" in ops, ops
    torch.testing.assert_close(traceir.compile(m)(x), model(x))


def data_dependent(op):
    """The import error for a graph whose shapes depend on `op`'s input
    values: it names the op, its node and its line in this file (not the
    sym_size node that reads the size)."""
    return (rf"^{op} \({op}\w*\) at .*test_import_ops.py:\d+: its result's size u\d+ depends "
            r"on its input's values, known only when the graph runs.*; TraceIR needs static "
            r"shapes")


@pytest.mark.parametrize("fn, what", [
    # nonzero's row count, read by a sym_size node (export's own check).
    (lambda a: torch.nonzero(a), data_dependent("nonzero")),
    # Fed into other ops, with no size read at all.
    (lambda a: torch.nonzero(a).float() * 2, data_dependent("nonzero")),
    (lambda a: torch.nonzero(a).sum(), data_dependent("nonzero")),
    # A size read from it, as a Python int.
    (lambda a: a.new_zeros(torch.nonzero(a).shape[0]), data_dependent("nonzero")),
    # Boolean indexing and masked_select are nonzero's too.
    (lambda a: torch.masked_select(a, a > 0), data_dependent(r"(masked_select|nonzero)")),
    (lambda a: a[a > 0] + 1, data_dependent(r"(index|nonzero)")),
    (lambda a: torch.unique(a), data_dependent(r"_?unique\w*")),
    (lambda a: a * a[0, 0].item(), r"_local_scalar_dense\w*: reads a tensor's value into a "
                                   r"Python number"),
])
def test_data_dependent_values_are_import_errors(fn, what):
    with pytest.raises(traceir.TraceIRError, match=what):
        traceir.from_torch(Fn(fn), (r(3, 4),))
    # decompose=False and True take the same path.
    with pytest.raises(traceir.TraceIRError, match=what):
        traceir.from_torch(Fn(fn), (r(3, 4),), decompose=True)


def test_supported_ops():
    ops = traceir.supported_ops("cpu")
    assert ops == sorted(ops) and {"add", "_to_copy", "mm", "conv2d"} <= set(ops)
    assert "logcumsumexp" not in ops
    with pytest.raises(traceir.TraceIRError, match="device must be 'cpu' or 'cuda', got 'tpu'"):
        traceir.supported_ops("tpu")


def test_default_import_decomposes_only_what_lacks_a_kernel():
    # mish, glu and addcmul have no kernel: PyTorch's decompositions make
    # them tanh, softplus's pieces, sigmoid, mul, narrow, add; linear, which
    # has one, stays whole.
    model = Fn(lambda a, w: F.mish(F.linear(a, w))[:, :3] + F.glu(a, -1)
               + torch.addcmul(a[:, :3], a[:, 3:], a[:, 3:], value=0.5))
    args = (r(2, 6), r(6, 6))
    m = traceir.from_torch(model, args)
    ops = {n.target for n in m.graphs[0].nodes if n.op == "pyop"}
    assert "linear" in ops and not ops & {"mish", "glu", "addcmul"}, ops
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device=DEVICE)
    torch.testing.assert_close(exe(*args), model(*args), rtol=1e-4, atol=1e-5)
    # decompose=False keeps the calls as they are; check() names the gaps.
    kept = traceir.from_torch(model, args, decompose=False)
    assert "mish" in {n.target for n in kept.graphs[0].nodes if n.op == "pyop"}
    assert set(traceir.check(model, args)) == set()


def _targets(m):
    return [n.target for n in m.graphs[0].nodes if n.op == "pyop"]


def test_a_view_only_eagers_layout_allows_imports_as_reshape():
    # PyTorch's CPU attention lays its output out as its query is ([B, S,
    # H, D] for heads split off the last dim and transposed), so transpose
    # back then `view` works in eager (transformers' mistral and opt do
    # it); TraceIR's attention result is contiguous [B, H, S, D], where
    # that view does not exist. In a graph without in-place ops the
    # importer makes it reshape (the same values, copied where needed); a
    # view TraceIR's layout allows stays a view.
    def attend(x):
        q = x.transpose(1, 2)
        o = F.scaled_dot_product_attention(q, q, q)
        return o.transpose(1, 2).view(2, 5, 12), x.view(2, 5, 12)

    args = (r(2, 5, 4, 3),)
    m = traceir.from_torch(Fn(attend), args)
    assert _targets(m) == ["transpose", "scaled_dot_product_attention", "transpose", "reshape",
                           "view"], _targets(m)
    got = traceir.compile(m.run_passes("free-dead-tensors"), device=DEVICE)(*args)
    for g, w in zip(got, attend(*args)):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)


def test_a_graph_that_writes_in_place_keeps_its_views():
    # With an in-place op a view and a copy are different tensors: the
    # importer keeps `view`, and TraceIR refuses it at run time naming it.
    def attend(x):
        q = x.transpose(1, 2)
        o = F.scaled_dot_product_attention(q, q, q).transpose(1, 2).view(2, 5, 12)
        return o.relu_()

    args = (r(2, 5, 4, 3),)
    m = traceir.from_torch(Fn(attend), args)
    assert "relu_" in _targets(m) and "view" in _targets(m), _targets(m)
    with pytest.raises(traceir.TraceIRError, match=r"view: size \[2, 5, 12\] is not compatible"):
        traceir.compile(m, device=DEVICE)(*args)


def test_regions_under_another_grad_mode_import_inline():
    # torch.no_grad() (or enable_grad()) inside forward: torch.export keeps
    # the region as a wrap_with_set_grad_enabled call of a submodule; the
    # importer inlines its ATen calls (grad mode does not change values).
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            with torch.no_grad():
                scale = x.abs().amax(-1, keepdim=True) + 1
            with torch.enable_grad():
                y = self.lin(x / scale)
            return y.relu()

    model, args = Model(), (r(3, 4),)
    m = traceir.from_torch(model, args)
    assert "wrap_with_set_grad_enabled" not in _targets(m)
    assert {"abs", "amax", "linear", "relu"} <= set(_targets(m)), _targets(m)
    exe = traceir.compile(m.run_passes("free-dead-tensors"), device=DEVICE)
    with torch.no_grad():
        want = model(*args)
    torch.testing.assert_close(exe(*args), want, rtol=1e-5, atol=1e-6)
