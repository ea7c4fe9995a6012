"""Every kind of argument a compiled graph (exe(x)) and its params can be
given that TraceIR cannot take: each a TypeError (the wrong kind of
argument) or a TraceIRError (a dtype or shape the graph does not expect)
that names the argument, what it is and what is accepted, never torch's own
error from deep inside the conversion.
"""
import os
import tempfile

import numpy as np
import pytest
import torch

import traceir

GRAPH = """trace.graph @g(%w: tensor<2x2xf32> {trace.param = "fc.weight"}, %x: tensor<2x2xf32> {trace.input = "x"}) -> tensor<2x2xf32> {
  %0 = pyop "matmul"(%x, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  ret %0 : tensor<2x2xf32>
}"""


def _fake():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        return torch.ones(2, 2)


class _Wrapper(torch.Tensor):
    """A tensor subclass with its own dispatch (as FakeTensor, DTensor,
    NestedTensor are)."""

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _dtensor():
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate
    if not dist.is_initialized():
        store = tempfile.mktemp(prefix="traceir-dist-")
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    mesh = init_device_mesh("cpu", (1,))
    return DTensor.from_local(torch.ones(2, 2), mesh, [Replicate()])


def _dtype(name):
    """A 2x2 tensor of torch.<name>, or a skip where this torch lacks it."""
    def make():
        dt = getattr(torch, name, None)
        if dt is None:
            pytest.skip(f"torch {torch.__version__} has no {name}")
        return torch.empty(2, 2, dtype=dt)
    return make


x = torch.ones(2, 2)
q = lambda dt: lambda: torch.quantize_per_tensor(x, 0.1, 0, dt)  # noqa: E731

# (kind, a function making the argument, the error type, words the message
# must hold besides the argument's name)
KINDS = [
    ("meta", lambda: torch.ones(2, 2, device="meta"), TypeError, "meta tensor holds no data"),
    ("sparse_coo", lambda: x.to_sparse(), TypeError, "torch.sparse_coo tensor"),
    ("sparse_csr", lambda: x.to_sparse_csr(), TypeError, "torch.sparse_csr tensor"),
    ("sparse_csc", lambda: x.to_sparse_csc(), TypeError, "torch.sparse_csc tensor"),
    ("sparse_bsr", lambda: x.to_sparse_bsr((1, 1)), TypeError, "torch.sparse_bsr tensor"),
    ("sparse_bsc", lambda: x.to_sparse_bsc((1, 1)), TypeError, "torch.sparse_bsc tensor"),
    ("mkldnn", lambda: x.to_mkldnn(), TypeError, "torch._mkldnn tensor"),
    ("qint8", q(torch.qint8), TypeError, "quantized tensor (torch.qint8"),
    ("quint8", q(torch.quint8), TypeError, "quantized tensor (torch.quint8"),
    ("qint32", q(torch.qint32), TypeError, "quantized tensor (torch.qint32"),
    ("quint4x2", q(torch.quint4x2), TypeError, "quantized tensor (torch.quint4x2"),
    ("per_channel", lambda: torch.quantize_per_channel(
        x, torch.tensor([0.1, 0.1]), torch.tensor([0, 0]), 0, torch.qint8),
     TypeError, "torch.per_channel_affine"),
    *[(n, _dtype(n), TypeError, f"dtype torch.{n}, which TraceIR cannot hold")
      for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                "float8_e8m0fnu", "float4_e2m1fn_x2", "uint16", "uint32", "uint64", "complex32",
                "complex64", "complex128", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2",
                "int1", "uint1", "uint4")],
    ("conj", lambda: torch.ones(2, 2, dtype=torch.complex64).conj(), TypeError, "torch.complex64"),
    ("nested", lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]),
     TypeError, "nested tensor (torch.strided)"),
    ("nested_jagged", lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)],
                                                         layout=torch.jagged),
     TypeError, "nested tensor (torch.jagged)"),
    ("fake", _fake, TypeError, "FakeTensor holds no data"),
    ("dtensor", _dtensor, TypeError, "DTensor"),
    ("subclass", lambda: torch.Tensor._make_subclass(_Wrapper, torch.ones(2, 2)), TypeError,
     "_Wrapper) with its own __torch_dispatch__"),
    ("np_object", lambda: np.array([[1, None], [2, 3]], dtype=object), TypeError,
     "numpy array of dtype object"),
    ("np_complex", lambda: np.ones((2, 2), np.complex64), TypeError, "dtype complex64"),
    ("np_uint16", lambda: np.ones((2, 2), np.uint16), TypeError, "dtype uint16"),
    ("np_str", lambda: np.array([["a", "b"], ["c", "d"]]), TypeError, "dtype <U1"),
    ("np_datetime", lambda: np.zeros((2, 2), "datetime64[s]"), TypeError, "datetime64[s]"),
    ("np_longdouble", lambda: np.ones((2, 2), np.longdouble), TypeError, "which TraceIR cannot hold"),
    ("np_void", lambda: np.zeros((2, 2), "V4"), TypeError, "which TraceIR cannot hold"),
    ("np_structured", lambda: np.zeros((2, 2), [("a", "f4")]), TypeError, "[('a', '<f4')]"),
    ("np_masked", lambda: np.ma.masked_array(np.ones((2, 2), np.float32)), TypeError,
     "masked array"),
    ("list", lambda: [[1.0, 2.0], [3.0, 4.0]], TypeError, "got list"),
    ("int", lambda: 3, TypeError, "got int"),
    ("none", lambda: None, TypeError, "got NoneType"),
    ("str", lambda: "x", TypeError, "got str"),
    # Kinds TraceIR holds, but not what this graph expects: the native layer
    # says so.
    ("float64", lambda: torch.ones(2, 2, dtype=torch.float64), traceir.TraceIRError,
     "f64[2, 2] but the graph expects f32[2, 2]"),
    ("np_int64", lambda: np.ones((2, 2), np.int64), traceir.TraceIRError,
     "i64[2, 2] but the graph expects f32[2, 2]"),
    ("shape", lambda: torch.ones(3, 2), traceir.TraceIRError, "f32[3, 2] but the graph expects"),
]


