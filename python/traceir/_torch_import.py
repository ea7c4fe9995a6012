"""PyTorch models to TraceIR text: torch.export's ATen graph (or a
torch.jit.trace graph) written as one `trace.graph` in ANF.

Every call becomes `trace.pyop` named after its ATen op (`aten::linear` ->
"linear"), with tensor operands (tensor lists flattened in place) and Python
scalars re-interleaved by the calling convention; ops the registry does not
know are kept the same way, so the graph stays inspectable and the runtime
names them if asked to run them. Multi-result ops are one pyop with several
results. Each op's MLIR location is the module path (a NameLoc) around the
innermost file:line of the user's code (or of PyTorch's, for library
modules).
"""
import inspect
import math
import operator
import os
import re
import struct

import torch
from torch.utils._pytree import tree_flatten

MLIR_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
               torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
               torch.int16: "i16", torch.int8: "i8", torch.uint8: "ui8", torch.bool: "i1"}
TORCH_DIR = os.path.dirname(torch.__file__)


def _fail(msg):
    from . import TraceIRError
    raise TraceIRError(msg)


def tensor_type(t, what):
    if t.dtype not in MLIR_DTYPES:
        _fail(f"{what} has dtype {t.dtype}, which TraceIR cannot hold")
    dims = []
    for d in t.shape:
        if not isinstance(d, int):
            try:
                d = int(d)
            except Exception:  # noqa: BLE001 - a symbolic size
                d = "?"
        dims.append(str(d))
    return "tensor<" + "".join(d + "x" for d in dims) + MLIR_DTYPES[t.dtype] + ">"


def literal(v, what):
    """A Python scalar as TraceIR prints it (see Scalars.h)."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isfinite(v):
            # Python's shortest repr, with the "." MLIR's lexer needs
            # before an exponent: 1e-05 -> 1.0e-05, 2 -> 2.0.
            mantissa, e, exponent = repr(v).partition("e")
            if "." not in mantissa:
                mantissa += ".0"
            return mantissa + e + exponent
        bits = struct.unpack("<Q", struct.pack("<d", v))[0]
        return f"0x{bits:016X} : f64"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, tuple):
        items = [literal(x, what) for x in v]
        return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(literal(x, what) for x in v) + "]"
    if isinstance(v, (torch.dtype, torch.device, torch.memory_format, torch.layout)):
        return literal(str(v), what)
    if isinstance(v, (torch.SymInt, torch.SymFloat)):
        _fail(f"{what}: a symbolic size ({v}); TraceIR imports static shapes")
    _fail(f"{what}: cannot write {type(v).__name__} {v!r} as a TraceIR scalar")


def location(node):
    """`loc("module.path"("file":line:0))` from the node's metadata."""
    file_line = None
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    user = [f for f in frames if not f[0].startswith(TORCH_DIR)]
    if user or frames:
        f, line = (user or frames)[-1]
        file_line = f'"{f}":{line}:0'
    stack = node.meta.get("nn_module_stack") or {}
    path = ""
    if stack:
        path, cls = list(stack.values())[-1]
        cls = cls if isinstance(cls, str) else getattr(cls, "__name__", str(cls))
        path = f"{path} ({cls.rsplit('.', 1)[-1]})" if path else cls.rsplit(".", 1)[-1]
    if file_line and path:
        return f'loc("{path}"({file_line}))'
    if file_line:
        return f"loc({file_line})"
    if path:
        return f'loc("{path}")'
    return ""


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


def dense_literal(t):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    data = t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes()
    return f'dense<"0x{data.hex().upper()}">'


# ATen ops whose registry name differs (same arguments): what F.cross_entropy
# and F.nll_loss record.
ATEN_NAMES = {"cross_entropy_loss": "cross_entropy", "nll_loss_nd": "nll_loss"}


