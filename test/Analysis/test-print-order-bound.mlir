// RUN: trace-opt %s -split-input-file -free-dead-tensors | trace-opt -split-input-file -test-print-order-bound -o /dev/null 2>&1 | FileCheck %s
// The bound comes from the dependences alone: the same without frees, where
// the traced order's bound (every storage alive to the end) is higher.
// RUN: trace-opt %s -split-input-file -test-print-order-bound -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFREED
// What --reorder-for-memory reaches: MemoryPlan's lower bound after it.
// RUN: trace-opt %s -split-input-file -reorder-for-memory -free-dead-tensors | trace-opt -split-input-file -test-print-memory-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=REORDERED
// RUN: trace-opt %s -split-input-file -free-dead-tensors | trace-opt -split-input-file -test-print-order-bound=alignment=256 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN256
// RUN: trace-opt %s -split-input-file -test-print-order-bound=max-ops=4 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: not trace-opt %s -split-input-file -test-print-order-bound=alignment=48 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADALIGN

// Two branches each make a 4 KiB temporary and reduce it to a returned
// scalar. The trace makes both temporaries first (8 KiB); no order needs
// more than one at a time, and --reorder-for-memory reaches the bound.
// CHECK-LABEL: graph @branches
// CHECK-NEXT: order bound 4096 bytes at op #0 'exp'; traced order's bound 8192
// UNFREED-LABEL: graph @branches
// UNFREED-NEXT: order bound 4096 bytes at op #0 'exp'; traced order's bound 8192
// REORDERED-LABEL: graph @branches
// REORDERED: lower bound 4096,
// TOOBIG-LABEL: graph @branches
// TOOBIG-NEXT: order bound 4096 bytes
// BADALIGN: error: alignment must be a power of two, not 48
trace.graph @branches(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
  ret %2, %3 : tensor<f32>, tensor<f32>
}

// -----

// As above, with the scalars added (64 bytes each, aligned). The bound is
// reached at the first sum (its input and its result); but whichever sum
// runs second finds the first's result alive beside its own input and
// result, so the best order needs 64 bytes more: a lower bound, not always
// reached.
// CHECK-LABEL: graph @two_branches
// CHECK-NEXT: order bound 4160 bytes at op #2 'sum'; traced order's bound 8256
// UNFREED-LABEL: graph @two_branches
// UNFREED-NEXT: order bound 4160 bytes at op #2 'sum'; traced order's bound 8320
// REORDERED-LABEL: graph @two_branches
// REORDERED: lower bound 4224,
// ALIGN256-LABEL: graph @two_branches
// ALIGN256-NEXT: order bound 4352 bytes at op #2 'sum'; traced order's bound 8448
trace.graph @two_branches(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
  %4 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %4 : tensor<f32>
}

// -----

// A chain has one order: its bound is the traced order's (each op's input
// and output).
// CHECK-LABEL: graph @chain
// CHECK-NEXT: order bound 8192 bytes at op #1 'neg'; traced order's bound 8192
// UNFREED-LABEL: graph @chain
// UNFREED-NEXT: order bound 8192 bytes at op #1 'neg'; traced order's bound 16384
// REORDERED-LABEL: graph @chain
// REORDERED: lower bound 8192,
// TOOBIG-LABEL: graph @chain
// TOOBIG-NEXT: order bound: graph too large (5 ops)
trace.graph @chain(%x: tensor<1024xf32>) -> tensor<1024xi1> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "neg"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "tanh"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = pyop "relu"(%2) : (tensor<1024xf32>) -> tensor<1024xf32>
  %4 = pyop "gt"(%3, 0) : (tensor<1024xf32>) -> tensor<1024xi1>
  ret %4 : tensor<1024xi1>
}

// -----

// A returned value is not planned (the caller takes it): %0 counts nothing
// though it is alive at the neg, which counts only its own result.
// CHECK-LABEL: graph @returned
// CHECK-NEXT: order bound 4096 bytes at op #1 'neg'; traced order's bound 4096
// REORDERED-LABEL: graph @returned
// REORDERED: lower bound 4096,
trace.graph @returned(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<f32>) {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "neg"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
  ret %0, %2 : tensor<1024xf32>, tensor<f32>
}

// -----

// An unknown op's result may be its operand's storage: %a is alive while
// %m is used (the exp and the mul), beside %b.
// CHECK-LABEL: graph @may_alias
// CHECK-NEXT: order bound 8192 bytes at op #2 'exp'; traced order's bound 8192
trace.graph @may_alias(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %m = pyop "mystery"(%a) : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = pyop "exp"(%m) : (tensor<1024xf32>) -> tensor<1024xf32>
  %c = pyop "mul"(%b, %m) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  ret %c : tensor<1024xf32>
}

// -----

// Nothing planned: no op to name.
// CHECK-LABEL: graph @nothing_planned
// CHECK-NEXT: order bound 0 bytes; traced order's bound 0
trace.graph @nothing_planned(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  ret %0 : tensor<1024xf32>
}
