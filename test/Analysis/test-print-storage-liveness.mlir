// RUN: trace-opt %s -split-input-file -test-print-storage-liveness -o /dev/null 2>&1 | FileCheck %s
// RUN: trace-opt %s -split-input-file -free-dead-tensors | trace-opt -split-input-file -test-print-storage-liveness -o /dev/null 2>&1 | FileCheck %s --check-prefix=FREED

// Owners, byte sizes, last uses and the reasons a storage is kept. A view
// (t) joins its base's storage; an unknown op's result may alias, so it
// joins too; the relu on %0 is the class's last use.
// CHECK-LABEL: graph @ownership
// CHECK-NEXT: storage %w(param, 48 bytes): last use #1 pyop "linear", kept: parameter
// CHECK-NEXT: storage %x(donated, 24 bytes): last use #1 pyop "linear", freeable
// CHECK-NEXT: storage %arg0(input, 24 bytes): last use #-1 never, kept: input (not donated)
// CHECK-NEXT: storage %0(constant, 16 bytes): last use #1 pyop "linear", kept: constant
// CHECK-NEXT: storage %1(run, 32 bytes) +may-alias: last use #4 pyop "relu", freeable
// CHECK-NEXT: storage %4(run, 32 bytes): last use #5 trace.ret, kept: returned
// Live bytes count only what the run allocates: not params, constants or
// inputs, and nothing for views.
// CHECK-NEXT: #0 trace.constant: live 0 bytes
// CHECK-NEXT: #1 pyop "linear": live 32 bytes
// CHECK-NEXT: #2 pyop "t": live 32 bytes
// CHECK-NEXT: #3 pyop "mystery": live 32 bytes
// CHECK-NEXT: #4 pyop "relu": live 64 bytes
// CHECK-NEXT: #5 trace.ret: live 64 bytes
// CHECK-NEXT: peak 64 bytes (lower bound: dynamic shapes or unknown ops)
// After the pass the same storages are marked freed, and the frees lower
// the live bytes.
// FREED-LABEL: graph @ownership
// FREED: storage %x(donated, 24 bytes): last use #1 pyop "linear", freed
// FREED: storage %1(run, 32 bytes) +may-alias: last use #5 pyop "relu", freed
// FREED: #5 pyop "relu": live 64 bytes
// FREED-NEXT: #6 trace.free: live 32 bytes
// FREED-NEXT: #7 trace.ret: live 32 bytes
// FREED-NEXT: peak 64 bytes
trace.graph @ownership(%w: tensor<4x3xf32> {trace.param = "w"},
                       %x: tensor<2x3xf32> {trace.input = "x", trace.donated},
                       %u: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %c = constant dense<0.5> : tensor<4xf32>
  %0 = pyop "linear"(%x, %w, %c) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = pyop "t"(%0) : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %2 = pyop "mystery"(%1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = pyop "relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  ret %3 : tensor<2x4xf32>
}

// -----

// Freeing early lowers the peak: without frees a chain of four 4 KiB
// tensors peaks at 16 KiB; with them two are live at once (the op's input
// and its output), 8 KiB. Element sizes follow the dtype (i1 takes a byte).
// CHECK-LABEL: graph @chain
// CHECK: storage %4(run, 1024 bytes)
// CHECK: peak 17408 bytes
// FREED-LABEL: graph @chain
// FREED: peak 8192 bytes
trace.graph @chain(%x: tensor<1024xf32>) -> tensor<1024xi1> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "neg"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "tanh"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = pyop "relu"(%2) : (tensor<1024xf32>) -> tensor<1024xf32>
  %4 = pyop "gt"(%3, 0) : (tensor<1024xf32>) -> tensor<1024xi1>
  ret %4 : tensor<1024xi1>
}

// -----

// Dynamic shapes: their bytes are unknown, count 0, and the peak is marked
// as a lower bound.
// CHECK-LABEL: graph @dynamic
// CHECK: storage %0(run, ? bytes)
// CHECK: peak 0 bytes (lower bound: dynamic shapes or unknown ops)
trace.graph @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = pyop "exp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  ret %0 : tensor<?x3xf32>
}

// -----

// Unknown ops may return views of their operands, transitively: %a stays
// alive until the last use of %u2 (through %u1), and %b, whose maybe-view
// %u3 is returned, is kept.
// CHECK-LABEL: graph @unknown_chain
// CHECK: storage %0(run, 16 bytes) +may-alias: last use #4 pyop "neg", freeable
// CHECK: storage %1(run, 16 bytes) +may-alias: last use #6 trace.ret, kept: returned
trace.graph @unknown_chain(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %u1 = pyop "mystery"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %u2 = pyop "mystery"(%u1) : (tensor<4xf32>) -> tensor<4xf32>
  %n = pyop "neg"(%u2) : (tensor<4xf32>) -> tensor<4xf32>
  %u3 = pyop "mystery"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  ret %n, %u3 : tensor<4xf32>, tensor<4xf32>
}
