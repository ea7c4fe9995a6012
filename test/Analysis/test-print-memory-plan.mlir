// RUN: trace-opt %s -split-input-file -free-dead-tensors | trace-opt -split-input-file -test-print-memory-plan -o /dev/null 2>&1 | FileCheck %s
// RUN: trace-opt %s -split-input-file -test-print-memory-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFREED
// RUN: trace-opt %s -split-input-file -free-dead-tensors | trace-opt -split-input-file -test-print-memory-plan=alignment=256 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN256
// RUN: not trace-opt %s -split-input-file -test-print-memory-plan=alignment=48 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADALIGN

// A chain of 4 KiB tensors, each freed after its last use: the op's input
// and its output are alive at once, so two slots serve them all, at the
// bound. The result (returned) is not planned: the caller takes it.
// CHECK-LABEL: graph @chain
// CHECK-NEXT: buffer %0: 4096 bytes, #0..#2, offset 0
// CHECK-NEXT: buffer %1: 4096 bytes, #1..#4, offset 4096
// CHECK-NEXT: buffer %2: 4096 bytes, #3..#6, offset 0
// CHECK-NEXT: buffer %3: 4096 bytes, #5..#8, offset 4096
// CHECK-NEXT: arena 8192 bytes, lower bound 8192, greedy by size 8192, order size; predicted peak 8192
// CHECK-NEXT: verified
// Without frees every storage lives to the end of the run: no sharing.
// UNFREED-LABEL: graph @chain
// UNFREED: buffer %3: 4096 bytes, #3..#5, offset 12288
// UNFREED-NEXT: arena 16384 bytes, lower bound 16384
// UNFREED-NEXT: verified
// BADALIGN: error: alignment must be a power of two, not 48
trace.graph @chain(%x: tensor<1024xf32>) -> tensor<1024xi1> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "neg"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "tanh"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = pyop "relu"(%2) : (tensor<1024xf32>) -> tensor<1024xf32>
  %4 = pyop "gt"(%3, 0) : (tensor<1024xf32>) -> tensor<1024xi1>
  ret %4 : tensor<1024xi1>
}

// -----

// A view and an in-place result (relu_) are their storage's members: one
// buffer for %0, %1 and %2, alive until the last of them is used (add, #4)
// and freed (#5). Sizes round up to the alignment: 12 bytes (and the sum's
// 4, the add's 36) take 64, 256 at CUDA's alignment, where the predicted
// peak (StorageLiveness's, unaligned) is 60. %5 reuses %0's bytes.
// CHECK-LABEL: graph @views
// CHECK-NEXT: buffer %0: 64 bytes, #0..#5, offset 0
// CHECK-NEXT: buffer %3: 64 bytes, #3..#9, offset 64
// CHECK-NEXT: buffer %4: 64 bytes, #4..#7, offset 128
// CHECK-NEXT: buffer %5: 64 bytes, #6..#10, offset 0
// CHECK-NEXT: arena 192 bytes, lower bound 192, greedy by size 192, order size; predicted peak 60
// CHECK-NEXT: verified
// ALIGN256-LABEL: graph @views
// ALIGN256-NEXT: buffer %0: 256 bytes, #0..#5, offset 0
// ALIGN256: buffer %5: 256 bytes, #6..#10, offset 0
// ALIGN256-NEXT: arena 768 bytes, lower bound 768
trace.graph @views(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = pyop "exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = pyop "view"(%0, [3, 1]) : (tensor<3xf32>) -> tensor<3x1xf32>
  %2 = pyop "relu_"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %3 = pyop "neg"(%2) : (tensor<3xf32>) -> tensor<3xf32>
  %4 = pyop "add"(%3, %1) : (tensor<3xf32>, tensor<3x1xf32>) -> tensor<3x3xf32>
  %5 = pyop "sum"(%4) : (tensor<3x3xf32>) -> tensor<f32>
  %6 = pyop "mul"(%3, %5) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  ret %6 : tensor<3xf32>
}

// -----

// Storages of dynamic shape are left to the allocator: nothing to plan.
// CHECK-LABEL: graph @dynamic
// CHECK-NEXT: arena 0 bytes, lower bound 0, greedy by size 0, order size; predicted peak 0
// CHECK-NEXT: verified
trace.graph @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = pyop "exp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = pyop "neg"(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  ret %1 : tensor<?x3xf32>
}

// -----

// Greedy by size is not always best: it places the two 512-byte buffers
// (%1, %4) first, both at 0, and the long-lived 256-byte ones then stack
// above them to 1024 bytes. Placing by size times lifetime reaches the
// bound.
// CHECK-LABEL: graph @orders
// CHECK-NEXT: buffer %0: 256 bytes, #0..#5, offset 0
// CHECK-NEXT: buffer %1: 512 bytes, #1..#2, offset 256
// CHECK-NEXT: buffer %2: 256 bytes, #3..#8, offset 512
// CHECK-NEXT: buffer %3: 256 bytes, #4..#6, offset 256
// CHECK-NEXT: buffer %4: 512 bytes, #7..#10, offset 0
// CHECK-NEXT: arena 768 bytes, lower bound 768, greedy by size 1024, order size x lifetime; predicted peak 1024
// CHECK-NEXT: verified
trace.graph @orders(%x: tensor<64xf32>) -> tensor<128xf32> {
  %0 = pyop "exp"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %1 = pyop "cat"(%x, %0) : (tensor<64xf32>, tensor<64xf32>) -> tensor<128xf32>
  %2 = pyop "exp"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %3 = pyop "exp"(%0) : (tensor<64xf32>) -> tensor<64xf32>
  %4 = pyop "cat"(%2, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<128xf32>
  %5 = pyop "exp"(%4) : (tensor<128xf32>) -> tensor<128xf32>
  ret %5 : tensor<128xf32>
}
