// RUN: trace-opt %s -split-input-file -verify-diagnostics

// The memory plan's attributes (--plan-memory) as the verifier checks them.
// Two storages alive at once (%0 until its free, %1 from its op) may not
// share bytes.
// expected-error @+1 {{arena plan: result #0 of pyop "exp" (64 bytes at 0) and result #0 of pyop "neg" (64 bytes at 0) are alive at once and overlap}}
trace.graph @overlap(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 128 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  %2 = pyop "tanh"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  free %1 : tensor<4xf32>
  ret %2 : tensor<4xf32>
}

// -----

// Once %0 is freed, %1 may take its bytes.
trace.graph @reuse(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %t = pyop "sum"(%0) : (tensor<4xf32>) -> tensor<f32>
  free %0 : tensor<4xf32>
  %1 = pyop "neg"(%t) {trace.arena_offsets = array<i64: 0>} : (tensor<f32>) -> tensor<f32>
  %2 = pyop "add"(%x, %1) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  free %1 : tensor<f32>
  ret %2 : tensor<4xf32>
}

// -----

// Without a free a storage lives to the end of the run.
// expected-error @+1 {{are alive at once and overlap}}
trace.graph @no_free(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %t = pyop "sum"(%0) : (tensor<4xf32>) -> tensor<f32>
  %1 = pyop "neg"(%t) {trace.arena_offsets = array<i64: 0>} : (tensor<f32>) -> tensor<f32>
  %2 = pyop "add"(%x, %1) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  ret %2 : tensor<4xf32>
}

// -----

// expected-error @+1 {{arena plan: result #0 of pyop "exp" (64 bytes at 32) is not aligned to 64 inside the arena of 128 bytes}}
trace.graph @misaligned(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 128 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 32>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// 16 bytes take 64 at this alignment: past the arena's 32.
// expected-error @+1 {{(64 bytes at 0) is not aligned to 64 inside the arena of 32 bytes}}
trace.graph @outside(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 32 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// expected-error @+1 {{returns result #0 of pyop "exp", which has an arena offset: returned values are allocated apart, for the caller to take}}
trace.graph @returned(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  ret %0 : tensor<4xf32>
}

// -----

trace.graph @view(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{result #0 has an arena offset but is not a fresh storage (a view or in-place result takes its storage's)}}
  %1 = pyop "relu_"(%0) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  ret %2 : tensor<4xf32>
}

// -----

trace.graph @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  // expected-error @+1 {{result #0 has an arena offset but no static size}}
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<?xf32>) -> tensor<?xf32>
  %1 = pyop "neg"(%0) : (tensor<?xf32>) -> tensor<?xf32>
  free %0 : tensor<?xf32>
  ret %1 : tensor<?xf32>
}

// -----

trace.graph @no_arena(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has arena offsets but its graph has no 'trace.arena_bytes'}}
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// expected-error @+1 {{has one of 'trace.arena_bytes' and 'trace.arena_alignment' without the other}}
trace.graph @half(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64} {
  ret %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'trace.arena_alignment' must be a power of two, not 48}}
trace.graph @alignment(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 48 : i64} {
  ret %x : tensor<4xf32>
}

// -----

trace.graph @count(%x: tensor<4x8xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  // expected-error @+1 {{'trace.arena_offsets' must be an array<i64> of one offset per result (2)}}
  %0:2 = pyop "max"(%x, 1) {trace.arena_offsets = array<i64: 0>} : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>)
  ret %0#0 : tensor<4xf32>
}

// -----

trace.graph @negative(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  // expected-error @+1 {{'trace.arena_offsets': result #0 has offset -2 (expected -1, not planned, or >= 0)}}
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: -2>} : (tensor<4xf32>) -> tensor<4xf32>
  ret %0 : tensor<4xf32>
}

// -----

// An offset near INT64_MAX is outside any arena (no overflow on the way).
// expected-error @+1 {{(64 bytes at 9223372036854775807) is not aligned to 64 inside the arena of 64 bytes}}
trace.graph @huge(%x: tensor<4xf32>) -> tensor<4xf32> attributes {trace.arena_bytes = 64 : i64, trace.arena_alignment = 64 : i64} {
  %0 = pyop "exp"(%x) {trace.arena_offsets = array<i64: 9223372036854775807>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  ret %1 : tensor<4xf32>
}
