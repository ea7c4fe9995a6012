"""Walking a TraceIR module from Python, with torch.fx's names and meanings.

    m = traceir.from_torch(model, (x,))
    g = m.graphs[0]                      # or m.graphs["forward"]
    for node in g.nodes:                 # program order, `ret` last
        print(node.op, node.target, node.args, node.kwargs)
    conv = next(n for n in g.nodes if n.target == "conv2d")
    conv.kwargs["stride"]                # (2, 2)
    conv.args[0].node                    # what feeds it (None for an input)
    g.print_tabular()

Graph, Node and Value are handles into the module the native side holds
(TraceIR/API/IR.h). A handle never dangles: one whose node was erased, or
that predates a pass pipeline which rewrote the module, raises TraceIRError
("node erased", "module changed by a pass") instead of reading freed IR. A
handle keeps its Module alive.
"""
from ._traceir import TraceIRError

__all__ = ["Graph", "Node", "Value", "TensorType"]


class TensorType:
    """A value's type: `text` as MLIR prints it, `shape` (None for an
    unranked tensor, -1 for a dynamic dimension) and `dtype` (a torch dtype
    where torch has one, else the MLIR element type's name)."""

    __slots__ = ("text", "shape", "element_type")

    def __init__(self, info):
        self.text, ranked, shape, self.element_type = info
        self.shape = tuple(shape) if ranked else None

    @property
    def dtype(self):
        return _torch_dtype(self.element_type)

    def __eq__(self, other):
        return isinstance(other, TensorType) and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    def __repr__(self):
        return self.text


_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
           "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "ui8": "uint8",
           "i1": "bool"}


def _torch_dtype(element_type):
    name = _DTYPES.get(element_type)
    if name is None:
        return element_type
    try:
        import torch
    except ImportError:
        return name
    return getattr(torch, name)


class Value:
    """A tensor of a graph: a node's result, or a graph argument (a
    parameter or an input)."""

    __slots__ = ("_module", "_ref")

    def __init__(self, module, ref):
        self._module = module
        self._ref = tuple(ref)

    @property
    def type(self):
        return TensorType(self._module._ir.value_type(self._ref))

    @property
    def shape(self):
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype

    @property
    def node(self):
        """The node that defines it; None for a parameter or an input."""
        node, index, is_arg = self._ref
        self._module._ir.value_type(self._ref)  # raises for a stale handle
        return None if is_arg else Node(self._module, node)

    @property
    def index(self):
        """Which result of its node (or which graph argument) it is."""
        return self._ref[1]

    @property
    def users(self):
        """The nodes that use it, in program order, each once."""
        return [Node(self._module, n) for n in self._module._ir.users(self._ref)]

    @property
    def name(self):
        """The node's name (with `.i` for result i > 0 of a multi-result
        node), or the parameter's or input's name."""
        node, index, is_arg = self._ref
        if is_arg:
            return self._module._ir.graph_args(node)[index][0]
        n = Node(self._module, node)
        return n.name if index == 0 else f"{n.name}.{index}"

    def __eq__(self, other):
        return isinstance(other, Value) and other._module is self._module and \
            other._ref == self._ref

    def __hash__(self):
        return hash(self._ref)

    def __repr__(self):
        try:
            return f"%{self.name}"
        except TraceIRError as e:
            return f"<stale traceir.Value: {e}>"


class Node:
    """One instruction of a graph. `op` is its kind as torch.fx names them
    where they match: "pyop" (a call; fx's "call_function"), "constant",
    "free", "ret" (fx's "output"); `target` is the pyop's op name."""

    __slots__ = ("_module", "_id")

    def __init__(self, module, node_id):
        self._module = module
        self._id = node_id

    def _info(self):
        return self._module._ir.node(self._id)

    @property
    def op(self):
        return self._info()[0]

    @property
    def target(self):
        """The op name of a pyop ("linear"); None for the other kinds."""
        info = self._info()
        return info[1] if info[0] == "pyop" else None

    @property
    def args(self):
        """The argument list as the custom form prints it: tensor Values and
        Python scalars (None, bool, int, float, str, tuples and lists), in
        call order."""
        return tuple(Value(self._module, a) if is_tensor else a
                     for is_tensor, a in self._info()[2])

    @property
    def kwargs(self):
        """The arguments by the names of the registry's schema for the op
        (defaults filled in); {} for an op the registry does not know."""
        from . import _schema
        info = self._info()
        if info[0] != "pyop":
            return {}
        return _schema.bind(info[1], self.args)

    @property
    def scalars(self):
        """The out-of-band Python scalars, in order."""
        return self._info()[4]

    @property
    def cconv(self):
        """One letter per argument: 't' a tensor operand, 's' a scalar."""
        return self._info()[3]

    @property
    def results(self):
        return tuple(Value(self._module, (self._id, i, False))
                     for i in range(len(self._info()[5])))

    @property
    def users(self):
        """The nodes that use any of its results, in program order."""
        seen, out = set(), []
        for r in self.results:
            for u in r.users:
                if u._id not in seen:
                    seen.add(u._id)
                    out.append(u)
        return sorted(out, key=lambda n: self.graph._position(n._id))

    @property
    def location(self):
        """Where it came from, as MLIR prints the location (for an imported
        model: the module path around the user's file:line)."""
        return self._info()[6]

    @property
    def graph(self):
        return Graph(self._module, self._info()[7])

    @property
    def name(self):
        """A unique, stable name: the op name with fx's `_1`, `_2`
        suffixes, in program order (kind names for the other nodes)."""
        return self.graph._names()[self._id]

    def __eq__(self, other):
        return isinstance(other, Node) and other._module is self._module and \
            other._id == self._id

    def __hash__(self):
        return hash(self._id)

    def __repr__(self):
        try:
            return self.name
        except TraceIRError as e:
            return f"<stale traceir.Node: {e}>"


