// RUN: trace-opt %s -split-input-file --trace-drop-unlowered | FileCheck %s

// Per op, after --trace-split-ops and --convert-trace-to-linalg: the
// function whose op did not lower (a dynamic shape, an op with no lowering)
// is erased, since the runtime keeps running that op itself; the lowered
// functions around it are kept as they are.
// CHECK-NOT: @g__op0_relu
// CHECK-LABEL: func.func @g__op1_neg(
// CHECK-NEXT: linalg.negf
// CHECK-NEXT: return
// CHECK-NOT: @g__op2_mystery
// CHECK-LABEL: func.func @g__op3_add(
// CHECK-NEXT: linalg.add
// CHECK-NOT: func.func
func.func @g__op0_relu(%t0: tensor<?xf32> {trace.input = "t0"}) -> tensor<?xf32> {
  %0 = trace.pyop "relu"(%t0) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @g__op1_neg(%t0: tensor<8xf32> {trace.input = "t0"}) -> tensor<8xf32> {
  %0 = linalg.negf ins(%t0 : tensor<8xf32>) outs(%t0 : tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @g__op2_mystery(%t0: tensor<8xf32> {trace.input = "t0"}) -> tensor<8xf32> {
  %0 = trace.pyop "mystery"(%t0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @g__op3_add(%t0: tensor<8xf32> {trace.input = "t0"}, %t1: tensor<8xf32> {trace.input = "t1"}) -> tensor<8xf32> {
  %0 = linalg.add ins(%t0, %t1 : tensor<8xf32>, tensor<8xf32>) outs(%t0 : tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Everything lowered: nothing is erased.
// CHECK-LABEL: func.func @h__op0_neg(
// CHECK-NEXT: linalg.negf
func.func @h__op0_neg(%t0: tensor<8xf32> {trace.input = "t0"}) -> tensor<8xf32> {
  %0 = linalg.negf ins(%t0 : tensor<8xf32>) outs(%t0 : tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Only functions (what --convert-trace-to-linalg makes) are dropped: a
// trace.graph is the runtime's input, not an op's host code, and stays.
// CHECK-LABEL: trace.graph @k(
// CHECK-NEXT: pyop "mystery"
trace.graph @k(%x: tensor<8xf32> {trace.input = "x"}) -> tensor<8xf32> {
  %0 = pyop "mystery"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  ret %0 : tensor<8xf32>
}