class _Writer:
    """Builds the text of one trace.graph: header arguments, body lines and
    the ret; values are SSA names with their MLIR types."""

    def __init__(self):
        self.header, self.lines = [], []
        self.types = {}  # SSA name -> MLIR type
        self.counter = 0

    def fresh(self, hint):
        # An SSA name is all digits or starts with a letter or _ (MLIR's
        # suffix-id); the printer shows params by their trace.param names.
        name = re.sub(r"[^A-Za-z0-9_.$-]", "_", hint)
        if not name or not (name[0].isalpha() or name[0] == "_"):
            name = "v" + name
        while "%" + name in self.types:
            name = f"{name}_{self.counter}"
            self.counter += 1
        self.types["%" + name] = None
        return "%" + name

    def argument(self, attr, name, tensor):
        ssa = self.fresh(name.replace(".", "_"))
        typ = tensor_type(tensor, f"{'parameter' if attr == 'param' else 'input'} '{name}'")
        self.header.append(f'{ssa}: {typ} {{trace.{attr} = "{name}"}}')
        self.types[ssa] = typ
        return ssa

    def constant(self, hint, tensor):
        ssa = self.fresh(hint)
        typ = tensor_type(tensor, f"constant '{hint}'")
        self.lines.append(f"  {ssa} = constant {dense_literal(tensor)} : {typ}")
        self.types[ssa] = typ
        return ssa

    def call(self, op, args, results, loc, hint):
        """A pyop: `args` are SSA names (str starting with %) or Python
        scalars, in call order; `results` the result tensors (for types).
        Returns the result SSA names."""
        op = ATEN_NAMES.get(op, op)
        what = f"op '{op}' ({hint})"
        pieces, operand_types = [], []
        for a in args:
            if isinstance(a, str) and a.startswith("%"):
                pieces.append(a)
                operand_types.append(self.types[a])
            else:
                pieces.append(literal(a, what))
        if not results or not all(isinstance(r, torch.Tensor) for r in results):
            _fail(f"{what}: results that are not tensors ({results!r})")
        result_types = [tensor_type(r, f"result of {what}") for r in results]
        ssa = self.fresh(hint)
        if len(results) == 1:
            lhs, names = ssa, [ssa]
            rtype = result_types[0]
        else:
            lhs, names = f"{ssa}:{len(results)}", [f"{ssa}#{i}" for i in range(len(results))]
            rtype = "(" + ", ".join(result_types) + ")"
        for n, t in zip(names, result_types):
            self.types[n] = t
        self.lines.append(f'  {lhs} = pyop "{op}"({", ".join(pieces)}) : '
                          f'({", ".join(operand_types)}) -> {rtype}' + (f" {loc}" if loc else ""))
        return names

    def finish(self, graph, outputs):
        out_types = [self.types[v] for v in outputs]
        ret_type = out_types[0] if len(out_types) == 1 else "(" + ", ".join(out_types) + ")"
        text = [f"trace.graph @{graph}({', '.join(self.header)}) -> {ret_type} {{"]
        text += self.lines
        text.append(f"  ret {', '.join(outputs)} : {', '.join(out_types)}")
        text.append("}")
        return "\n".join(text) + "\n"


def _schema_positional(target, args, kwargs):
    """Positional arguments of an ATen call, kwargs placed by the schema and
    the defaults before them filled in."""
    if not kwargs:
        return list(args)
    # Keyword-only arguments count too (sub's alpha): the registry reads
    # every argument by position.
    schema = target._schema
    out = list(args)
    for i, arg in enumerate(schema.arguments):
        if i < len(out):
            continue
        if arg.name in kwargs:
            out.append(kwargs[arg.name])
        elif any(a.name in kwargs for a in schema.arguments[i + 1:]):
            out.append(arg.default_value)
        else:
            break
    return out


