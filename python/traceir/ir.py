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

A module has one Node object per node. What walking reads of a node (its
kind, target, arguments and results; then its users, types and location)
is kept in it: a graph's nodes are read in one native call the first time
the graph is walked, and walking again reads Python fields only. Every edit
made here brings the nodes it changed up to date (the native side names
them: IRModule::takeChanges); a pass pipeline, which may rewrite anything,
makes them all stale.
"""
from . import _traceir
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


class _Handle:
    """What Value, Node and Graph share: a module and a key into it, equal
    when both are, and a repr that says so when the handle is stale."""

    __slots__ = ()

    def __eq__(self, other):
        return isinstance(other, type(self)) and other._module is self._module and \
            other._key() == self._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        try:
            return self._describe()
        except TraceIRError as e:
            return f"<stale traceir.{type(self).__name__}: {e}>"


# The native bases (IRHandles.cpp) hold the fields walking reads. A
# runtime-only build has neither, nor any module to hold nodes of.
if _traceir.HAS_COMPILER:
    _NodeBase, _ValueBase = _traceir._NodeBase, _traceir._ValueBase
else:
    class _NodeBase:
        __slots__ = ()

    class _ValueBase:
        __slots__ = ()


class Value(_ValueBase, _Handle):
    """A tensor of a graph: a node's result, or a graph argument (a
    parameter or an input). `Value(module, (node, index, is_arg))`."""

    __slots__ = ()

    @property
    def type(self):
        node, index, is_arg = self._ref
        if not is_arg:
            results = _node_of(self._module, node)._info()[5]
            if 0 <= index < len(results):
                return TensorType(results[index])
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
        if is_arg:
            self._module._ir.value_type(self._ref)  # raises for a stale handle
            return None
        n = _node_of(self._module, node)
        n.op  # raises for a stale handle
        return n

    @property
    def index(self):
        """Which result of its node (or which graph argument) it is."""
        return self._ref[1]

    @property
    def users(self):
        """The nodes that use it, in program order, each once."""
        mod = self._module
        node, index, is_arg = self._ref
        if not is_arg:
            n = _node_of(mod, node)
            if len(n.results) == 1:
                return n.users
        users = mod._value_users.get(self._ref)
        if users is None:
            users = mod._value_users[self._ref] = mod._ir.users(self._ref)
        return [_node_of(mod, n) for n in users]

    @property
    def name(self):
        """The node's name (with `.i` for result i > 0 of a multi-result
        node), or the parameter's or input's name."""
        node, index, is_arg = self._ref
        if is_arg:
            return self._module._ir.graph_args(node)[index][0]
        n = _node_of(self._module, node)
        return n.name if index == 0 else f"{n.name}.{index}"

    def replace_all_uses_with(self, other):
        """Makes every user of this value use `other` instead (of the same
        graph, defined before every use). Where the types differ, the users'
        result types are inferred again downstream; if one no longer type
        checks, nothing changes and TraceIRError says where."""
        if not isinstance(other, Value) or other._module is not self._module:
            raise TypeError(f"replace_all_uses_with takes a Value of the same module, got {other!r}")
        mod = self._module
        try:
            mod._ir.replace_all_uses_with(self._ref, other._ref)
        finally:
            _edited(mod)

    def _key(self):
        return self._ref

    def _describe(self):
        return f"%{self.name}"


class Node(_NodeBase, _Handle):
    """One instruction of a graph. `op` is its kind as torch.fx names them
    where they match: "pyop" (a call; fx's "call_function"), "constant",
    "free", "ret" (fx's "output"); `target` is the pyop's op name.

    `op`, `target`, `args` and `results` are fields of the native base (see
    IRHandles.cpp), read as cheaply as torch.fx's; a graph's nodes get them
    in one call when the graph is walked."""

    __slots__ = ()

    def _info(self):
        """The rest of what the native side has of the node (result types,
        location, cconv, scalars), read once."""
        info = self._data
        if info is None:
            if self._stale is not None:
                raise TraceIRError(self._stale)
            kind, target, _, cconv, scalars, results, loc, graph, parts = \
                self._module._ir.node(self._id)
            info = self._data = (kind, target, None, cconv, scalars, tuple(results), loc,
                                 graph, parts)
        return info

    @property
    def kwargs(self):
        """The arguments by the names of the registry's schema for the op
        (defaults filled in); {} for an op the registry does not know."""
        from . import _schema
        if self.op != "pyop":
            return {}
        return _schema.bind(self.target, self.args)

    @property
    def value(self):
        """A constant's value, as a torch tensor (numpy array without
        torch); None for the other kinds."""
        if self.op != "constant":
            return None
        dtype, shape, data = self._module._ir.constant_value(self._id)
        return _from_bytes(dtype, shape, data)

    @property
    def scalars(self):
        """The out-of-band Python scalars, in order."""
        return self._info()[4]

    @property
    def cconv(self):
        """One letter per argument: 't' a tensor operand, 's' a scalar."""
        return self._info()[3]

    @property
    def users(self):
        """The nodes that use any of its results, in program order."""
        users = self._users
        if users is None:
            users = self._read_users()
        return list(users)

    def _read_users(self):
        mod = self._module
        graph = self._graph  # raises for a stale handle
        if graph not in mod._users_read:
            # The first read in a graph reads every node's, in one call.
            mod._users_read.add(graph)
            _traceir._fill_users(mod, graph)
            if self._users is not None:
                return self._users
        results = self.results
        seen, ids = set(), []
        for r in results:
            for u in mod._ir.users(r._ref):
                if u not in seen:
                    seen.add(u)
                    ids.append(u)
        if len(results) > 1:
            positions = self.graph._positions()
            ids.sort(key=positions.__getitem__)
        users = self._users = tuple([_node_of(mod, u) for u in ids])
        return users

    @property
    def location(self):
        """Where it came from, as MLIR prints the location (for an imported
        model: the module path around the user's file:line)."""
        return self._info()[6]

    @property
    def location_parts(self):
        """The location as (module path, file, line, column) where it has the
        importers' form (None for another kind, such as a fused one); what
        `location=` takes when building."""
        return self._info()[8]

    @property
    def graph(self):
        return Graph._of(self._module, self._graph)

    @property
    def name(self):
        """A unique, stable name: the op name with fx's `_1`, `_2`
        suffixes, in program order (kind names for the other nodes)."""
        return self.graph._names()[self._id]

    def _key(self):
        return self._id

    def _describe(self):
        return self.name


if _traceir.HAS_COMPILER:
    _traceir._register_handles(Node, Value)
    _node_of = _traceir._node


class Graph(_Handle):
    """A trace.graph: parameters and inputs, then nodes in program order.

    `traceir.Graph(name)` makes a new, empty graph in a new Module
    (`graph.module`), or in `module`: add_param / add_input, nodes,
    set_outputs. Walking a module gives its graphs (`module.graphs`)."""

    __slots__ = ("_module", "_id")

    def __init__(self, name, module=None, location=None):
        from . import Module
        if not isinstance(name, str):
            raise TypeError(f"Graph(name): the name must be a str, got {name!r}")
        if module is None:
            module = Module.empty()
        self._module = module
        self._id = module._ir.add_graph(name, _location(location))

    @classmethod
    def _of(cls, module, graph_id):
        g = cls.__new__(cls)
        g._module = module
        g._id = graph_id
        return g

    @property
    def name(self):
        return self._module._ir.graph_name(self._id)

    @property
    def module(self):
        return self._module

    @property
    def nodes(self):
        return list(self._node_list())

    def _node_list(self):
        """The nodes in program order (the module's list: do not change it)."""
        mod = self._module
        nodes = mod._lists.get(self._id)
        if nodes is None:
            nodes = mod._lists[self._id] = _traceir._walk(mod, self._id)
        return nodes

    def _args(self, want_param):
        return [Value(self._module, (self._id, i, True))
                for i, (_, is_param, _, _, _) in enumerate(self._module._ir.graph_args(self._id))
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
        nodes = self._node_list()
        if not nodes or nodes[-1].op != "ret":
            return ()
        return nodes[-1].args

    def _positions(self):
        """{node id: position in program order}."""
        mod = self._module
        positions = mod._positions.get(self._id)
        if positions is None:
            positions = mod._positions[self._id] = \
                {n._id: i for i, n in enumerate(self._node_list())}
        return positions

    def _position(self, node_id):
        return self._positions()[node_id]

    def _names(self, skip=None):
        """{node id: name}: fx-style names, given once per node in program
        order (the importer's where it gave some) and kept across edits;
        a pass pipeline, which may rewrite anything, starts them afresh.
        `skip`: a node about to be given its own name."""
        mod = self._module
        gen = mod._ir.generation
        if mod._names.get("generation") != gen:
            mod._names = {"generation": gen, "nodes": {}, "used": {}, "complete": set()}
        names, used = mod._names["nodes"], mod._names["used"]
        # Graphs all of whose nodes are named: building names each new node
        # as it is made, so naming one is not a walk.
        complete = mod._names["complete"]
        if self._id in complete:
            return names
        graph_used = used.get(self._id)
        if graph_used is None:
            graph_used = used[self._id] = _Namespace(a[0] for a in mod._ir.graph_args(self._id))
        for n in self._node_list():
            if n._id not in names and n._id != skip:
                kind = n.op
                names[n._id] = _fresh(n.target if kind == "pyop" else kind, graph_used)
        complete.add(self._id)
        return names

    def _name_node(self, node_id, name):
        """Names a new node `name` (made unique), the nodes before it named
        first, in program order."""
        names = self._names(skip=node_id)
        names[node_id] = _fresh(name, self._module._names["used"][self._id])

    def _claim_name(self, name):
        """A new argument's name, which no node may take."""
        if self._module._names.get("generation") == self._module._ir.generation:
            used = self._module._names["used"].get(self._id)
            if used is not None:
                used.names.add(name)

    # Building and rewriting -----------------------------------------------

    def _point(self):
        anchor, after = self._module._insert.get(self._id, (-1, False))
        return (self._id, anchor, after)

    def _inserted(self, node_id):
        # Inserting after a node keeps call order: the next goes after this.
        anchor, after = self._module._insert.get(self._id, (-1, False))
        if after:
            self._module._insert[self._id] = (node_id, True)

    def inserting_before(self, node=None):
        """A context in which new nodes go before `node` (None: before the
        graph's ret, the default)."""
        return _InsertPoint(self, node, False)

    def inserting_after(self, node=None):
        """A context in which new nodes go after `node`, in the order they
        are made (None: before the graph's ret)."""
        return _InsertPoint(self, node, node is not None)

    def pyop(self, target, /, *args, result_types=None, name=None, location=None, **kwargs):
        """A call of `target` with tensors and Python scalars in call order;
        keywords are placed by the registry's schema (its defaults fill the
        gaps). Result types are inferred by the registry, or given
        (`result_types`: TensorTypes, tensors or MLIR type text) for an op it
        does not know. Returns the new Node."""
        if not isinstance(target, str) or not target:
            raise TypeError(f"pyop target must be an op name (str), got {target!r}")
        args = list(args)
        if kwargs:
            from . import _schema
            params = _schema.parameters(target)
            if params is None:
                raise TypeError(f"pyop '{target}': keywords ({', '.join(kwargs)}) need the "
                                "registry's schema, and the registry does not know the op; "
                                "pass the arguments positionally")
            names = [p[0] for p in params]
            for k, v in kwargs.items():
                if k not in names:
                    raise TypeError(f"pyop '{target}' has no argument '{k}' (its schema: "
                                    f"{', '.join(names)})")
                i = names.index(k)
                if i < len(args):
                    raise TypeError(f"pyop '{target}': argument '{k}' given twice")
                while len(args) < i:
                    _, has_default, default = params[len(args)]
                    if not has_default:
                        raise TypeError(f"pyop '{target}': argument '{names[len(args)]}' "
                                        "is missing")
                    args.append(default)
                args.append(v)
        native = []
        for i, a in enumerate(args):
            if isinstance(a, Value):
                if a._module is not self._module:
                    raise TraceIRError(f"pyop '{target}': argument #{i} is a value of "
                                       "another module")
                native.append((True, a._ref))
            elif isinstance(a, (Node, Graph)):
                raise TypeError(f"pyop '{target}': argument #{i} is a {type(a).__name__}; "
                                "pass one of its results (node.results[0])")
            else:
                native.append((False, a))
        # (Type text, what importers give, as it is.)
        types = [t if type(t) is str else _type_text(t, f"result type #{i} of '{target}'")
                 for i, t in enumerate(result_types or ())]
        mod = self._module
        try:
            node_id = mod._ir.create_pyop(self._point(), target, native, types,
                                          _location(location))
        finally:
            _edited(mod, structural=True)
        self._inserted(node_id)
        # Named as it is made (fx's naming from the op when no name is
        # given), so building never walks the graph for names.
        self._name_node(node_id, target if name is None else name)
        return _node_of(mod, node_id)

    def constant(self, array, name=None, location=None):
        """A tensor constant holding `array` (a torch tensor or numpy
        array); returns the new Node (its value: node.results[0])."""
        dtype, shape, data = _tensor_bytes(array, "constant")
        mod = self._module
        try:
            node_id = mod._ir.create_constant(self._point(), dtype, list(shape), data,
                                              _location(location))
        finally:
            _edited(mod, structural=True)
        self._inserted(node_id)
        self._name_node(node_id, "constant" if name is None else name)
        return _node_of(mod, node_id)

    def erase_node(self, node):
        """Erases `node`, whose results must be unused (replace their uses
        first); its handles then raise "node erased"."""
        if not isinstance(node, Node) or node._module is not self._module:
            raise TypeError(f"erase_node takes a Node of this module, got {node!r}")
        try:
            self._module._ir.erase_node(node._id)
        finally:
            _edited(self._module, structural=True)

    def eliminate_dead_code(self):
        """Erases every node whose results are unused and that has no effect
        (not in-place, not random, an op the registry knows); returns how
        many went."""
        try:
            return self._module._ir.eliminate_dead_code(self._id)
        finally:
            _edited(self._module, structural=True)

    def add_param(self, name, type, location=None):
        """Appends a parameter named by its state_dict key; `type` is a
        TensorType, a tensor or array (its shape and dtype) or MLIR type
        text. Returns its Value."""
        value = Value(self._module, self._module._ir.add_argument(
            self._id, name, True, False, _type_text(type, f"parameter '{name}'"),
            _location(location)))
        _edited(self._module)
        self._claim_name(name)
        return value

    def add_input(self, name, type, donated=False, location=None):
        """Appends an input; `donated`: the graph may free it."""
        value = Value(self._module, self._module._ir.add_argument(
            self._id, name, False, bool(donated), _type_text(type, f"input '{name}'"),
            _location(location)))
        _edited(self._module)
        self._claim_name(name)
        return value

    def set_outputs(self, *values, location=None):
        """Makes the graph return `values` (its result types follow)."""
        for i, v in enumerate(values):
            if not isinstance(v, Value) or v._module is not self._module:
                raise TypeError(f"output #{i} must be a Value of this module, got {v!r}")
        try:
            self._module._ir.set_outputs(self._id, [v._ref for v in values],
                                         _location(location))
        finally:
            _edited(self._module)

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

    def _key(self):
        return self._id

    def _describe(self):
        return f"<traceir.Graph @{self.name}: {len(self.nodes)} nodes>"


class Graphs:
    """A module's graphs: indexable by position and by name."""

    def __init__(self, module):
        self._module = module

    def _all(self):
        return [Graph._of(self._module, g) for g in self._module._ir.graphs()]

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


def _init_state(module):
    """What a Module keeps for walking and building: its canonical Nodes
    (id -> Node: IRHandles.cpp's registry), each graph's node list and
    positions, the graphs whose users were read, the users of values read
    one by one, node names and insertion points."""
    module._nodes = {}
    module._lists, module._positions = {}, {}
    module._users_read, module._value_users = set(), {}
    module._names, module._insert = {}, {}


def _edited(module, structural=False):
    """After an edit (done or refused): the nodes it changed are read again
    (IRModule::takeChanges), erased ones raise "node erased"; `structural`
    (a node added or erased) drops the node lists."""
    _traceir._apply_changes(module)
    module._value_users.clear()
    if structural:
        module._lists.clear()
        module._positions.clear()


def _rewritten(module):
    """After a pass pipeline (done or failed): every handle is stale."""
    _traceir._mark_all_stale(module, "module changed by a pass: this handle predates it; "
                             "walk the module again")
    module._lists.clear()
    module._positions.clear()
    module._users_read.clear()
    module._value_users.clear()


class _InsertPoint:
    def __init__(self, graph, node, after):
        if node is not None and (not isinstance(node, Node) or node._module is not graph._module):
            raise TypeError(f"the insertion point must be a Node of this graph, got {node!r}")
        self.graph, self.point = graph, ((node._id if node is not None else -1), after)

    def __enter__(self):
        insert = self.graph._module._insert
        self.saved = insert.get(self.graph._id)
        insert[self.graph._id] = self.point
        return self

    def __exit__(self, *exc):
        insert = self.graph._module._insert
        if self.saved is None:
            insert.pop(self.graph._id, None)
        else:
            insert[self.graph._id] = self.saved


_ELEMENT = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
            "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "ui8",
            "bool": "i1"}
_SAFETENSORS = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
                "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
                "bool": "BOOL"}


def _dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def _type_text(t, what):
    """MLIR type text for a TensorType, a tensor or array, or text."""
    if isinstance(t, TensorType):
        return t.text
    if isinstance(t, str):
        return t
    shape, dtype = getattr(t, "shape", None), getattr(t, "dtype", None)
    element = _ELEMENT.get(_dtype_name(dtype)) if dtype is not None else None
    if shape is None or element is None:
        raise TypeError(f"{what}: expected a TensorType, a tensor, an array or MLIR type text, "
                        f"got {t!r}")
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _tensor_bytes(array, what):
    """(safetensors dtype, shape, bytes) of a torch tensor or numpy array."""
    import numpy as np
    if type(array).__module__.startswith("torch"):
        import torch
        if not isinstance(array, torch.Tensor):
            raise TypeError(f"{what}: expected a tensor or an array, got {array!r}")
        t = array.detach().cpu().contiguous()
        name = _dtype_name(t.dtype)
        if name not in _SAFETENSORS:
            raise TypeError(f"{what}: dtype {t.dtype}, which TraceIR cannot hold")
        data = (t.view(torch.int16) if t.dtype is torch.bfloat16 else t).numpy()
        return _SAFETENSORS[name], tuple(t.shape), data.astype(data.dtype.newbyteorder("<")).tobytes()
    if isinstance(array, np.ndarray):
        name = array.dtype.name
        if name not in _SAFETENSORS or name == "bfloat16":
            raise TypeError(f"{what}: numpy dtype {array.dtype}, which TraceIR cannot hold")
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"))
        return _SAFETENSORS[name], array.shape, data.tobytes()
    raise TypeError(f"{what}: expected a torch tensor or a numpy array, got {type(array).__name__}")


def _from_bytes(dtype, shape, data):
    import numpy as np
    name = next(k for k, v in _SAFETENSORS.items() if v == dtype)
    if name == "bfloat16":
        import torch
        return torch.frombuffer(bytearray(data), dtype=torch.int16).view(torch.bfloat16) \
            .reshape(shape)
    array = np.frombuffer(data, dtype=np.dtype(name).newbyteorder("<")).reshape(shape).copy()
    try:
        import torch
    except ImportError:
        return array
    return torch.from_numpy(array)


def _location(loc):
    """(name, file, line, column) from None, a module path, or a
    (module path, file, line) tuple; (node id,) to copy a Node's location
    exactly."""
    if loc is None:
        return ("", "", 0, 0)
    if isinstance(loc, Node):
        return (loc._id,)
    if isinstance(loc, str):
        return (loc, "", 0, 0)
    if len(loc) == 4:
        name, file, line, column = loc
    else:
        (name, file, line), column = loc, 0
    return (name or "", file or "", int(line or 0), int(column or 0))


class _Namespace:
    """The names given in a graph, and per base name the last suffix given:
    names are never taken back, so base_1 .. base_k stay used and the next
    search starts after k (as fx's _Namespace does), instead of from 1 for
    every node of an op that occurs 25,000 times."""

    __slots__ = ("names", "last")

    def __init__(self, names=()):
        self.names, self.last = set(names), {}


def _fresh(base, used):
    """`base` (made an identifier), or with the smallest suffix _1, _2, ...
    that no name of `used` (a _Namespace) has."""
    base = _identifier(base)
    names = used.names
    if base not in names:
        names.add(base)
        return base
    k = used.last.get(base, 0)
    while True:
        k += 1
        name = f"{base}_{k}"
        if name not in names:
            break
    used.last[base] = k
    names.add(name)
    return name


def _identifier(name):
    if name.isascii() and name.isidentifier():  # the usual case, as it is
        return name
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else "_" + out
