"""Walking a module from Python (traceir.ir): the graphs, nodes and values
of an imported model against the torch.fx graph it came from, handles that
go stale instead of dangling, and the held module's round trip."""
import operator

import pytest
import torch

import traceir
from traceir import TraceIRError

torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.log_softmax(self.fc2(torch.relu(self.fc1(x))), -1)


def small_cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 10)).eval()


def fx_calls(model, args):
    """torch.export's ATen calls (getitem and asserts aside): name, op."""
    ep = torch.export.export(model, args)
    return [(n.name, n.target._schema.name.split("::", 1)[-1], n)
            for n in ep.graph.nodes
            if n.op == "call_function" and n.target is not operator.getitem
            and not n.target._schema.name.split("::", 1)[-1].startswith("_assert")]


def test_walk_matches_the_fx_graph():
    model, x = MLP().eval(), torch.randn(2, 8)
    m = traceir.from_torch(model, (x,))
    assert len(m.graphs) == 1
    g = m.graphs[0]
    assert m.graphs[g.name] == g
    calls = [n for n in g.nodes if n.op == "pyop"]
    fx = fx_calls(model, (x,))
    assert [n.target for n in calls] == [op for _, op, _ in fx]
    assert [n.name for n in calls] == [name for name, _, _ in fx]
    assert g.nodes[-1].op == "ret"
    # Parameters by state_dict key, inputs by argument name.
    assert sorted(v.name for v in g.params) == sorted(model.state_dict())
    assert [v.name for v in g.inputs] == ["x"]
    assert g.inputs[0].shape == (2, 8) and g.inputs[0].dtype is torch.float32
    assert g.inputs[0].node is None and not g.donated(g.inputs[0])
    # Def-use both ways, and the output.
    fc1, relu, fc2, lsm = calls
    assert fc1.args[0] == g.inputs[0]
    assert {a.name for a in fc1.args[1:] if isinstance(a, traceir.ir.Value)} == \
        {"fc1.weight", "fc1.bias"}
    assert relu.args[0].node == fc1 and fc1.users == [relu]
    assert fc1.results[0].users == [relu]
    assert lsm.args[1] == -1 and lsm.scalars == (-1,) and lsm.cconv == "ts"
    assert lsm.kwargs == {"self": lsm.args[0], "dim": -1, "dtype": None}
    assert g.outputs == (lsm.results[0],)
    assert lsm.results[0].shape == (2, 4)
    # The module path around the user's line.
    assert fc1.location.startswith('"fc1 (Linear)"(') and "test_ir.py\":22:" in fc1.location


def test_imported_nodes_keep_fx_names_and_source_locations():
    model, x = small_cnn(), torch.randn(1, 3, 16, 16)
    ep = torch.export.export(model, (x,)).run_decompositions()
    fx = [n.name for n in ep.graph.nodes
          if n.op == "call_function" and n.target is not operator.getitem]
    g = traceir.from_torch(model, (x,), decompose=True).graphs[0]
    calls = [n for n in g.nodes if n.op == "pyop"]
    # torch.fx's names, also where the registry's op differs.
    assert [n.name for n in calls] == fx
    assert (calls[0].target, calls[0].name) == ("conv2d", "convolution")
    import os
    package = os.path.dirname(traceir.__file__)
    for method in ("export", "jit"):
        m = traceir.from_torch(model, (x,), method=method)
        g = m.graphs[0]
        # No source position of their own: the model's.
        model_loc = ("", "<Sequential>", 0, 0)
        assert m._ir.module_location() == model_loc
        assert all(a[4] == model_loc for a in m._ir.graph_args(g._id))
        assert g.nodes[-1].location_parts == model_loc
        # Calls: PyTorch's code for its library modules, never the importer's.
        for n in g.nodes[:-1]:
            name, file, line, _ = n.location_parts
            assert file.startswith(os.path.dirname(torch.__file__)) and line > 0, n.location
            assert not file.startswith(package)


def test_scalars_of_a_conv_and_a_pool():
    model, x = small_cnn(), torch.randn(1, 3, 16, 16)
    g = traceir.from_torch(model, (x,)).graphs[0]
    conv = next(n for n in g.nodes if n.target == "conv2d")
    assert conv.kwargs["stride"] == [2, 2] and conv.kwargs["padding"] == [1, 1]
    assert conv.kwargs["groups"] == 1
    pool = next(n for n in g.nodes if n.target == "max_pool2d")
    assert pool.kwargs["kernel_size"] == [2, 2]
    assert pool.args[0].node.target == "relu"
    assert [n.target for n in g.nodes if n.op == "pyop"] == \
        [op for _, op, _ in fx_calls(model, (x,))]


