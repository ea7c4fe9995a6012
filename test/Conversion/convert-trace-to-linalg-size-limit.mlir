// RUN: trace-opt %s -split-input-file -verify-diagnostics -convert-trace-to-linalg | FileCheck %s

// A reshape whose element count overflows int64 used to send the lowering's
// reshape through 1-D forever (getNumElements() wrapped to 0 and no
// reassociation fit); the verifier now stops it before any pass runs.
trace.graph @reshape_overflow(%x: tensor<4294967296x4294967296xf32>) -> () {
  // expected-error @-1 {{'trace.graph' op argument #0 type 'tensor<4294967296x4294967296xf32>' holds 2^64 elements of 4 bytes, over TraceIR's limit of 2^48 bytes (281474976710656)}}
  %0 = pyop "reshape"(%x, [-1, 2147483648]) : (tensor<4294967296x4294967296xf32>) -> tensor<0x2147483648xf32>
  ret
}

// -----

// At the limit the lowering still runs, through 1-D (no reassociation
// relates the two shapes).
// CHECK-LABEL: @reshape_at_limit
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4194304x16777216xf32> into tensor<70368744177664xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [8388608, 8388608]
trace.graph @reshape_at_limit(%x: tensor<4194304x16777216xf32>) -> tensor<8388608x8388608xf32> {
  %0 = pyop "reshape"(%x, [8388608, 8388608]) : (tensor<4194304x16777216xf32>) -> tensor<8388608x8388608xf32>
  ret %0 : tensor<8388608x8388608xf32>
}
