"""How a CPU run takes its inputs and gives back its outputs: an input no op
writes is read where the caller keeps it (no copy, as PyTorch reads its
arguments); an input an in-place op (or training batch norm) writes is copied
first, so the caller's tensor never changes; an output the run allocated is
handed over without a copy, and anything else (an input, a view, a second
output over the same storage) is copied into memory of its own."""
import numpy as np
import pytest
import torch

import traceir


def graph(text):
    return traceir.compile(traceir.Module.parse(text), "cpu")


def rounded(nbytes):
    return (nbytes + 63) // 64 * 64  # the CPU allocator's 64-byte rounding


def test_input_no_op_writes_is_read_in_place():
    exe = graph("""
trace.graph @g(%x: tensor<1000xf32> {trace.input = "x"}) -> tensor<1000xf32> {
  %0 = pyop "neg"(%x) : (tensor<1000xf32>) -> tensor<1000xf32>
  ret %0 : tensor<1000xf32>
}""")
    x = torch.randn(1000)
    torch.testing.assert_close(exe(x), -x)
    # The run held its result only: the input was not copied.
    assert exe.memory_report()["devices"][0]["allocated_peak_bytes"] == rounded(4000)


@pytest.mark.parametrize("through_view", [False, True])
def test_input_an_op_writes_is_copied_first(through_view):
    body = ('%v = pyop "view"(%x, [2, 500]) : (tensor<1000xf32>) -> tensor<2x500xf32>\n'
            '  %r = pyop "relu_"(%v) : (tensor<2x500xf32>) -> tensor<2x500xf32>\n'
            '  %0 = pyop "mul"(%r, 2.0) : (tensor<2x500xf32>) -> tensor<2x500xf32>'
            if through_view else
            '%r = pyop "relu_"(%x) : (tensor<1000xf32>) -> tensor<1000xf32>\n'
            '  %m = pyop "mul"(%r, 2.0) : (tensor<1000xf32>) -> tensor<1000xf32>\n'
            '  %0 = pyop "view"(%m, [2, 500]) : (tensor<1000xf32>) -> tensor<2x500xf32>')
    exe = graph(f"""
trace.graph @g(%x: tensor<1000xf32> {{trace.input = "x"}}) -> tensor<2x500xf32> {{
  {body}
  ret %0 : tensor<2x500xf32>
}}""")
    x = torch.randn(1000)
    before = x.clone()
    torch.testing.assert_close(exe(x), (torch.relu(before) * 2).view(2, 500))
    torch.testing.assert_close(x, before, rtol=0, atol=0)


def test_training_batch_norm_does_not_write_the_callers_statistics():
    exe = graph("""
trace.graph @g(%x: tensor<4x3xf32> {trace.input = "x"}, %m: tensor<3xf32> {trace.input = "m"},
               %v: tensor<3xf32> {trace.input = "v"}) -> tensor<4x3xf32> {
  %0 = pyop "batch_norm"(%x, None, None, %m, %v, True, 0.5, 1.0e-05, False) : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  ret %0 : tensor<4x3xf32>
}""")
    x, m, v = torch.randn(4, 3), torch.zeros(3), torch.ones(3)
    out = exe(x, m, v)
    torch.testing.assert_close(out, torch.nn.functional.batch_norm(
        x, m.clone(), v.clone(), training=True, momentum=0.5), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(m, torch.zeros(3), rtol=0, atol=0)
    torch.testing.assert_close(v, torch.ones(3), rtol=0, atol=0)


def test_freed_donated_input_is_not_poisoned_in_the_callers_memory():
    exe = graph("""
trace.graph @g(%x: tensor<16xf32> {trace.input = "x", trace.donated}) -> tensor<16xf32> {
  %0 = pyop "neg"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  free %x : tensor<16xf32>
  %1 = pyop "mul"(%0, 3.0) : (tensor<16xf32>) -> tensor<16xf32>
  ret %1 : tensor<16xf32>
}""")
    exe.check_frees = True
    x = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(exe(x), -3 * np.arange(16, dtype=np.float32))
    np.testing.assert_array_equal(x, np.arange(16, dtype=np.float32))


def test_outputs_own_their_memory():
    # An input returned as it is, a view of the run's result and that result
    # again: each output is memory of its own, and correct after the run.
    exe = graph("""
trace.graph @g(%x: tensor<2x3xf32> {trace.input = "x"}) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {
  %0 = pyop "mul"(%x, 2.0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = pyop "t"(%0) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  ret %x, %0, %1, %0 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>
}""")
    x = torch.arange(6.0).view(2, 3)
    same, doubled, transposed, again = exe(x)
    x += 100  # the caller's tensor changes after the run
    doubled += 1000
    torch.testing.assert_close(same, torch.arange(6.0).view(2, 3), rtol=0, atol=0)
    torch.testing.assert_close(transposed, (torch.arange(6.0) * 2).view(2, 3).t(), rtol=0, atol=0)
    torch.testing.assert_close(again, (torch.arange(6.0) * 2).view(2, 3), rtol=0, atol=0)
    assert transposed.is_contiguous()


def test_misaligned_and_strided_inputs_are_copied():
    exe = graph("""
trace.graph @g(%x: tensor<8xf32> {trace.input = "x"}) -> tensor<8xf32> {
  %0 = pyop "neg"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  ret %0 : tensor<8xf32>
}""")
    raw = np.zeros(8 * 4 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32)  # an address no float load may use
    misaligned[:] = np.arange(8)
    np.testing.assert_array_equal(exe(misaligned), -np.arange(8, dtype=np.float32))
    strided = np.arange(16, dtype=np.float32)[::2]
    np.testing.assert_array_equal(exe(strided), -np.arange(0, 16, 2, dtype=np.float32))


def test_repeated_calls_return_fresh_results():
    exe = graph("""
trace.graph @g(%x: tensor<4xf32> {trace.input = "x"}) -> tensor<4xf32> {
  %0 = pyop "add"(%x, 1.0) : (tensor<4xf32>) -> tensor<4xf32>
  ret %0 : tensor<4xf32>
}""")
    outs = [exe(torch.full((4,), float(i))) for i in range(5)]
    for i, o in enumerate(outs):
        torch.testing.assert_close(o, torch.full((4,), i + 1.0), rtol=0, atol=0)
