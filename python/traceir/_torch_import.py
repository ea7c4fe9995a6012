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


class _Writer:
    def __init__(self):
        self.lines = []
        self.values = {}   # fx node -> SSA name (or list of names for multi-results)
        self.types = {}    # SSA name -> MLIR type
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


def _schema_positional(target, args, kwargs):
    """Positional arguments of an ATen call, kwargs placed by the schema and
    the defaults before them filled in."""
    if not kwargs:
        return list(args)
    schema = target._schema
    out = list(args)
    for i, arg in enumerate(schema.arguments):
        if i < len(out):
            continue
        if arg.kwarg_only:
            continue
        if any(a.name == arg.name for a in schema.arguments[i:]) and arg.name in kwargs:
            out.append(kwargs[arg.name])
        elif any(a.name in kwargs for a in schema.arguments[i + 1:] if not a.kwarg_only):
            out.append(arg.default_value)
        else:
            break
    return out


def import_exported(model, args, kwargs):
    ep = torch.export.export(model, tuple(args), kwargs or {})
    sig = ep.graph_signature
    state = {**dict(model.named_parameters(remove_duplicate=False)),
             **dict(model.named_buffers(remove_duplicate=False))}
    params = {}
    w = _Writer()
    header = []
    user_names = iter(input_names(model.forward, args, kwargs))
    for spec in sig.input_specs:
        kind = spec.kind.name
        node_name = spec.arg.name
        node = next(n for n in ep.graph.nodes if n.op == "placeholder" and n.name == node_name)
        val = node.meta["val"]
        if kind in ("PARAMETER", "BUFFER"):
            target = spec.target
            ssa = w.fresh(target.replace(".", "_"))
            typ = tensor_type(val, f"parameter '{target}'")
            header.append(f'{ssa}: {typ} {{trace.param = "{target}"}}')
            params[target] = (state[target] if target in state else ep.state_dict[target]).detach()
        elif kind == "CONSTANT_TENSOR":
            target = spec.target
            ssa = w.fresh(target)
            typ = tensor_type(val, f"constant '{target}'")
            w.lines.append(f"  {ssa} = constant {dense_literal(ep.constants[target])} : {typ}")
        elif kind == "USER_INPUT":
            if not isinstance(val, torch.Tensor):
                continue
            name = next(user_names, node_name)
            ssa = w.fresh(name.replace(".", "_"))
            typ = tensor_type(val, f"input '{name}'")
            header.append(f'{ssa}: {typ} {{trace.input = "{name}"}}')
        else:
            _fail(f"torch.export input kind {kind} ({node_name}) is not supported")
        w.values[node] = ssa
        w.types[ssa] = typ

    import operator
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:
            src, idx = node.args
            results = w.values[src]
            if not isinstance(results, list):
                _fail(f"getitem of the single result of {src.name}")
            w.values[node] = results[idx]
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            _fail(f"{node.name}: cannot import the call of {node.target} (not an ATen op)")
        op = node.target._schema.name.split("::", 1)[-1]
        what = f"op '{op}' ({node.name})"
        cconv_operands, operand_types, scalars = [], [], []
        pieces = []

        def operand(a):
            if isinstance(a, torch.fx.Node):
                v = w.values[a]
                if isinstance(v, list):
                    _fail(f"{what}: an operand is the whole tuple result of {a.name}")
                pieces.append(v)
                operand_types.append(w.types[v])
                return True
            return False

        for a in _schema_positional(node.target, node.args, node.kwargs):
            if operand(a):
                continue
            if isinstance(a, (list, tuple)) and a and all(isinstance(x, torch.fx.Node) for x in a):
                for x in a:
                    operand(x)
                continue
            if isinstance(a, (list, tuple)) and any(isinstance(x, torch.fx.Node) for x in a):
                # e.g. index lists with None holes: keep it inspectable.
                _fail(f"{what}: a list mixing tensors and scalars is not supported")
            pieces.append(literal(a, what))
        val = node.meta.get("val")
        results = list(val) if isinstance(val, (tuple, list)) else [val]
        if not results or not all(isinstance(r, torch.Tensor) for r in results):
            _fail(f"{what}: results that are not tensors ({val!r})")
        result_types = [tensor_type(r, f"result of {what}") for r in results]
        ssa = w.fresh(node.name)
        if len(results) == 1:
            lhs = ssa
            w.values[node] = ssa
            w.types[ssa] = result_types[0]
            rtype = result_types[0]
        else:
            lhs = f"{ssa}:{len(results)}"
            names = [f"{ssa}#{i}" for i in range(len(results))]
            w.values[node] = names
            for n, t in zip(names, result_types):
                w.types[n] = t
            rtype = "(" + ", ".join(result_types) + ")"
        loc = location(node)
        w.lines.append(f'  {lhs} = pyop "{op}"({", ".join(pieces)}) : '
                       f'({", ".join(operand_types)}) -> {rtype}' + (f" {loc}" if loc else ""))

    outputs = []
    for spec in sig.output_specs:
        if spec.kind.name != "USER_OUTPUT":
            _fail(f"torch.export output kind {spec.kind.name} is not supported")
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    for a in tree_flatten(out_node.args[0])[0]:
        if not isinstance(a, torch.fx.Node):
            _fail(f"a non-tensor output ({a!r})")
        v = w.values[a]
        outputs.append(v)
    out_types = [w.types[v] for v in outputs]
    ret_type = out_types[0] if len(out_types) == 1 else "(" + ", ".join(out_types) + ")"
    name = type(model).__name__
    text = [f"trace.graph @{name}({', '.join(header)}) -> {ret_type} {{"]
    text += w.lines
    text.append(f"  ret {', '.join(outputs)} : {', '.join(out_types)}")
    text.append("}")
    return "\n".join(text) + "\n", params, ep.call_spec.out_spec


def import_model(model, args, kwargs, method):
    from . import Module
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"from_torch() takes a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"from_torch() takes the example inputs as a tuple, got {type(args).__name__}")
    if method == "export":
        text, params, out_spec = import_exported(model, args, kwargs)
    elif method == "jit":
        from ._jit_import import import_traced
        text, params, out_spec = import_traced(model, args, kwargs)
    else:
        raise ValueError(f"unknown import method '{method}' (expected 'export' or 'jit')")
    return Module(text, params, name=f"<{type(model).__name__}>", out_spec=out_spec)
