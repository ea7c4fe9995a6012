"""torch.jit.trace graphs to TraceIR (from_torch(method="jit")), built
through traceir.ir's builder as _torch_import builds torch.export's
(_import_common.GraphBuilder: locations, scalars and types alike).

The traced graph is walked once and each ATen call is also run on the
example inputs, which gives every result's exact type (TorchScript's traced
types are not always complete) and checks the call. Parameters are found by
their prim::GetAttr paths (state_dict names), scalars come from
prim::Constant and list/tuple construction, and size arithmetic (aten::size,
prim::NumToTensor, aten::Int) folds to constants: shapes are static.
"""
import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from ._import_common import GraphBuilder, build_decomposed, decomposed_form, fail, flat_call_args, \
    input_names, jit_location, quiet_export
from .ir import Value

# TorchScript records convolutions as aten::_convolution: (input, weight,
# bias, stride, padding, dilation, transposed, output_padding, groups,
# benchmark, deterministic, cudnn_enabled[, allow_tf32]). A 2-D one that is
# not transposed becomes conv2d (its im2col + GEMM kernels and lowering), as
# from_torch's rewrite of aten.convolution does; every other one is the
# registry's convolution, without the backend flags.
def _convolution_as_registry_op(args, results):
    if not args[6] and len(results[0].shape) == 4:
        return "conv2d", list(args[:6]) + [args[8]]
    return "convolution", list(args[:9])


REWRITES = {"_convolution": _convolution_as_registry_op}
FOLDED = {"aten::size", "aten::Int", "prim::NumToTensor", "aten::ScalarImplicit"}


# c10::ScalarType's values, which TorchScript records a `dtype` argument as
# (an int): the exporters and the registry name dtypes ("torch.float64").
_SCALAR_TYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                 torch.float16, torch.float32, torch.float64, torch.complex32,
                 torch.complex64, torch.complex128, torch.bool, torch.qint8,
                 torch.quint8, torch.qint32, torch.bfloat16]


