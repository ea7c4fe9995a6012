"""What the PyTorch importers share: _torch_import (torch.export and
aot_autograd's joint graph) and _jit_import (torch.jit.trace) build their
graph through traceir.ir's builder with GraphBuilder, and read names,
scalars, types and locations off PyTorch the same way. Neither writes MLIR
text: every argument, constant and call is one builder call, each checked
as it is made.

Locations (structured, as `location=` takes them):
- a call: its module path (a NameLoc: "fc1 (Linear)") around the innermost
  file:line of the user's code in the frames PyTorch recorded (of PyTorch's
  code for its library modules; never the importer's own frames), column 0;
- everything with no source position of its own (the module, the graph,
  its parameters and inputs, its ret, torch.export's lifted constants, and a
  call PyTorch recorded no frame for): the model, as file "<MLP>" line 0
  (`loc("<MLP>":0:0)`, where the module's own location has always been).
"""
import inspect
import os
import re

import torch
from torch.utils._pytree import tree_flatten

from .ir import Graph, Value

MLIR_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
               torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
               torch.int16: "i16", torch.int8: "i8", torch.uint8: "ui8", torch.bool: "i1"}
TORCH_DIR = os.path.dirname(torch.__file__)
# The importer's own frames (torch.jit.trace called from here) are no one's
# source position.
TRACEIR_DIR = os.path.dirname(os.path.abspath(__file__))

# ATen ops whose registry name differs (same arguments): what F.cross_entropy
# and F.nll_loss record.
ATEN_NAMES = {"cross_entropy_loss": "cross_entropy", "nll_loss_nd": "nll_loss"}


def fail(msg):
    from . import TraceIRError
    raise TraceIRError(msg)


def _remember(cache, key, value):
    """cache[key] = value, the cache kept small (import after import)."""
    if len(cache) >= 4096:
        cache.clear()
    cache[key] = value
    return value


_TYPES = {}  # (shape, dtype) -> type text


def tensor_type(t, what):
    """The MLIR type text of a tensor (or FakeTensor): `tensor<2x3xf32>`,
    `?` for a symbolic size."""
    shape, dtype = t.shape, t.dtype
    key = (tuple(shape), dtype)
    try:
        return _TYPES[key]
    except (KeyError, TypeError):  # TypeError: a SymInt is not hashable
        pass
    if dtype not in MLIR_DTYPES:
        fail(f"{what} has dtype {dtype}, which TraceIR cannot hold")
    dims = []
    for d in shape:
        if not isinstance(d, int):
            try:
                d = int(d)
            except Exception:  # noqa: BLE001 - a symbolic size
                d = "?"
        dims.append(str(d))
    text = "tensor<" + "".join(d + "x" for d in dims) + MLIR_DTYPES[dtype] + ">"
    if "?" not in dims:
        _remember(_TYPES, key, text)
    return text


_PLAIN = (bool, int, float, str)
_AS_TEXT = (torch.dtype, torch.device, torch.memory_format, torch.layout)


def scalar(v, what):
    """A call's non-tensor argument as the builder takes it (None, bool,
    int, float, str, tuples and lists of them); dtypes, devices, layouts and
    memory formats by their names ("torch.float32")."""
    if v is None or isinstance(v, _PLAIN):
        return v
    if isinstance(v, tuple):
        return tuple(scalar(x, what) for x in v)
    if isinstance(v, list):
        return [scalar(x, what) for x in v]
    if isinstance(v, _AS_TEXT):
        return str(v)
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        fail(f"{what}: a symbolic size ({v}); TraceIR imports static shapes")
    fail(f"{what}: cannot write {type(v).__name__} {v!r} as a TraceIR scalar")


def flat_call_args(values, what):
    """Call arguments with tensor lists flattened in place (the tensors of
    cat, the hidden state and weights of lstm, the optional tensors of
    index.Tensor with their None entries), as the signatures of the
    registry take them."""
    out = []
    for a in values:
        if isinstance(a, (list, tuple)) and any(isinstance(x, Value) for x in a):
            # index.Tensor's and index_put's list of optional tensors keeps
            # its None entries in place (the dims they skip).
            if not all(isinstance(x, Value) or x is None for x in a):
                fail(f"{what}: a list mixing tensors and scalars is not supported")
            out += a
        else:
            out.append(a)
    return out