def _flat_call_args(values, what):
    """Call arguments with tensor lists flattened in place (cat's tensors,
    lstm's hidden state and weights), as the registry's signatures take them."""
    out = []
    for a in values:
        if isinstance(a, (list, tuple)) and a and all(isinstance(x, str) and x.startswith("%") for x in a):
            out += list(a)
        elif isinstance(a, (list, tuple)) and any(isinstance(x, str) and x.startswith("%") for x in a):
            _fail(f"{what}: a list mixing tensors and scalars is not supported")
        else:
            out.append(a)
    return out


def _decomposed_form(op, args, results, used):
    """The decomposed (core ATen) forms torch.export's run_decompositions()
    emits, as the registry's ops: a list of (op, args, results) calls and a
    function from their result names to the node's value; None to keep
    the op as it is."""
    one = lambda names: names[0]  # noqa: E731
    if op == "convolution" and not args[6] and len(results[0].shape) == 4:
        # (input, weight, bias, stride, padding, dilation, transposed,
        #  output_padding, groups) -> conv2d without the transposed pair.
        return [("conv2d", args[:6] + [args[8]], results)], one
    if op in ("_softmax", "_log_softmax") and not args[2]:
        return [(op[1:], args[:2], results)], one
    if op == "max_pool2d_with_indices" and used <= {0}:
        return [("max_pool2d", args, results[:1])], lambda names: [names[0], None]
    if op == "_native_batch_norm_legit_no_training" and used <= {0}:
        # (input, weight, bias, running_mean, running_var, momentum, eps)
        x, wgt, b, rm, rv, momentum, eps = args
        return ([("batch_norm", [x, wgt, b, rm, rv, False, momentum, eps, False], results[:1])],
                lambda names: [names[0], None, None])
    if op == "split_with_sizes":
        # Each piece is a view: narrow(self, dim, start, length).
        self_, sizes = args[0], args[1]
        dim = args[2] if len(args) > 2 else 0
        calls, start = [], 0
        for size, r in zip(sizes, results):
            calls.append(("narrow", [self_, dim, start, size], [r]))
            start += size
        return calls, list
    return None


def write_fx_graph(w, graph, placeholders, out_node_args):
    """Writes the call_function nodes of an ATen FX graph (torch.export's or
    aot_autograd's); `placeholders` maps placeholder nodes to SSA names."""
    values = dict(placeholders)

    def ssa_of(a):
        if isinstance(a, torch.fx.Node):
            v = values[a]
            if isinstance(v, list):
                _fail(f"an operand is the whole tuple result of {a.name}")
            return v
        if isinstance(a, (list, tuple)):
            return type(a)(ssa_of(x) for x in a)
        return a

    for node in graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:
            src, idx = node.args
            if not isinstance(values[src], list):
                _fail(f"getitem of the single result of {src.name}")
            values[node] = values[src][idx]
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            _fail(f"{node.name}: cannot import the call of {node.target} (not an ATen op)")
        op = node.target._schema.name.split("::", 1)[-1]
        if op.startswith("_assert") and not node.users:
            continue  # a check on metadata export already verified; no value
        what = f"op '{op}' ({node.name})"
        args = _flat_call_args([ssa_of(a) for a in _schema_positional(node.target, node.args, node.kwargs)], what)
        val = node.meta.get("val")
        results = list(val) if isinstance(val, (tuple, list)) else [val]
        used = {u.args[1] for u in node.users if u.target is operator.getitem}
        rewritten = _decomposed_form(op, args, results, used)
        if rewritten is not None:
            calls, pick = rewritten
            names = [w.call(o, a, r, location(node), node.name)[0] for o, a, r in calls]
            values[node] = pick(names)
            continue
        names = w.call(op, args, results, location(node), node.name)
        values[node] = names[0] if len(names) == 1 else names
    outputs = []
    for a in tree_flatten(out_node_args)[0]:
        if not isinstance(a, torch.fx.Node):
            _fail(f"a non-tensor output ({a!r})")
        outputs.append(ssa_of(a))
    return outputs


