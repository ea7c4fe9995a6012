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


def test_verify_and_bad_handles():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    m.verify()
    with pytest.raises(TraceIRError, match="no node"):
        traceir.ir.Node(m, 10**9).op
    with pytest.raises(TraceIRError, match="is not a graph"):
        traceir.ir.Graph(m, m.graphs[0].nodes[0]._id).nodes
    with pytest.raises(TraceIRError, match="has no result #3"):
        traceir.ir.Value(m, (m.graphs[0].nodes[0]._id, 3, False)).type
    with pytest.raises(KeyError, match="no graph @nope"):
        m.graphs["nope"]


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
