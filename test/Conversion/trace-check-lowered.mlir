// RUN: trace-opt %s -split-input-file -verify-diagnostics --trace-check-lowered | FileCheck %s
// The pipelines name themselves in the message.
// RUN: not trace-opt %s -split-input-file --trace-check-lowered="pipeline=trace-lower-to-cpu" 2>&1 | FileCheck %s --check-prefix=CPU

// Linalg on tensors (what the pipelines also accept) has nothing left to
// lower: the module passes unchanged.
// CHECK-LABEL: func.func @lowered(
// CHECK-NEXT: linalg.add
// CHECK-NEXT: return
func.func @lowered(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// An op --convert-trace-to-linalg left (a dynamic shape) is an error at the
// op, naming it; the pass does not stop at the first, so every leftover op
// is reported.
// CPU: error: trace-lower-to-cpu: op 'relu' was not lowered to linalg, so it cannot be compiled (see the remark of --convert-trace-to-linalg)
// CPU: error: trace-lower-to-cpu: op 'mystery' was not lowered to linalg
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{trace-check-lowered: op 'relu' was not lowered to linalg, so it cannot be compiled (see the remark of --convert-trace-to-linalg)}}
  %0 = trace.pyop "relu"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  // expected-error @+1 {{trace-check-lowered: op 'mystery' was not lowered to linalg}}
  %1 = trace.pyop "mystery"(%0) : (tensor<?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// A trace.graph that never went through the lowering fails the same way.
// CPU: error: trace-lower-to-cpu: op 'neg' was not lowered to linalg
trace.graph @unlowered(%x: tensor<4xf32> {trace.input = "x"}) -> tensor<4xf32> {
  // expected-error @+1 {{trace-check-lowered: op 'neg' was not lowered to linalg}}
  %0 = pyop "neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  ret %0 : tensor<4xf32>
}