def _quiet_export(fn):
    """PyTorch warns about its own LSTM/GRU modules' flat weights during
    export; that is not the user's to act on."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*were assigned during export.*")
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        # The caller asked for method="jit" knowing it is deprecated.
        warnings.filterwarnings("ignore", message=r".*torch\.jit\.trace.* is deprecated.*")
        return fn()


def import_exported(model, args, kwargs, decompose=False):
    ep = _quiet_export(lambda: torch.export.export(model, tuple(args), kwargs or {}))
    if decompose:
        ep = _quiet_export(ep.run_decompositions)
    sig = ep.graph_signature
    state = {**dict(model.named_parameters(remove_duplicate=False)),
             **dict(model.named_buffers(remove_duplicate=False))}
    params = {}
    w = _Writer()
    placeholders = {}
    user_names = iter(input_names(model.forward, args, kwargs))
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for spec in sig.input_specs:
        kind = spec.kind.name
        node = nodes[spec.arg.name]
        val = node.meta["val"]
        if kind in ("PARAMETER", "BUFFER"):
            placeholders[node] = w.argument("param", spec.target, val)
            params[spec.target] = (state[spec.target] if spec.target in state
                                   else ep.state_dict[spec.target]).detach()
        elif kind == "CONSTANT_TENSOR":
            placeholders[node] = w.constant(spec.target, ep.constants[spec.target])
        elif kind == "USER_INPUT":
            if isinstance(val, torch.Tensor):
                placeholders[node] = w.argument("input", next(user_names, node.name), val)
        else:
            _fail(f"torch.export input kind {kind} ({node.name}) is not supported")
    for spec in sig.output_specs:
        if spec.kind.name != "USER_OUTPUT":
            _fail(f"torch.export output kind {spec.kind.name} is not supported")
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    outputs = write_fx_graph(w, ep.graph, placeholders, out_node.args[0])
    return w.finish(type(model).__name__, outputs), params, ep.call_spec.out_spec


def import_joint(model, args, loss_index=0):
    """The joint forward+backward graph of a training step (aot_autograd):
    the model returns a tuple whose element `loss_index` is the scalar loss;
    the graph's outputs are the forward's outputs, then the gradients of the
    parameters in `named_parameters()` order."""
    from torch._functorch.aot_autograd import aot_export_module
    gm, sig = _quiet_export(lambda: aot_export_module(
        model, tuple(args), trace_joint=True, output_loss_index=loss_index))
    state = dict(model.named_parameters(remove_duplicate=False))
    state.update(dict(model.named_buffers(remove_duplicate=False)))
    w = _Writer()
    placeholders = {}
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    names = list(sig.parameters) + list(sig.buffers)
    user = iter(input_names(model.forward, args, None))
    params = {}
    for i, node in enumerate(phs):
        val = node.meta["val"]
        if i < len(names):
            placeholders[node] = w.argument("param", names[i], val)
            params[names[i]] = state[names[i]].detach()
        else:
            placeholders[node] = w.argument("input", next(user, node.name), val)
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs = write_fx_graph(w, gm.graph, placeholders, out_node.args[0])
    return w.finish(type(model).__name__ + "_train_step", outputs), params, None


def import_model(model, args, kwargs, method, decompose=False):
    from . import Module
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"from_torch() takes a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"from_torch() takes the example inputs as a tuple, got {type(args).__name__}")
    if method == "export":
        text, params, out_spec = import_exported(model, args, kwargs, decompose)
    elif method == "joint":
        if kwargs:
            raise TypeError("method='joint' takes positional example inputs only")
        text, params, out_spec = import_joint(model, args)
    elif method == "jit":
        from ._jit_import import import_traced
        text, params, out_spec = import_traced(model, args, kwargs)
    else:
        raise ValueError(f"unknown import method '{method}' (expected 'export', 'jit' or 'joint')")
    return Module(text, params, name=f"<{type(model).__name__}>", out_spec=out_spec)
