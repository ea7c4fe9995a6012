// RUN: trace-opt %s -split-input-file -verify-diagnostics -reorder-for-memory=budget=4100

// Frees pin the order: reorder first, then free.
trace.graph @freed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{--reorder-for-memory: the graph has trace.free ops, which pin the order it would change; run it before --free-dead-tensors}}
  free %0 : tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// So does a plan: its offsets are only valid for the order it was made for.
// expected-error @+1 {{--reorder-for-memory: the graph carries a memory plan (trace.arena_bytes) that another order would break; run it before --plan-memory}}
trace.graph @planned(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {trace.arena_alignment = 64 : i64, trace.arena_bytes = 64 : i64} {
  %0 = pyop "relu"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// The best order peaks at 4104 bytes (one 4 KiB temporary and two sums),
// over the budget.
// expected-error @+1 {{--reorder-for-memory: the best order found needs 4104 bytes, 4 over the budget of 4100}}
trace.graph @over_budget(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
  %4 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %4 : tensor<f32>
}

// -----

// Within the budget: no error.
trace.graph @within_budget(%x: tensor<1024xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  ret %1 : tensor<f32>
}
