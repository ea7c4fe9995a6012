"""PyTorch models to TraceIR: torch.export's ATen graph (or aot_autograd's
joint forward+backward graph) built as one `trace.graph` in ANF through
traceir.ir's builder (_import_common.GraphBuilder; _jit_import does the same
for torch.jit.trace).

Every call becomes `trace.pyop` named after its ATen op (`aten::linear` ->
"linear"), with tensor operands (tensor lists flattened in place) and Python
scalars re-interleaved by the calling convention, its result types those of
torch's example values and its node named as torch.fx names it; ops the
registry does not know are kept the same way, so the graph stays
inspectable and the runtime names them if asked to run them. Multi-result
ops are one pyop with several results. Each op's location is the module
path (a NameLoc) around the innermost file:line of the user's code (or of
PyTorch's, for library modules); see _import_common for the rest.
"""
import operator

import torch
from torch.utils._pytree import tree_flatten

from ._import_common import IMPORT_FORMS, GraphBuilder, build_decomposed, decomposed_form, fail, \
    flat_call_args, fx_location, input_names, quiet_export
from ._traceir import kernel_ops
from .ir import Value


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
            default = arg.default_value
            if arg.name == "dtype" and type(default) is int:
                # randperm's dtype=4: a c10::ScalarType's number (the
                # schema's type says int).
                from ._jit_import import _SCALAR_TYPES
                default = _SCALAR_TYPES[default]
            out.append(default)
        else:
            break
    return out


_OP_NAMES = {}  # OpOverload -> its op name ("linear")


def _op_name(target):
    name = _OP_NAMES.get(target)
    if name is None:
        name = _OP_NAMES[target] = target._schema.name.split("::", 1)[-1]
    return name


_SYM_OPS = {"sym_size", "sym_stride", "sym_numel", "sym_storage_offset"}


def _alias(target):
    """'view' when ATen's op returns a view of its first operand, 'write'
    when it writes it in place (add_, hardtanh_), else None."""
    returns = target._schema.returns
    info = returns[0].alias_info if returns else None
    if info is None:
        return None
    return "write" if info.is_write else "view"


class _Layouts:
    """TraceIR's layout of each tensor of an exported graph, beside eager's.

    torch.export records `view` where eager's strides allow one, and
    eager's strides are not TraceIR's: PyTorch's CPU attention returns its
    output laid out as [B, S, H, D], so transpose(1, 2) then view is a view
    there, while every fresh TraceIR result is contiguous and the view is
    refused. Each value gets a meta tensor with TraceIR's layout (fresh
    results contiguous, views applied by ATen itself, in-place results
    their operand's), and a `view` that TraceIR's layout does not allow
    becomes `reshape`, which views where it can and copies where it must.
    That is the same value, and only the same tensor where nothing writes
    in place: a graph with an in-place op keeps its views as they are."""

    def __init__(self, graph):
        # Any op that writes an operand (add_, index_put_, copy_), not only
        # those returning it.
        self.functional = not any(
            n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
            and n.target._schema.is_mutable for n in graph.nodes)
        self.meta = {}

    def of(self, node):
        """TraceIR's layout of `node` as a meta tensor (None: not a tensor)."""
        got = self.meta.get(node)
        if got is None:
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor) or _symbols(val):
                return None  # a size only a run knows: the import fails on it
            got = self.meta[node] = torch.empty(val.shape, dtype=val.dtype, device="meta")
        return got

    def op(self, node, op):
        """The op to import `node` (calling ATen op `op`) as."""
        if not self.functional or op != "view" or _alias(node.target) != "view":
            return op
        src = node.args[0]
        if not isinstance(src, torch.fx.Node) or self.of(src) is None:
            return op
        try:
            self.meta[node] = torch.ops.aten.view(self.of(src), node.args[1])
            return op
        except RuntimeError:  # not a view of TraceIR's layout
            self.meta[node] = torch.ops.aten.reshape(self.of(src), node.args[1])
            return "reshape"

    def record(self, node):
        """Tracks a node built as itself: a view's layout from its operand's."""
        kind = _alias(node.target)
        src = node.args[0] if node.args else None
        if kind is None or node in self.meta or not isinstance(src, torch.fx.Node) \
                or self.of(src) is None:
            return
        if kind == "write":
            self.meta[node] = self.of(src)
            return
        try:
            meta_args = [self.of(a) if isinstance(a, torch.fx.Node) else a for a in node.args]
            out = node.target(*meta_args, **node.kwargs)
        except Exception:  # noqa: BLE001 - untracked: contiguous, as a fresh result
            return
        if isinstance(out, (torch.Tensor, list, tuple)):
            self.meta[node] = out

    def getitem(self, node, src, idx):
        """An element of a multi-result view op (split's pieces)."""
        got = self.meta.get(src)
        if isinstance(got, (list, tuple)) and isinstance(got[idx], torch.Tensor):
            self.meta[node] = got[idx]