def test_print_tabular(capsys):
    g = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)).graphs[0]
    g.print_tabular()
    out = capsys.readouterr().out
    for word in ("opcode", "placeholder", "get_attr", "linear_1", "log_softmax", "ret"):
        assert word in out


def test_frees_walk_as_nodes():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)).run_passes("free-dead-tensors")
    g = m.graphs[0]
    frees = [n for n in g.nodes if n.op == "free"]
    assert len(frees) == 3
    assert all(len(f.args) == 1 and f.results == () for f in frees)
    assert frees[0].args[0].node.target == "linear"
    assert frees[0].name == "free" and frees[1].name == "free_1"


def test_a_pass_makes_handles_stale():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    g = m.graphs[0]
    node, value = g.nodes[0], g.nodes[0].results[0]
    arg = g.inputs[0]
    assert m.run_passes("canonicalize") is m
    for use in (lambda: node.op, lambda: value.users, lambda: g.nodes, lambda: arg.shape,
                lambda: node.args, lambda: value.node):
        with pytest.raises(TraceIRError, match="module changed by a pass"):
            use()
    assert "stale" in repr(node)
    # Walking again works.
    assert m.graphs[0].nodes[0].target == "linear"


def test_clone_is_independent():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    copy = m.clone()
    node = copy.graphs[0].nodes[0]
    m.run_passes("free-dead-tensors")
    assert node.target == "linear"  # the copy's handles are its own
    assert "free %" in str(m) and "free %" not in str(copy)


def test_handles_keep_their_module_alive():
    node = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)).graphs[0].nodes[0]
    import gc
    gc.collect()
    assert node.target == "linear" and node.graph.module.params


def test_one_node_object_each_and_walked_modules_are_collected():
    import gc
    import weakref
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    g = m.graphs[0]
    nodes = g.nodes
    assert nodes[0] is g.nodes[0] and nodes[0].users[0] is nodes[1]
    assert nodes[1].args[0].node is nodes[0]
    # Nodes and their module reference each other (the module keeps one
    # Node per node, each Node keeps its module): the cycle collector frees
    # them once nothing else holds either.
    ref = weakref.ref(m)
    del m, g, nodes
    gc.collect()
    assert ref() is None


def test_verify_and_bad_handles():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    m.verify()
    with pytest.raises(TraceIRError, match="no node"):
        traceir.ir._node_of(m, 10**9).op
    with pytest.raises(TypeError, match="come from a graph"):
        traceir.ir.Node(m, 0)
    with pytest.raises(TypeError, match="a value handle is"):
        traceir.ir.Value(m, (0, 0))
    with pytest.raises(TraceIRError, match="is not a graph"):
        traceir.ir.Graph._of(m, m.graphs[0].nodes[0]._id).nodes
    with pytest.raises(TraceIRError, match="has no result #3"):
        traceir.ir.Value(m, (m.graphs[0].nodes[0]._id, 3, False)).type
    with pytest.raises(KeyError, match="no graph @nope"):
        m.graphs["nope"]
    # The native layer checks the shape of what it is handed, too.
    ir, g = m._ir, m.graphs[0]
    x = g.inputs[0]._ref
    with pytest.raises(TraceIRError, match="an insertion point is"):
        ir.create_pyop((g._id,), "relu", [(True, x)], [], ("", "", 0, 0))
    with pytest.raises(TraceIRError, match="a location is"):
        ir.create_pyop((g._id, -1, False), "relu", [(True, x)], [], ("a", "b"))
    with pytest.raises(TraceIRError, match="an argument is"):
        ir.create_pyop((g._id, -1, False), "relu", [(True,)], [], ("", "", 0, 0))


def test_text_objects_text():
    m = traceir.from_torch(small_cnn(), (torch.randn(1, 3, 16, 16),)).run_passes(
        "free-dead-tensors")
    text = str(m)
    again = traceir.Module.parse(text)
    assert str(again) == text
    # Walking changes nothing.
    for g in again.graphs:
        for n in g.nodes:
            n.args, n.results, n.location
    assert str(again) == text


# Building and rewriting ----------------------------------------------------

import numpy as np  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from ir_roundtrip import check_round_trip, rebuild  # noqa: E402