@pytest.fixture(scope="module")
def exe():
    return traceir.compile(traceir.Module.parse(GRAPH, params={"fc.weight": torch.eye(2)}))


@pytest.mark.parametrize("role", ["input", "param"])
@pytest.mark.parametrize("kind,make,error,words", KINDS, ids=[k[0] for k in KINDS])
def test_bad_argument(exe, role, kind, make, error, words):
    value = make()
    with pytest.raises(error) as info:
        if role == "input":
            exe(value)
        else:
            traceir.compile(traceir.Module.parse(GRAPH, params={"fc.weight": value}))
    msg = str(info.value)
    # The native layer names a param "parameter 'fc.weight'".
    name = "input 'x'" if role == "input" else ("param" if error is TypeError else "parameter")
    assert (name if role == "input" else f"{name} 'fc.weight'") in msg, msg
    assert words in msg, msg


# What is accepted: converted as the values say, never rejected.
GOOD = [
    ("parameter", lambda: torch.nn.Parameter(torch.ones(2, 2))),
    ("requires_grad", lambda: torch.ones(2, 2, requires_grad=True)),
    ("neg_view", lambda: (-torch.ones(2, 2))._neg_view()),  # the neg bit resolved
    ("transposed", lambda: torch.ones(2, 2).t()),
    ("plain_subclass", lambda: torch.ones(2, 2).as_subclass(type("Plain", (torch.Tensor,), {}))),
    ("np_big_endian", lambda: np.ones((2, 2), ">f4")),
    ("np_fortran", lambda: np.asfortranarray(np.ones((2, 2), np.float32))),
]


@pytest.mark.parametrize("kind,make", GOOD, ids=[k[0] for k in GOOD])
def test_accepted_argument(exe, kind, make):
    out = exe(make())
    assert np.allclose(np.asarray(out), np.ones((2, 2))), out


def test_save_params_names_the_param():
    m = traceir.Module.parse(GRAPH, params={"fc.weight": torch.ones(2, 2).to_sparse()})
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(TypeError, match="param 'fc.weight': a torch.sparse_coo tensor"):
            m.save_params(os.path.join(d, "w.safetensors"))
        assert os.listdir(d) == []