def _symbols(val):
    """The free symbols of the sizes in a node's value (a SymInt, or a
    tensor or tuple of them with symbolic sizes); empty where all are
    static."""
    syms = set()
    for v in val if isinstance(val, (tuple, list)) else [val]:
        if isinstance(v, torch.Tensor):
            sizes = list(v.shape)
        elif isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            sizes = [v]
        else:
            continue
        for s in sizes:
            if not isinstance(s, int):
                syms |= set(s.node.expr.free_symbols)
    return syms


def _where(node, b):
    """The node's source as " at file:line", or nothing."""
    loc = fx_location(node, b.here)
    if isinstance(loc, tuple) and loc[1]:
        return f" at {loc[1]}:{loc[2]}"
    return ""


def _data_dependent(b, node, what, syms, producers):
    """Fails for a node whose value has a size only a run knows, naming the
    op that made that size (nonzero, masked_select, unique, ...) and its
    source rather than the node that merely reads it."""
    sym = sorted(syms, key=str)[0]
    src = producers.get(sym)
    tail = ("; TraceIR needs static shapes: every size known when the graph is "
            "imported (no nonzero, masked_select, unique or other op whose result's "
            "shape depends on its input's values)")
    if src is None:
        fail(f"{node.name}: {what} has size {sym}, known only when the graph runs{tail}")
    made = f"{_op_name(src.target)} ({src.name}){_where(src, b)}"
    if src is node:
        fail(f"{made}: its result's size {sym} depends on its input's values, known only "
             f"when the graph runs{tail}")
    fail(f"{made}: its result's size {sym} depends on its input's values, known only "
         f"when the graph runs, and {node.name} reads it{tail}")


def build_fx_graph(b, graph, placeholders, out_node_args):
    """Builds the call_function nodes of an ATen FX graph (torch.export's or
    aot_autograd's) with GraphBuilder `b`; `placeholders` maps placeholder
    nodes to Values. Returns the output Values."""
    values = dict(placeholders)
    layouts = _Layouts(graph)
    # The op that made each size only a run knows (u0: nonzero's row
    # count): the first call whose value has it (an input's symbolic size,
    # from a dynamic export, has none).
    producers = {}
    for n in graph.nodes:
        if n.op != "call_function" or not isinstance(n.target, torch._ops.OpOverload):
            continue
        for sym in _symbols(n.meta.get("val")):
            producers.setdefault(sym, n)

    def value_of(a):
        if isinstance(a, torch.fx.Node):
            v = values[a]
            if isinstance(v, list):
                fail(f"an operand is the whole tuple result of {a.name}")
            return v
        if isinstance(a, (list, tuple)):
            return type(a)(value_of(x) for x in a)
        return a

    for node in graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem:
            src, idx = node.args
            if not isinstance(values[src], list):
                fail(f"getitem of the single result of {src.name}")
            values[node] = values[src][idx]
            layouts.getitem(node, src, idx)
            continue
        if getattr(node.target, "__module__", None) in ("_operator", "math") and \
                type(node.meta.get("val")) in (int, float, bool):
            # Arithmetic on sizes (operator.mul of two sym_size results): its
            # value where the shapes are static.
            values[node] = node.meta["val"]
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            fail(f"{node.name}: cannot import the call of {node.target} (not an ATen op)")
        op = layouts.op(node, _op_name(node.target))
        layouts.record(node)
        if op.startswith("_assert") and not node.users:
            continue  # a check on metadata export already verified; no value
        if node.target is torch.ops.prims.convert_element_type.default:
            # The dtype cast torch._refs decompositions leave (renorm's in
            # half dtypes): (self, dtype), which aten._to_copy reads alike.
            op = "_to_copy"
        elif node.target.namespace != "aten":
            fail(f"{node.name}: {node.target} is not an ATen op")
        if op in _SYM_OPS:
            # A size, stride, numel or offset: a Python int where the shapes
            # are static, as the scalar operand of the ops that read it.
            val = node.meta.get("val")
            if type(val) is not int:
                _data_dependent(b, node, op, _symbols(val) or {val}, producers)
            values[node] = val
            continue
        if op == "_local_scalar_dense":
            fail(f"{node.name}: reads a tensor's value into a Python number (.item()); a "
                 "TraceIR graph's scalars are known when it is imported")
        what = f"op '{op}' ({node.name})"
        val = node.meta.get("val")
        syms = _symbols(val)
        if syms:
            _data_dependent(b, node, f"the result of {op}", syms, producers)
        args = flat_call_args([value_of(a) for a in _schema_positional(node.target, node.args,
                                                                       node.kwargs)], what)
        results = list(val) if isinstance(val, (tuple, list)) else [val]
        if None in results and any(isinstance(r, torch.Tensor) for r in results):
            # A result the op does not compute (convolution_backward's
            # output_mask): an empty tensor, as the registry infers it.
            dtype = next(r.dtype for r in results if isinstance(r, torch.Tensor))
            results = [torch.empty(0, dtype=dtype) if r is None else r for r in results]
        loc = fx_location(node, b.here)
        used = {u.args[1] for u in node.users if u.target is operator.getitem}
        rewritten = decomposed_form(op, args, results, used)
        if rewritten is not None:
            values[node] = build_decomposed(b, *rewritten, loc, node.name)
            continue
        names = b.call(op, args, results, loc, node.name)
        values[node] = names[0] if len(names) == 1 else names
    outputs = []
    for a in tree_flatten(out_node_args)[0]:
        if not isinstance(a, torch.fx.Node):
            fail(f"a non-tensor output ({a!r})")
        v = value_of(a)
        if not isinstance(v, Value):
            fail(f"a non-tensor output ({a.name}: {v!r})")
        outputs.append(v)
    return outputs