def test_a_graph_from_scratch_runs():
    g = traceir.Graph("affine")
    x = g.add_input("x", torch.empty(2, 3))
    w = g.add_param("w", "tensor<4x3xf32>")
    b = g.add_param("b", traceir.TensorType(("tensor<4xf32>", True, (4,), "f32")))
    h = g.pyop("linear", x, w, bias=b).results[0]  # a keyword by the schema
    r = g.pyop("relu", h, name="act").results[0]
    s = g.pyop("sum", r, dim=[1], keepdim=True).results[0]  # defaults fill the gap
    g.set_outputs(s, r)
    m = g.module
    m.verify()
    assert [n.name for n in g.nodes] == ["linear", "act", "sum", "ret"]
    assert s.shape == (2, 1) and g.outputs == (s, r)
    assert g.nodes[2].args == (r, [1], True)
    W, B, X = torch.randn(4, 3), torch.randn(4), torch.randn(2, 3)
    m.params = {"w": W, "b": B}
    out_s, out_r = traceir.compile(m.run_passes("free-dead-tensors"))(X)
    torch.testing.assert_close(out_r, torch.relu(F.linear(X, W, B)))
    torch.testing.assert_close(out_s, out_r.sum(1, keepdim=True))


def test_given_names_are_kept():
    """A node built with name= is called that (made unique), not the
    suffixed form of a name its op took first; unnamed ones get theirs in
    program order, and no node takes an argument's name."""
    g = traceir.Graph("n")
    x = g.add_input("x", torch.empty(3))
    a = g.pyop("relu", x, name="relu")
    b = g.pyop("relu", a.results[0])
    c = g.pyop("relu", b.results[0], name="relu_1")
    relu = g.add_input("neg", torch.empty(3))
    d = g.pyop("neg", relu)
    g.set_outputs(c.results[0], d.results[0])
    assert [n.name for n in g.nodes] == ["relu", "relu_1", "relu_1_1", "neg_1", "ret"]
    with g.inserting_before(a):
        e = g.pyop("exp", x, name="x")  # an input's name
    assert e.name == "x_1" and g.nodes[0] == e


def test_constants_and_insertion_points():
    g = traceir.Graph("c")
    x = g.add_input("x", torch.empty(3))
    ret = g.nodes[-1]
    two = g.constant(torch.tensor([2.0, 2.0, 2.0]))  # before ret
    flags = g.constant(np.array([True, False, True]))
    y = g.pyop("mul", x, two.results[0]).results[0]
    with g.inserting_before(ret):
        z = g.pyop("where", flags.results[0], y, x).results[0]
    with g.inserting_after(two):  # in the order made, right after `two`
        a = g.pyop("neg", x)
        b = g.pyop("exp", a.results[0])
    g.set_outputs(z, b.results[0])
    assert [n.op if n.op != "pyop" else n.target for n in g.nodes] == \
        ["constant", "neg", "exp", "constant", "mul", "where", "ret"]
    torch.testing.assert_close(two.value, torch.tensor([2.0, 2.0, 2.0]))
    assert flags.value.tolist() == [True, False, True]
    X = torch.randn(3)
    got_z, got_b = traceir.compile(g.module)(X)
    torch.testing.assert_close(got_z, torch.where(torch.tensor([True, False, True]), X * 2, X))
    torch.testing.assert_close(got_b, torch.exp(-X))


