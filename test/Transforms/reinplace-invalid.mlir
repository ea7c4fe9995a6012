// RUN: trace-opt %s -split-input-file -verify-diagnostics -reinplace
// RUN: not trace-opt %s -split-input-file -reinplace=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: --reinplace: alignment must be a power of two, not 48

// Frees end storages an in-place op would go on using: reinplace first.
trace.graph @freed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{--reinplace: the graph has trace.free ops, which free storages an in-place op would keep using; run it before --free-dead-tensors}}
  free %0 : tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// A plan's offsets assume the storages as they are.
// expected-error @+1 {{--reinplace: the graph carries a memory plan (trace.arena_bytes) that new aliasing would break; run it before --plan-memory}}
trace.graph @planned(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {trace.arena_alignment = 64 : i64, trace.arena_bytes = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  ret %1 : tensor<4xf32>
}
