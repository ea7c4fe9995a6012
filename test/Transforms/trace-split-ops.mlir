// RUN: trace-opt %s -split-input-file -trace-split-ops | FileCheck %s

// Each compute op becomes a graph of its own named after its position among
// the graph's pyops; its tensor operands (constants included, and a value
// used twice twice) are the inputs t0, t1, ...; views and in-place ops stay
// with the runtime and get no graph; the original graph is gone.
// CHECK-NOT: trace.graph @g(
// CHECK-LABEL: trace.graph @g__op0_linear(
// CHECK-SAME: %[[T0:.*]]: tensor<4x8xf32> {trace.input = "t0"}, %[[T1:.*]]: tensor<16x8xf32> {trace.input = "t1"}, %[[T2:.*]]: tensor<16xf32> {trace.input = "t2"}) -> tensor<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = pyop "linear"(%[[T0]], %[[T1]], %[[T2]])
// CHECK-NEXT: ret %[[R]] : tensor<4x16xf32>
// CHECK-LABEL: trace.graph @g__op1_mul(
// CHECK-SAME: %[[A:.*]]: tensor<4x16xf32> {trace.input = "t0"}, %[[B:.*]]: tensor<4x16xf32> {trace.input = "t1"})
// CHECK-NEXT: pyop "mul"(%[[A]], %[[B]])
// CHECK-NOT: @g__op2_
// CHECK-LABEL: trace.graph @g__op3_add(
// CHECK-SAME: %{{.*}}: tensor<64xf32> {trace.input = "t0"}, %{{.*}}: tensor<64xf32> {trace.input = "t1"})
// CHECK-NEXT: pyop "add"(%{{.*}}, %{{.*}}, 1)
// CHECK-NOT: @g__op4_
// CHECK-NOT: trace.graph
trace.graph @g(%w: tensor<16x8xf32> {trace.param = "fc.weight"}, %b: tensor<16xf32> {trace.param = "fc.bias"},
               %x: tensor<4x8xf32> {trace.input = "x"}) -> tensor<64xf32> {
  %c = constant dense<1.0> : tensor<64xf32>
  %0 = pyop "linear"(%x, %w, %b) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = pyop "mul"(%0, %0) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = pyop "view"(%1, [64]) : (tensor<4x16xf32>) -> tensor<64xf32>
  %3 = pyop "add"(%2, %c, 1) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %4 = pyop "relu_"(%3) : (tensor<64xf32>) -> tensor<64xf32>
  ret %4 : tensor<64xf32>
}

// -----

// Random ops (training dropout), ops the registry does not know and an eval
// dropout (which returns its input) keep the runtime's kernel.
// CHECK-NOT: @r__op0_
// CHECK-NOT: @r__op1_
// CHECK-NOT: @r__op2_
// CHECK-LABEL: trace.graph @r__op3_neg(
// CHECK-NOT: trace.graph
trace.graph @r(%x: tensor<8xf32> {trace.input = "x"}) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = pyop "dropout"(%x, 0.5, True) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = pyop "mystery"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = pyop "dropout"(%x, 0.5, False) : (tensor<8xf32>) -> tensor<8xf32>
  %3 = pyop "neg"(%2) : (tensor<8xf32>) -> tensor<8xf32>
  ret %0, %1, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