class _Folded:
    """A 0-d tensor that size arithmetic or constant construction folded
    (torch.tensor(0.5), x.size(0) // 2 before aten::Int): a Python number
    where a number is read, a constant of its own dtype where a tensor is."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.value = None  # its trace.constant, made on first use as a tensor


def _is_tensor_type(t):
    return isinstance(t, torch._C.TensorType) or (
        isinstance(t, torch._C.OptionalType) and isinstance(t.getElementType(), torch._C.TensorType))


def _is_tensor(v):
    """Whether `v` (an argument as built) is or holds a graph Value."""
    if isinstance(v, (list, tuple)):
        return any(_is_tensor(x) for x in v)
    return isinstance(v, Value)


def _run(node, values, fold):
    """Calls the node's ATen overload on example values (kwarg-only
    arguments by name). With `fold`, Python numbers stand for the 0-d
    tensors of size arithmetic."""
    schema = torch._C.parse_schema(node.schema())
    name = schema.name.split("::", 1)[1]
    fn = getattr(getattr(torch.ops.aten, name), schema.overload_name or "default")
    args, kwargs = [], {}
    for spec, v in zip(schema.arguments, values):
        if fold and isinstance(v, (int, float)) and str(spec.type).startswith("Tensor"):
            v = torch.tensor(v)
        if spec.kwarg_only:
            kwargs[spec.name] = v
        else:
            args.append(v)
    return fn(*args, **kwargs)


def import_traced(model, args, kwargs):
    if kwargs:
        raise TypeError("method='jit' takes positional example inputs only")
    live = {**dict(model.named_parameters(remove_duplicate=False)),
            **dict(model.named_buffers(remove_duplicate=False))}
    # Tracing runs the model (a training-mode BatchNorm updates its running
    # statistics): import the state from before, and give it back after.
    state = {k: v.detach().clone() for k, v in live.items()}
    try:
        traced = quiet_export(lambda: torch.jit.trace(model, tuple(args), check_trace=False))
    finally:
        with torch.no_grad():
            for k, v in live.items():
                v.copy_(state[k])
    graph = traced.inlined_graph
    b = GraphBuilder(model, type(model).__name__)
    params = {}
    # Each TorchScript value -> (Value or Python value, example value).
    env = {}
    inputs = list(graph.inputs())
    env[inputs[0].unique()] = ("module", "")
    names = iter(input_names(model.forward, args, None))
    for value, arg in zip(inputs[1:], args):
        leaves, spec = tree_flatten(arg)
        built = [b.argument("input", next(names), leaf) for leaf in leaves]
        env[value.unique()] = (tree_unflatten(built, spec), arg)

    def get(v):
        return env[v.unique()]

    def as_arg(built, spec_type, node):
        """An input as built, for an argument of TorchScript type
        `spec_type`: a folded 0-d tensor becomes a constant where a tensor
        is taken and a number elsewhere; an int given for a ScalarType is
        that dtype."""
        if isinstance(built, _Folded):
            if not _is_tensor_type(spec_type):
                return built.tensor.item()
            if built.value is None:
                built.value = b.constant(built.tensor, location=jit_location(node, b.here))
            return built.value
        if isinstance(built, (list, tuple)) and isinstance(spec_type, torch._C.ListType):
            elem = spec_type.getElementType()
            return type(built)(as_arg(x, elem, node) for x in built)
        # A schema's real type says ScalarType where TorchScript's says int.
        if "ScalarType" in str(spec_type) and isinstance(built, int) \
                and not isinstance(built, bool) and 0 <= built < len(_SCALAR_TYPES):
            return _SCALAR_TYPES[built]
        return built

    for node in graph.nodes():
        kind = node.kind()
        outs = list(node.outputs())
        if kind == "prim::GetAttr":
            base = get(node.input())[1] if get(node.input())[0] == "module" else None
            path = (base + "." if base else "") + node.s("name")
            if path in state:
                if path not in params:
                    params[path] = state[path]
                    env[("param", path)] = b.argument("param", path, state[path])
                # Re-running the calls may mutate their example: a copy.
                env[outs[0].unique()] = (env[("param", path)], state[path].clone())
            else:
                env[outs[0].unique()] = ("module", path)
        elif kind == "prim::Constant":
            val = outs[0].toIValue()
            if isinstance(val, torch.Tensor):
                env[outs[0].unique()] = (b.constant(val, location=jit_location(node, b.here)),
                                         val)
            else:
                env[outs[0].unique()] = (val, val)
        elif kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            items = [get(i) for i in node.inputs()]
            make = list if kind == "prim::ListConstruct" else tuple
            built = [as_arg(i[0], x.type(), node) for i, x in zip(items, node.inputs())]
            env[outs[0].unique()] = (make(built), make(i[1] for i in items))
        elif kind in ("prim::ListUnpack", "prim::TupleUnpack"):
            built, vals = get(node.input())
            for o, s, v in zip(outs, built, vals):
                env[o.unique()] = (s, v)
        elif kind in FOLDED:
            vals = [get(i)[1] for i in node.inputs()]
            if kind == "aten::size":
                res = vals[0].size(*vals[1:])
            elif kind == "prim::NumToTensor" or kind == "aten::ScalarImplicit":
                res = vals[0] if not isinstance(vals[0], torch.Tensor) else vals[0].item()
            else:
                res = int(vals[0])
            env[outs[0].unique()] = (res, res)
        elif kind.startswith("aten::") and not any(_is_tensor(get(i)[0]) for i in node.inputs()):
            # Size arithmetic (head_dim = embed_dim // num_heads): static
            # shapes make it a constant.
            res = _run(node, [get(i)[1] for i in node.inputs()], fold=True)
            if isinstance(res, torch.Tensor) and res.dim() == 0:
                env[outs[0].unique()] = (_Folded(res), res)
            elif isinstance(res, torch.Tensor):
                env[outs[0].unique()] = (b.constant(res, location=jit_location(node, b.here)),
                                         res)
            else:
                env[outs[0].unique()] = (res, res)
        elif kind.startswith("aten::"):
            op = kind.split("::", 1)[1]
            ins = [get(i) for i in node.inputs()]
            specs = [spec.real_type for spec in torch._C.parse_schema(node.schema()).arguments]
            example = [i[1].item() if isinstance(i[0], _Folded) and not _is_tensor_type(t)
                       else i[1] for i, t in zip(ins, specs)]
            results = _run(node, example, fold=False)
            results = list(results) if isinstance(results, (tuple, list)) else [results]
            call_args = [as_arg(i[0], t, node) for i, t in zip(ins, specs)]
            rewrite = REWRITES.get(op)
            if rewrite and (r := rewrite(call_args, results)):
                op, call_args = r
            what = f"op '{op}'"
            flat = flat_call_args(call_args, what)
            loc, label = jit_location(node, b.here), outs[0].debugName()
            # Nodes keep fx-style names (the op's); errors name TorchScript's value.
            rewritten = decomposed_form(op, flat, results, set(range(len(results))))
            if rewritten is not None:
                built = build_decomposed(b, *rewritten, loc, label=label)
            else:
                built = b.call(op, flat, results, loc, label=label)
            if len(outs) == 1 and isinstance(outs[0].type(), torch._C.ListType):
                # A tensor list (chunk, split): prim::ListUnpack takes it apart.
                env[outs[0].unique()] = (built, results)
            elif len(outs) == 1 and isinstance(built, Value):
                env[outs[0].unique()] = (built, results[0])
            else:
                for o, s, v in zip(outs, built, results):
                    env[o.unique()] = (s, v)
        else:
            fail(f"cannot import the TorchScript node {kind} (method='jit')")
    ret = list(graph.return_node().inputs())[0]
    built, vals = get(ret)
    built = as_arg(built, ret.type(), graph.return_node())
    flat, out_spec = tree_flatten(built)
    if not all(isinstance(v, Value) for v in flat):
        fail("the traced model returns something other than tensors")
    return b.finish(flat, params, out_spec)