class Graph:
    """A trace.graph: parameters and inputs, then nodes in program order."""

    __slots__ = ("_module", "_id")

    def __init__(self, module, graph_id):
        self._module = module
        self._id = graph_id

    @property
    def name(self):
        return self._module._ir.graph_name(self._id)

    @property
    def module(self):
        return self._module

    @property
    def nodes(self):
        return [Node(self._module, n) for n in self._module._ir.graph_nodes(self._id)]

    def _args(self, want_param):
        return [Value(self._module, (self._id, i, True))
                for i, (_, is_param, _, _) in enumerate(self._module._ir.graph_args(self._id))
                if is_param == want_param]

    @property
    def params(self):
        """The parameters (trace.param), as Values named by state_dict key."""
        return self._args(True)

    @property
    def inputs(self):
        """The inputs (trace.input), as Values."""
        return self._args(False)

    def donated(self, value):
        """Whether input `value` may be freed by the graph (trace.donated)."""
        node, index, is_arg = value._ref
        if not is_arg or node != self._id:
            raise TraceIRError(f"{value!r} is not an argument of @{self.name}")
        return self._module._ir.graph_args(self._id)[index][2]

    @property
    def outputs(self):
        """What `ret` returns, in order."""
        ret = self.nodes[-1]
        return ret.args if ret.op == "ret" else ()

    def _position(self, node_id):
        return self._module._ir.graph_nodes(self._id).index(node_id)

    def _names(self):
        """fx-style names for every node, cached until the module changes."""
        cache = self._module._names
        key = (self._id, self._module._ir.generation, self._module._edits)
        names = cache.get(key)
        if names is None:
            names, used = {}, {a[0] for a in self._module._ir.graph_args(self._id)}
            for n in self._module._ir.graph_nodes(self._id):
                kind, target = self._module._ir.node(n)[:2]
                base = _identifier(target if kind == "pyop" else kind)
                name, k = base, 0
                while name in used:
                    k += 1
                    name = f"{base}_{k}"
                used.add(name)
                names[n] = name
            cache.clear()
            cache[key] = names
        return names

    def print_tabular(self, file=None):
        """Prints the nodes as torch.fx's Graph.print_tabular does: opcode,
        name, target, args, kwargs (with `tabulate` when it is installed)."""
        rows = [["placeholder" if not p else "get_attr", v.name, v.name, (), {}]
                for p, vs in ((False, self.inputs), (True, self.params)) for v in vs]
        for n in self.nodes:
            rows.append([n.op, n.name, n.target if n.op == "pyop" else n.op, n.args,
                         n.kwargs])
        headers = ["opcode", "name", "target", "args", "kwargs"]
        try:
            from tabulate import tabulate
            text = tabulate(rows, headers=headers)
        except ImportError:
            cells = [headers] + [[str(c) for c in r] for r in rows]
            widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
            lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
            lines.insert(1, "  ".join("-" * w for w in widths))
            text = "\n".join(lines)
        print(text, file=file)

    def __eq__(self, other):
        return isinstance(other, Graph) and other._module is self._module and \
            other._id == self._id

    def __hash__(self):
        return hash(self._id)

    def __repr__(self):
        try:
            return f"<traceir.Graph @{self.name}: {len(self.nodes)} nodes>"
        except TraceIRError as e:
            return f"<stale traceir.Graph: {e}>"


class Graphs:
    """A module's graphs: indexable by position and by name."""

    def __init__(self, module):
        self._module = module

    def _all(self):
        return [Graph(self._module, g) for g in self._module._ir.graphs()]

    def __len__(self):
        return len(self._module._ir.graphs())

    def __iter__(self):
        return iter(self._all())

    def __getitem__(self, key):
        if isinstance(key, str):
            for g in self._all():
                if g.name == key:
                    return g
            names = ", ".join(g.name for g in self._all()) or "none"
            raise KeyError(f"no graph @{key} (the module has: {names})")
        return self._all()[key]

    def __repr__(self):
        return repr(self._all())


def _identifier(name):
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else "_" + out