def test_the_docs_python_pass_runs_and_matches_eager():
    """examples/python_pass.py (docs/PythonIR.md): eval-mode dropout removed
    from a jit import, compiled, checked against eager."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python_pass.py")
    spec = importlib.util.spec_from_file_location("python_pass", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    removed, before, after = example.main()
    assert removed == 1 and "dropout" in before and "dropout" not in after


def test_replacing_reinfers_types_downstream_or_changes_nothing():
    g = traceir.Graph("f")
    x = g.add_input("x", torch.empty(2, 3))
    wide = g.add_input("wide", torch.empty(5, 3))
    w = g.add_param("w", torch.empty(4, 3))
    bad = g.pyop("linear", wide, w).results[0]  # 5x4
    r = g.pyop("relu", x).results[0]
    s = g.pyop("sum", r, [1]).results[0]
    g.set_outputs(s)
    x.replace_all_uses_with(wide)
    assert r.shape == (5, 3) and s.shape == (5,)
    assert g.outputs[0].shape == (5,) and "-> tensor<5xf32>" in str(g.module)
    g.module.verify()
    # linear(r, w) type-checks; with r as a 5x4 value it would not.
    lin = g.pyop("linear", r, w).results[0]
    before = str(g.module)
    with pytest.raises(TraceIRError, match="'linear' at .* no longer type-checks"):
        r.replace_all_uses_with(bad)
    assert str(g.module) == before  # undone
    assert lin.shape == (5, 4)


def test_wrapping_a_value_keeps_the_wrapper_reading_it():
    g = traceir.Graph("f")
    x = g.add_input("x", torch.empty(3))
    e = g.pyop("exp", x).results[0]
    g.set_outputs(e)
    with g.inserting_after(e.node):
        n = g.pyop("neg", e).results[0]
    e.replace_all_uses_with(n)  # every use but neg's own
    assert g.outputs == (n,) and n.node.args == (e,)
    X = torch.randn(3)
    torch.testing.assert_close(traceir.compile(g.module)(X), -torch.exp(X))


def test_dead_code_and_erasing():
    g = traceir.Graph("f")
    x = g.add_input("x", torch.empty(3))
    keep = g.pyop("exp", x).results[0]
    dead = g.pyop("neg", g.pyop("relu", x).results[0])
    effect = g.pyop("my_op", x, result_types=[torch.empty(3)])  # unknown: may have effects
    g.set_outputs(keep)
    with pytest.raises(TraceIRError, match="still has users"):
        g.erase_node(keep.node)
    assert g.eliminate_dead_code() == 2
    assert [n.target for n in g.nodes if n.op == "pyop"] == ["exp", "my_op"]
    with pytest.raises(TraceIRError, match="node erased"):
        dead.target
    g.erase_node(effect)
    with pytest.raises(TraceIRError, match="node erased"):
        effect.args
    with pytest.raises(TraceIRError, match="ret cannot be erased"):
        g.erase_node(g.nodes[-1])


def test_what_walking_read_follows_every_edit():
    # traceir.ir keeps what it read until an edit: read everything first,
    # then check each edit shows.
    def read_all(g):
        return [(n.op, n.target, n.args, n.results, [r.type for r in n.results], n.users,
                 n.name) for n in g.nodes]

    def read_all_nodes(m):
        read_all(m.graphs[0])
        return m.graphs[0].nodes

    g = traceir.Graph("f")
    x = g.add_input("x", torch.empty(2, 3))
    wide = g.add_input("wide", torch.empty(5, 3))
    a = g.pyop("relu", x)
    b = g.pyop("neg", a.results[0])
    g.set_outputs(b.results[0])
    read_all(g)
    c = g.pyop("exp", a.results[0])  # a node added: a's users, the node list
    assert a.users == [b, c] and g.nodes == [a, b, c, g.nodes[-1]]
    assert c.name == "exp" and read_all(g)[2][1] == "exp"
    x.replace_all_uses_with(wide)  # arguments and types downstream
    assert a.args == (wide,) and a.results[0].shape == (5, 3) and b.results[0].shape == (5, 3)
    assert x.users == [] and wide.users == [a]
    read_all(g)
    g.erase_node(c)
    with pytest.raises(TraceIRError, match="node erased"):
        c.op
    assert a.users == [b] and len(g.nodes) == 3
    read_all(g)
    g.set_outputs(a.results[0], b.results[0])
    assert g.outputs == (a.results[0], b.results[0])
    read_all(g)
    assert g.eliminate_dead_code() == 0
    g.set_outputs(a.results[0])
    assert g.eliminate_dead_code() == 1
    with pytest.raises(TraceIRError, match="node erased"):
        b.target
    # A pass and strip_frees drop it too.
    m = g.module
    read_all(g)
    m.run_passes("free-dead-tensors")
    with pytest.raises(TraceIRError, match="module changed by a pass"):
        a.op
    g = m.graphs[0]
    assert [n.op for n in g.nodes] == ["pyop", "ret"]  # nothing to free
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)).run_passes("free-dead-tensors")
    assert "free" in [n.op for n in read_all_nodes(m)]
    m.strip_frees()
    assert "free" not in [n.op for n in read_all_nodes(m)]
    # Names: a thousand nodes of one op take the suffixes in order, skipping
    # a name already taken (an input's).
    g2 = traceir.Graph("names")
    v = g2.add_input("relu_2", torch.empty(3))
    nodes = [g2.pyop("relu", v) for _ in range(1000)]
    assert [n.name for n in nodes[:4]] == ["relu", "relu_1", "relu_3", "relu_4"]
    assert nodes[-1].name == "relu_1000"


def test_frees_must_be_stripped_before_editing():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)).run_passes("free-dead-tensors")
    g = m.graphs[0]
    first = g.nodes[0]
    for edit in (lambda: g.pyop("relu", first.results[0]),
                 lambda: g.constant(torch.ones(1)),
                 lambda: g.eliminate_dead_code(),
                 lambda: first.results[0].replace_all_uses_with(first.results[0].users[0].results[0])):
        with pytest.raises(TraceIRError, match="holds trace.free ops.*strip_frees"):
            edit()
    assert m.strip_frees() == 3
    g.pyop("relu", first.results[0])
    assert g.eliminate_dead_code() == 1
    assert str(m.run_passes("free-dead-tensors")).count("free %") == 3


def test_memory_plans_go_with_their_frees():
    # A plan is made for the frees: editing a planned graph is refused (even
    # one without frees, whose storages all live to the end), stripping the
    # frees drops it, and so does erasing one free.
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    m.run_passes("free-dead-tensors,plan-memory")
    assert "trace.arena_offsets" in str(m)
    g = m.graphs[0]
    frees = [n for n in g.nodes if n.op == "free"]
    g.erase_node(frees[0])
    assert "trace.arena" not in str(m)
    m.run_passes("plan-memory")
    m.strip_frees()
    assert "trace.arena" not in str(m)
    m.run_passes("plan-memory")
    g = m.graphs[0]
    with pytest.raises(TraceIRError, match="holds a memory plan.*strip_frees"):
        g.pyop("relu", g.nodes[0].results[0])
    m.strip_frees()
    g.pyop("relu", g.nodes[0].results[0])
    m.verify()


def test_building_errors_name_what_and_where():
    g = traceir.Graph("f")
    x = g.add_input("x", torch.empty(2, 3))
    with pytest.raises(TraceIRError, match="'linear'"):
        g.pyop("linear", x, g.add_param("w", torch.empty(4, 5)))  # 5 features, not 3
    with pytest.raises(TraceIRError, match="not in the registry: give its result types"):
        g.pyop("my_op", x)
    with pytest.raises(TypeError, match="'relu' has no argument 'inplace'"):
        g.pyop("relu", x, inplace=True)
    with pytest.raises(TypeError, match="argument 'self' given twice"):
        g.pyop("sum", x, self=x)
    with pytest.raises(TypeError, match="argument #1 of 'mul'.*object.*not a tensor Value"):
        g.pyop("mul", x, object())
    with pytest.raises(TypeError, match="pass one of its results"):
        g.pyop("relu", g.pyop("neg", x))
    other = traceir.Graph("other")
    y = other.add_input("y", torch.empty(2, 3))
    with pytest.raises(TraceIRError, match="another module"):
        g.pyop("relu", y)
    inner = traceir.Graph("g2", g.module)
    z = inner.add_input("z", torch.empty(2, 3))
    with pytest.raises(TraceIRError, match="argument of another graph"):
        g.pyop("relu", z)
    with pytest.raises(TraceIRError, match="already has an argument 'x'"):
        g.add_input("x", torch.empty(1))
    with pytest.raises(TraceIRError, match="already has a @f"):
        traceir.Graph("f", g.module)
    with pytest.raises(TraceIRError, match="not a tensor type"):
        g.add_input("q", "i32")
    with pytest.raises(TraceIRError, match="nests deeper than 256"):
        g.add_input("deep", "tensor<" * 100000)  # no stack overflow in MLIR's parser
    with pytest.raises(TraceIRError, match="not a tensor type"):
        g.pyop("my_op", x, result_types=["tensor<2x"])  # and no stale diagnostics after
    later = g.pyop("relu", x)
    with g.inserting_before(later):
        with pytest.raises(TraceIRError, match="defined after the insertion point"):
            g.pyop("neg", later.results[0])
    with pytest.raises(TraceIRError, match=r"F32\[4\] needs 16 bytes, got 12"):
        g._module._ir.create_constant(g._point(), "F32", [4], b"\0" * 12, ("", "", 0, 0))
    g.set_outputs()
    with pytest.raises(TraceIRError, match="does not verify|result"):
        g.pyop("relu", x, result_types=["tensor<9xf32>"])  # registry disagrees


def test_rebuilt_modules_print_the_same():
    for m in (traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)),
              traceir.from_torch(small_cnn(), (torch.randn(1, 3, 16, 16),), method="jit"),
              traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)).run_passes(
                  "free-dead-tensors")):
        check_round_trip(m)
    # The check sees a difference.
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    again = rebuild(m)
    again.graphs[0].pyop("relu", again.graphs[0].inputs[0])
    assert str(again) != str(m)
