"""Text -> objects -> text: a module rebuilt from what walking it reads
(traceir.ir) prints exactly as the module does. conftest.py checks it for
every module the suite compiles and traceir_testing for every graph it
runs; test_ir.py checks the helper itself."""
import traceir
from traceir import Graph, Value


def rebuild(module):
    """A new module built node by node from `module`'s graphs (which hold
    no trace.free: the builder does not make them)."""
    out = traceir.Module.empty(module.name, _parts(module._ir.module_location()))
    for g in module.graphs:
        ng = Graph(g.name, out, location=_parts(g._module._ir.node(g._id)[8]))
        values = {}
        args = g._module._ir.graph_args(g._id)
        for i, (name, is_param, donated, type_info, loc) in enumerate(args):
            t, loc = traceir.TensorType(type_info), _parts(loc)
            new = ng.add_param(name, t, location=loc) if is_param else \
                ng.add_input(name, t, donated, location=loc)
            values[Value(module, (g._id, i, True))] = new
        for n in g.nodes:
            loc = _parts(n.location_parts)
            if n.op == "pyop":
                call = [values[a] if isinstance(a, Value) else a for a in n.args]
                node = ng.pyop(n.target, *call, result_types=[r.type for r in n.results],
                               location=loc)
            elif n.op == "constant":
                node = ng.constant(n.value, location=loc)
            elif n.op == "ret":
                ng.set_outputs(*[values[a] for a in n.args], location=loc)
                continue
            else:
                raise AssertionError(f"cannot rebuild a '{n.op}' node")
            for old, new in zip(n.results, node.results):
                values[old] = new
    return out


def _parts(parts):
    return tuple(parts) if parts is not None else None


def check_round_trip(module):
    """Asserts that `module` (frees stripped) rebuilds to the same text."""
    stripped = module.clone()
    stripped.strip_frees()
    want = str(stripped)
    got = str(rebuild(stripped))
    assert got == want, f"rebuilt module differs:\n--- want\n{want}\n--- got\n{got}"