# The ops without a registry row that decomposed_form rewrites (where its
# conditions hold): the importer does not count them as missing. (It also
# rewrites some ops the registry has, such as convolution to conv2d.)
IMPORT_FORMS = {"_softmax", "_native_batch_norm_legit_no_training",
                "_native_batch_norm_legit_functional", "split_with_sizes", "split", "chunk",
                "unbind", "lift_fresh_copy", "detach", "detach_", "to", "type_as", "var_mean"}


class Earlier:
    """An argument of a decomposed_form call: result `index` of the form's
    call `call` (an earlier one)."""

    def __init__(self, call, index=0):
        self.call, self.index = call, index


def build_decomposed(b, calls, pick, location, name=None, label=None):
    """Builds decomposed_form's calls with GraphBuilder `b`, their Earlier
    arguments resolved; returns the node's value."""
    built = []
    for op, args, results in calls:
        args = [built[a.call][a.index] if isinstance(a, Earlier) else a for a in args]
        built.append(b.call(op, args, results, location, name, label))
    return pick(built)


def decomposed_form(op, args, results, used):
    """Calls the registry has no op for, as the registry's ops: the
    decomposed (core ATen) forms torch.export's run_decompositions() emits,
    and the tensor-list ops both importers meet (chunk, split, unbind), each
    piece a view of its input. `args` are the call's arguments as built,
    `results` its example results, `used` the indices of the results read.
    Returns a list of (op, args, results) calls and a function from their
    results (a list of Values per call) to the node's value (a list for a
    list op), or None to keep the op as it is."""
    one = lambda names: names[0][0]  # noqa: E731
    firsts = lambda names: [n[0] for n in names]  # noqa: E731
    if op == "convolution" and not args[6] and len(results[0].shape) == 4:
        # (input, weight, bias, stride, padding, dilation, transposed,
        #  output_padding, groups) -> conv2d without the transposed pair:
        # conv2d's im2col + GEMM kernels and its lowering. Every other
        # convolution (1-D, 3-D, transposed) stays the registry's own.
        return [("conv2d", args[:6] + [args[8]], results)], one
    if op in ("_softmax", "_log_softmax") and not args[2]:
        return [(op[1:], args[:2], results)], one
    if op == "max_pool2d_with_indices" and used <= {0}:
        return [("max_pool2d", args, results[:1])], lambda names: [names[0][0], None]
    if op == "_native_batch_norm_legit_no_training" and used <= {0}:
        # (input, weight, bias, running_mean, running_var, momentum, eps)
        x, wgt, b, rm, rv, momentum, eps = args
        return ([("batch_norm", [x, wgt, b, rm, rv, False, momentum, eps, False], results[:1])],
                lambda names: [names[0][0], None, None])
    if op == "_native_batch_norm_legit_functional":
        # (input, weight, bias, running_mean, running_var, training,
        #  momentum, eps) -> (out, save_mean, save_rstd, new_running_mean,
        # new_running_var): native_batch_norm updating copies of the running
        # statistics in place, so the graph's buffers stay as they were.
        x, wgt, b, rm, rv, training, momentum, eps = args
        return ([("clone", [rm], results[3:4]), ("clone", [rv], results[4:5]),
                 ("native_batch_norm", [x, wgt, b, Earlier(0), Earlier(1), training, momentum,
                                        eps], results[:3])],
                lambda names: names[2] + [names[0][0], names[1][0]])
    if op in ("split_with_sizes", "split", "chunk") and len(results) >= 1:
        # Each piece is a view: narrow(self, dim, start, length), its
        # length the example piece's (chunk's last piece may be short).
        self_ = args[0]
        dim = args[2] if len(args) > 2 else 0
        calls, start = [], 0
        for r in results:
            size = r.shape[dim]
            calls.append(("narrow", [self_, dim, start, size], [r]))
            start += size
        return calls, firsts
    if op == "unbind":
        dim = args[1] if len(args) > 1 else 0
        return [("select", [args[0], dim, i], [r]) for i, r in enumerate(results)], firsts
    if op == "arange" and args:
        # arange.default (end, ...) and arange.start (start, end, ...), which
        # stay whole once arange has a kernel, as arange.start_step (start,
        # end, step, dtype, ...), the one the registry reads.
        n = next((i for i, a in enumerate(args)
                  if not isinstance(a, (bool, int, float))), len(args))
        head = {1: [0, args[0], 1], 2: [args[0], args[1], 1]}.get(n)
        if head is not None:
            return [("arange", head + args[n:], results)], one
        return None
    if op in ("max", "min") and len(args) == 1:
        # max.default / min.default: the extreme of every element.
        return [("a" + op, args, results)], one
    if op in ("max", "min") and len(args) == 2 and isinstance(args[1], Value):
        # max.other / min.other, run_decompositions' maximum / minimum.
        return [(op + "imum", args, results)], one
    if op == "var_mean" and len(results) == 2:
        # var_mean.correction (self, dim, correction, keepdim), var_mean.dim
        # (self, dim, unbiased, keepdim) or var_mean.default (self,
        # unbiased): var and mean over the same dims.
        x, rest = args[0], list(args[1:])
        if rest and isinstance(rest[0], bool):
            rest = [None, rest[0]]
        dim = rest[0] if rest else None
        correction = rest[1] if len(rest) > 1 else None
        if isinstance(correction, bool):
            correction = int(correction)
        keepdim = bool(rest[2]) if len(rest) > 2 else False
        return ([("var", [x, dim, correction, keepdim], results[:1]),
                 ("mean", [x, dim, keepdim], results[1:])], firsts)
    if op == "lift_fresh_copy":
        return [("clone", args[:1], results)], one
    if op in ("detach", "detach_"):
        return [], lambda names: args[0]  # autograd metadata only
    if op in ("to", "type_as", "_to_copy") and isinstance(args[0], Value) and results:
        # to(dtype), to(device, dtype), to(other), type_as(other): PyTorch
        # returns self itself when nothing changes (copy=False), else a copy
        # in the result's dtype. A flag set after the dtype (copy=True, or a
        # non_blocking this cannot tell from it) makes a copy: the same values.
        dtype = results[0].dtype
        copy = op == "_to_copy" or (op == "to" and any(a is True for a in args[2:]))
        if dtype == args[0].dtype and not copy:
            return [], lambda names: args[0]
        return [("_to_copy", [args[0], dtype], results)], one
    return None


