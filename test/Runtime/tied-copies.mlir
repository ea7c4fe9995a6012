// reshape and contiguous of a transposed tensor must copy; the copy is tied
// to the source's storage and freed with it. The analysis follows the same
// view layouts (ViewAlgebra), so the predicted peak counts the copies and
// equals the measured one, with and without frees.
// RUN: %st write %t.in.st x=f32[4,8]:range
// RUN: trace-opt %s -free-dead-tensors -o %t.freed.mlir
// RUN: trace-run %t.freed.mlir --inputs %t.in.st --outputs %t.out.st --memory-report --check-frees | FileCheck %s --check-prefix=FREED
// RUN: trace-run %s --inputs %t.in.st --memory-report | FileCheck %s --check-prefix=KEPT
// RUN: trace-opt %t.freed.mlir -test-print-storage-liveness -o /dev/null 2>&1 | FileCheck %s --check-prefix=ANALYSIS
// RUN: %st dump %t.out.st | %fpcheck %s

// With frees the peak is at the second sum: exp (128 B), its copy (128 B),
// and the two 4-byte sums; the first pair went with the free of %a, which
// took its tied copy along. Without frees all of it stays.
// FREED: peak 264 bytes measured, 264 bytes predicted (equal)
// FREED-SAME: 4 frees
// KEPT: peak 524 bytes measured, 524 bytes predicted (equal)
// ANALYSIS: #2 pyop "reshape": live 256 bytes
// ANALYSIS: #4 trace.free: live 4 bytes
// sum(i / 8) + sum(exp(i)) for i < 32.
// FP: output0: f32[] = 4.59546e+13

trace.graph @copies(%x: tensor<4x8xf32> {trace.input = "x"}) -> tensor<f32> {
  %a = pyop "div"(%x, 8.0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %at = pyop "t"(%a) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // A copy: the transpose cannot be flattened as a view.
  %r = pyop "reshape"(%at, (32,)) : (tensor<8x4xf32>) -> tensor<32xf32>
  %s1 = pyop "sum"(%r) : (tensor<32xf32>) -> tensor<f32>
  %n = pyop "exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %nt = pyop "transpose"(%n, 0, 1) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // Another copy, tied to %n.
  %c = pyop "contiguous"(%nt) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  // No copy: contiguous of a contiguous tensor is the tensor itself.
  %c2 = pyop "contiguous"(%c) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s2 = pyop "sum"(%c2) : (tensor<8x4xf32>) -> tensor<f32>
  %y = pyop "add"(%s1, %s2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %y : tensor<f32>
}