def _keep_table(supported):
    """torch.export's core ATen decompositions less those of the ops
    TraceIR runs itself (linear, scaled_dot_product_attention, lstm,
    layer_norm, ...), which stay whole."""
    table = torch.export.default_decompositions()
    for op in list(table):
        if op.name().split("::", 1)[-1].split(".", 1)[0] in supported:
            del table[op]
    return table


def _missing(graph, supported):
    """The ATen ops an FX graph calls that are neither ops with a kernel nor
    ones the importer rewrites (decomposed_form)."""
    return {n.target for n in graph.nodes
            if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
            and _op_name(n.target) not in supported and _op_name(n.target) not in IMPORT_FORMS
            and _op_name(n.target) not in _SYM_OPS and not _op_name(n.target).startswith("_assert")}


def _unsupported(ep, supported):
    """Whether a call of the exported graph is an op TraceIR cannot run."""
    return bool(_missing(ep.graph, supported))


def _aten_only(graph):
    return all(n.target.namespace == "aten" for n in graph.nodes
               if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload))


def decompose_rest(ep, supported, rounds=3):
    """The ops still without a kernel after the core ATen table, which
    keeps many whole (addmv, var_mean, exp2, diagonal_scatter, ...):
    PyTorch's full decomposition table (torch._decomp), one op at a time,
    kept where the result calls ATen ops only (a reference decomposition
    may call prims, which TraceIR does not import); then the ops those
    bring in, for a few rounds. What is left is reported as unsupported."""
    from torch._decomp import decomposition_table
    tried = set()
    for _ in range(rounds):
        todo = [op for op in _missing(ep.graph, supported)
                if op in decomposition_table and op not in tried]
        if not todo:
            break
        for op in todo:
            tried.add(op)
            try:
                candidate = quiet_export(
                    lambda: ep.run_decompositions({op: decomposition_table[op]}))
            except Exception:  # noqa: BLE001 - a decomposition that does not trace is not used
                continue
            if _aten_only(candidate.graph):
                ep = candidate
    return ep


def _grad_mode_regions(graph):
    """Whether the exported graph runs a region of its forward under another
    grad mode (torch.no_grad() or enable_grad() inside forward): torch.export
    keeps such a region as a wrap_with_set_grad_enabled call of a
    submodule."""
    hop = getattr(torch.ops.higher_order, "wrap_with_set_grad_enabled", None)
    return hop is not None and any(n.op == "call_function" and n.target is hop
                                   for n in graph.nodes)