def input_names(fn, args, kwargs):
    """The forward arguments' names for the flattened tensor inputs: `x`,
    or `hidden.0`, `hidden.1` for the leaves of a tuple argument."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"arg{i}"
        leaves, _ = tree_flatten(a)
        if len(leaves) == 1 and leaves[0] is a:
            names.append((base, a))
        else:
            names += [(f"{base}.{j}", leaf) for j, leaf in enumerate(leaves)]
    for k, v in (kwargs or {}).items():
        leaves, _ = tree_flatten(v)
        if len(leaves) == 1 and leaves[0] is v:
            names.append((k, v))
        else:
            names += [(f"{k}.{j}", leaf) for j, leaf in enumerate(leaves)]
    return [n for n, v in names if isinstance(v, torch.Tensor)]


def _source_frame(frames, innermost_last):
    """(file, line) of the innermost frame of the user's code, else of
    PyTorch's, among the frames inside the traced call: those outside the
    innermost frame of the importer (from_torch's caller and beyond) are
    not the model's. None if none."""
    if innermost_last:
        frames = frames[::-1]
    for i, f in enumerate(frames):
        if f[0].startswith(TRACEIR_DIR):
            frames = frames[:i]
            break
    if not frames:
        return None
    user = [f for f in frames if not f[0].startswith(TORCH_DIR)]
    return (user or frames)[0]


_FX_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_FX_LOCATIONS = {}  # (stack trace, module path) -> location


def fx_location(node, default):
    """An FX node's location from its metadata (torch.export's and
    aot_autograd's): (module path, file, line, 0); `default` when PyTorch
    recorded neither."""
    trace = node.meta.get("stack_trace") or ""
    stack = node.meta.get("nn_module_stack") or {}
    path = ""
    if stack:
        path, cls = list(stack.values())[-1]
        cls = cls if isinstance(cls, str) else getattr(cls, "__name__", str(cls))
        path = f"{path} ({cls.rsplit('.', 1)[-1]})" if path else cls.rsplit(".", 1)[-1]
    key = (trace, path)
    loc = _FX_LOCATIONS.get(key)
    if loc is None:
        frame = _source_frame(_FX_FRAME.findall(trace), innermost_last=True)
        if frame is None and not path:
            return default
        file, line = frame or ("", 0)
        loc = _remember(_FX_LOCATIONS, key, (path, file, int(line), 0))
    return loc


_JIT_FRAME = re.compile(r"^(.*)\((\d+)\): \w+$", re.M)
_JIT_LOCATIONS = {}  # source range -> location (None: it names no frame)


def jit_location(node, default):
    """A TorchScript node's location from its source range: ("", file,
    line, 0); `default` when it has none."""
    source = node.sourceRange()
    try:
        loc = _JIT_LOCATIONS[source]
    except KeyError:
        frame = _source_frame(_JIT_FRAME.findall(source), innermost_last=False)
        loc = _remember(_JIT_LOCATIONS, source,
                        ("", frame[0], int(frame[1]), 0) if frame else None)
    return loc or default


def quiet_export(fn):
    """PyTorch warns about its own LSTM/GRU modules' flat weights during
    export; that is not the user's to act on."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*were assigned during export.*")
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        # The caller asked for method="jit" knowing it is deprecated.
        warnings.filterwarnings("ignore", message=r".*torch\.jit\.trace.* is deprecated.*")
        return fn()


class GraphBuilder:
    """One trace.graph of a new Module, built through traceir.ir: arguments,
    constants from tensors, calls whose result types come from the example
    values (so importing never depends on the registry's inference), then
    the outputs. `here` is the model's location (see the module doc)."""

    def __init__(self, model, graph_name):
        from . import Module
        self.name = f"<{type(model).__name__}>"
        self.here = ("", self.name, 0, 0)
        self.module = Module.empty(self.name, self.here)
        self.graph = Graph(graph_name, self.module, location=self.here)

    def argument(self, kind, name, tensor):
        """A parameter (`kind` "param", by its state_dict key) or an input;
        returns its Value."""
        typ = tensor_type(tensor, f"{'parameter' if kind == 'param' else 'input'} '{name}'")
        add = self.graph.add_param if kind == "param" else self.graph.add_input
        return add(name, typ, location=self.here)

    def constant(self, tensor, name=None, location=None):
        """A trace.constant holding `tensor`'s data; returns its Value."""
        tensor_type(tensor, f"constant '{name or 'const'}'")  # the dtype, as for the others
        node = self.graph.constant(tensor, name=name, location=location or self.here)
        return Value(self.module, (node._id, 0, False))

    def call(self, op, args, results, location, name=None, label=None):
        """A pyop: `args` are Values and Python scalars in call order;
        `results` the example result tensors (their types are the results').
        `name` is the node's (torch.fx's); errors say `label` (or name).
        Returns the result Values."""
        op = ATEN_NAMES.get(op, op)
        label = label or name
        what = f"op '{op}'" + (f" ({label})" if label else "")
        if not results or not all(isinstance(r, torch.Tensor) for r in results):
            fail(f"{what}: results that are not tensors ({results!r})")
        types = [tensor_type(r, f"result of {what}") for r in results]
        args = [a if isinstance(a, Value) else scalar(a, what) for a in args]
        node = self.graph.pyop(op, *args, result_types=types, name=name,
                               location=location or self.here)
        module, node_id = self.module, node._id
        return [Value(module, (node_id, i, False)) for i in range(len(types))]

    def finish(self, outputs, params, out_spec):
        """Sets the outputs; returns the Module with its params, verified
        as a whole (each op was as it was made)."""
        self.graph.set_outputs(*outputs)
        m = self.module
        m.verify()
        m.params = dict(params)
        m.out_spec = out_spec
        return m
