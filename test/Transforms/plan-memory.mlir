// RUN: trace-opt %s -split-input-file -free-dead-tensors -plan-memory | FileCheck %s
// Idempotent: a plan already there is made again, the same.
// RUN: trace-opt %s -split-input-file -free-dead-tensors -plan-memory -plan-memory | FileCheck %s
// RUN: trace-opt %s -split-input-file -free-dead-tensors -plan-memory='alignment=256' | FileCheck %s --check-prefix=ALIGN256
// RUN: not trace-opt %s -split-input-file -plan-memory='alignment=12' 2>&1 | FileCheck %s --check-prefix=BADALIGN
// A budget: the chain's 8192 bytes (its bound) fit in 8192; 8191 fails by
// a byte, 4096 by 4096.
// RUN: trace-opt %s -split-input-file -free-dead-tensors -plan-memory='budget=8192' | FileCheck %s
// RUN: not trace-opt %s -split-input-file -free-dead-tensors -plan-memory='budget=8191' 2>&1 | FileCheck %s --check-prefix=OVER
// RUN: not trace-opt %s -split-input-file -free-dead-tensors -plan-memory='budget=4096' 2>&1 | FileCheck %s --check-prefix=BELOW
// RUN: not trace-opt %s -split-input-file -plan-memory='budget=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// A chain freed after each last use: two slots serve it. The returned
// value and the donated input are not in the arena (no offsets: the caller
// takes the one, owns the other).
// CHECK-LABEL: trace.graph @chain
// CHECK-SAME: attributes {trace.arena_alignment = 64 : i64, trace.arena_bytes = 8192 : i64}
// CHECK-NEXT: pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>}
// CHECK-NEXT: free %x
// CHECK-NEXT: pyop "neg"(%0) {trace.arena_offsets = array<i64: 4096>}
// CHECK-NEXT: free %0
// CHECK-NEXT: pyop "tanh"(%1) {trace.arena_offsets = array<i64: 0>}
// CHECK-NEXT: free %1
// CHECK-NEXT: pyop "gt"(%2, 0) :
// ALIGN256-LABEL: trace.graph @chain
// ALIGN256-SAME: attributes {trace.arena_alignment = 256 : i64, trace.arena_bytes = 8192 : i64}
// BADALIGN: error: --plan-memory: alignment must be a power of two, not 12
// OVER: error: --plan-memory: @chain's arena needs 8192 bytes, 1 over the budget of 8191; no placement fits: 8192 bytes are alive at once
// BELOW: error: --plan-memory: @chain's arena needs 8192 bytes, 4096 over the budget of 4096; no placement fits: 8192 bytes are alive at once in this order (try --reorder-for-memory first)
// NEGATIVE: error: --plan-memory: budget must not be negative, not -1
trace.graph @chain(%x: tensor<1024xf32> {trace.input = "x", trace.donated}) -> tensor<1024xi1> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "neg"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "tanh"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = pyop "gt"(%2, 0) : (tensor<1024xf32>) -> tensor<1024xi1>
  ret %3 : tensor<1024xi1>
}

// -----

// Views and in-place results take their storage's offset: only the op that
// allocates carries one. A multi-result op has one offset per result; the
// indices (%0#1), freed at once, leave their bytes to neg's result.
// CHECK-LABEL: trace.graph @members
// CHECK-SAME: trace.arena_bytes = 128 : i64
// CHECK-NEXT: pyop "max"(%arg0, 1) {trace.arena_offsets = array<i64: 0, 64>}
// CHECK-NEXT: free %0#1
// CHECK-NEXT: pyop "view"(%0#0, [4, 1]) :
// CHECK-NEXT: pyop "relu_"(%0#0) :
// CHECK-NEXT: pyop "neg"(%2) {trace.arena_offsets = array<i64: 64>}
// CHECK-NEXT: pyop "add"(%3, %1) :
// ALIGN256-LABEL: trace.graph @members
// ALIGN256-SAME: trace.arena_bytes = 512 : i64
// ALIGN256-NEXT: pyop "max"(%arg0, 1) {trace.arena_offsets = array<i64: 0, 256>}
trace.graph @members(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0:2 = pyop "max"(%x, 1) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>)
  %1 = pyop "view"(%0#0, [4, 1]) : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = pyop "relu_"(%0#0) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "neg"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyop "add"(%3, %1) : (tensor<4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  ret %4 : tensor<4x4xf32>
}

// -----

// Dynamic shapes are left to the allocator: an empty arena.
// CHECK-LABEL: trace.graph @dynamic
// CHECK-SAME: attributes {trace.arena_alignment = 64 : i64, trace.arena_bytes = 0 : i64}
// CHECK-NEXT: pyop "exp"(%arg0) :
trace.graph @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = pyop "exp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = pyop "neg"(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  ret %1 : tensor<?x3xf32>
}
