// Views on the CPU share storage with new strides; matrix products and
// elementwise ops read any strides; reshape and contiguous of a transposed
// tensor copy (the copy is tied to the input's storage). x = [[0 1 2],
// [3 4 5]].
// RUN: %st write %t.in.st x=f32[2,3]:range
// RUN: trace-opt %s -free-dead-tensors -o %t.freed.mlir
// RUN: trace-run %t.freed.mlir --inputs %t.in.st --outputs %t.out.st --check-frees
// RUN: %st dump %t.out.st | FileCheck %s
// RUN: trace-run %t.freed.mlir --inputs %t.in.st --memory-report | FileCheck %s --check-prefix=MEM
// MEM: peak 132 bytes measured, 132 bytes predicted (equal)

// CHECK: output0: f32[6] = 0 3 1 4 2 5
// CHECK: output1: f32[3, 3] = 9 12 15 12 17 22 15 22 29
// CHECK: output2: f32[2] = 3 5
// CHECK: output3: f32[2, 3] = 0 2 4 3 5 7
// CHECK: output4: f32[1, 3, 2] = 0 3 1 4 2 5
// CHECK: output5: f32[2] = 1 4
// CHECK: output6: f32[3, 2] = 0 3 1 4 2 5
trace.graph @views(%x: tensor<2x3xf32> {trace.input = "x", trace.donated})
    -> (tensor<6xf32>, tensor<3x3xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<1x3x2xf32>, tensor<2xf32>, tensor<3x2xf32>) {
  %t = pyop "t"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // reshape of a transposed tensor cannot be a view: a copy.
  %r = pyop "reshape"(%t, (6,)) : (tensor<3x2xf32>) -> tensor<6xf32>
  // x^T @ x with a transposed operand handed to BLAS as is.
  %m = pyop "matmul"(%t, %x) : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  // select row 1, then every other element from 0.
  %row = pyop "select"(%x, 0, 1) : (tensor<2x3xf32>) -> tensor<3xf32>
  %s = pyop "slice"(%row, 0, 0, 9223372036854775807, 2) : (tensor<3xf32>) -> tensor<2xf32>
  // x + [0 1 2] broadcast through expand.
  %n = pyop "narrow"(%row, 0, 0, 3) : (tensor<3xf32>) -> tensor<3xf32>
  %r0 = pyop "select"(%x, 0, 0) : (tensor<2x3xf32>) -> tensor<3xf32>
  %e = pyop "expand"(%r0, (2, 3)) : (tensor<3xf32>) -> tensor<2x3xf32>
  %a = pyop "add"(%x, %e) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // permute + unsqueeze.
  %u = pyop "unsqueeze"(%x, 0) : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %p = pyop "permute"(%u, (0, 2, 1)) : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
  %pc = pyop "contiguous"(%p) : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  // column 1 through a transpose and a squeeze of a size-1 dim.
  %c = pyop "transpose"(%x, 0, 1) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %c1 = pyop "narrow"(%c, 0, 1, 1) : (tensor<3x2xf32>) -> tensor<1x2xf32>
  %sq = pyop "squeeze"(%c1, 0) : (tensor<1x2xf32>) -> tensor<2xf32>
  %cl = pyop "clone"(%t) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  ret %r, %m, %s, %a, %pc, %sq, %cl : tensor<6xf32>, tensor<3x3xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<1x3x2xf32>, tensor<2xf32>, tensor<3x2xf32>
}
