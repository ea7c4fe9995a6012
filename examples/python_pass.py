#!/usr/bin/env python3
"""A graph pass written in Python on TraceIR's IR (docs/PythonIR.md), run
end to end and checked against PyTorch eager.

The model is imported with torch.jit.trace, which records eval-mode dropout
as a call that returns its input (`dropout(x, 0.5, False)`). The pass walks
the graph, makes every user of such a call read the call's input instead,
and erases the call; then free-dead-tensors places the frees, the graph is
compiled for the CPU and its outputs are compared with the model's.

    PYTHONPATH=build/python ~/.cache/traceir/venv/bin/python examples/python_pass.py
"""
import torch

import traceir


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.drop = torch.nn.Dropout(0.25)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


def remove_eval_dropout(graph):
    """Erases every dropout that does not train; returns how many."""
    removed = 0
    for node in graph.nodes:
        if node.op == "pyop" and node.target in ("dropout", "dropout_") and \
                node.kwargs.get("train") is False:
            node.results[0].replace_all_uses_with(node.args[0])
            graph.erase_node(node)
            removed += 1
    return removed


def main():
    torch.manual_seed(0)
    model, x = Net().eval(), torch.randn(8, 16)
    m = traceir.from_torch(model, (x,), method="jit")
    graph = m.graphs[0]
    before = [n.target for n in graph.nodes if n.op == "pyop"]
    removed = remove_eval_dropout(graph)
    after = [n.target for n in graph.nodes if n.op == "pyop"]
    m.verify()
    graph.print_tabular()
    exe = traceir.compile(m.run_passes("free-dead-tensors"), "cpu")
    with torch.no_grad():
        want = model(x)
    got = exe(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    print(f"removed {removed} dropout call(s): {before} -> {after}; "
          f"outputs match eager (max abs diff {(got - want).abs().max().item():.2e})")
    return removed, before, after


if __name__ == "__main__":
    main()