def import_exported(model, args, kwargs, decompose=None):
    ep = quiet_export(lambda: torch.export.export(model, tuple(args), kwargs or {}))
    if _grad_mode_regions(ep.graph):
        # Grad mode does not change a forward's values: the inference IR,
        # with no decompositions, has the region's ATen calls inline.
        ep = quiet_export(lambda: ep.run_decompositions({}))
    if decompose:
        ep = quiet_export(ep.run_decompositions)
    elif decompose is None:
        # Only a graph with an op TraceIR lacks pays for decomposing, and
        # then the ops it has stay whole.
        supported = set(kernel_ops("cpu"))
        if _unsupported(ep, supported):
            ep = quiet_export(lambda: ep.run_decompositions(_keep_table(supported)))
            ep = decompose_rest(ep, supported)
    sig = ep.graph_signature
    state = {**dict(model.named_parameters(remove_duplicate=False)),
             **dict(model.named_buffers(remove_duplicate=False))}
    params = {}
    b = GraphBuilder(model, type(model).__name__)
    placeholders = {}
    user_names = iter(input_names(model.forward, args, kwargs))
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for spec in sig.input_specs:
        kind = spec.kind.name
        node = nodes[spec.arg.name]
        val = node.meta["val"]
        if kind in ("PARAMETER", "BUFFER"):
            placeholders[node] = b.argument("param", spec.target, val)
            params[spec.target] = (state[spec.target] if spec.target in state
                                   else ep.state_dict[spec.target]).detach()
        elif kind == "CONSTANT_TENSOR":
            # A lifted constant (a tensor attribute that is no parameter or
            # buffer), by its placeholder's name.
            placeholders[node] = b.constant(ep.constants[spec.target], node.name)
        elif kind == "USER_INPUT":
            if isinstance(val, torch.Tensor):
                placeholders[node] = b.argument("input", next(user_names, node.name), val)
        else:
            fail(f"torch.export input kind {kind} ({node.name}) is not supported")
    for spec in sig.output_specs:
        if spec.kind.name != "USER_OUTPUT":
            fail(f"torch.export output kind {spec.kind.name} is not supported")
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    outputs = build_fx_graph(b, ep.graph, placeholders, out_node.args[0])
    return b.finish(outputs, params, ep.call_spec.out_spec)


def import_joint(model, args, loss_index=0):
    """The joint forward+backward graph of a training step (aot_autograd):
    the model returns a tuple whose element `loss_index` is the scalar loss;
    the graph's outputs are the buffers the step updates (training batch
    norm's running statistics), the forward's outputs, then a gradient per
    parameter name in `named_parameters(remove_duplicate=False)` order (a
    tied weight gets one part per name)."""
    from torch._functorch.aot_autograd import aot_export_module
    # Decomposed as import_exported does: the ops TraceIR has kernels for
    # stay whole.
    table = _keep_table(set(kernel_ops("cpu")))
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def export():
        # Attention through PyTorch's math backend: its backward is made of
        # ops TraceIR runs (the CPU flash kernel's backward is one op).
        with sdpa_kernel(SDPBackend.MATH):
            return aot_export_module(model, tuple(args), trace_joint=True,
                                     output_loss_index=loss_index, decompositions=table)
    gm, sig = quiet_export(export)
    state = dict(model.named_parameters(remove_duplicate=False))
    state.update(dict(model.named_buffers(remove_duplicate=False)))
    b = GraphBuilder(model, type(model).__name__ + "_train_step")
    placeholders = {}
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    names = list(sig.parameters) + list(sig.buffers)
    user = iter(input_names(model.forward, args, None))
    params = {}
    for i, node in enumerate(phs):
        val = node.meta["val"]
        if i < len(names):
            placeholders[node] = b.argument("param", names[i], val)
            params[names[i]] = state[names[i]].detach()
        else:
            placeholders[node] = b.argument("input", next(user, node.name), val)
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            # A tensor the model made from constants (GPT-2's attention
            # bias), which aot_autograd keeps as an attribute.
            placeholders[node] = b.constant(getattr(gm, node.target).detach(), node.name)
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs = build_fx_graph(b, gm.graph, placeholders, out_node.args[0])
    return b.finish(outputs, params, None)


def import_model(model, args, kwargs, method, decompose=None):
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"from_torch() takes a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"from_torch() takes the example inputs as a tuple, got {type(args).__name__}")
    if method == "export":
        return import_exported(model, args, kwargs, decompose)
    if method == "joint":
        if kwargs:
            raise TypeError("method='joint' takes positional example inputs only")
        return import_joint(model, args)
    if method == "jit":
        from ._jit_import import import_traced
        return import_traced(model, args, kwargs)
    raise ValueError(f"unknown import method '{method}' (expected 'export', 'jit' or 'joint')")
