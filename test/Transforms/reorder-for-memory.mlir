// RUN: trace-opt %s -split-input-file -reorder-for-memory | FileCheck %s
// A second run finds nothing better than the first's order.
// RUN: trace-opt %s -split-input-file -reorder-for-memory > %t.once
// RUN: trace-opt %t.once -split-input-file -reorder-for-memory > %t.twice
// RUN: diff %t.once %t.twice
// The predicted peak (StorageLiveness after --free-dead-tensors) of the
// traced order, and of the reordered one through the whole pipeline, which
// must verify (the plan included).
// RUN: trace-opt %s -split-input-file -free-dead-tensors | trace-opt -split-input-file -test-print-storage-liveness -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRACED
// RUN: trace-opt %s -split-input-file --pass-pipeline='builtin.module(trace.graph(reorder-for-memory,free-dead-tensors,plan-memory))' | trace-opt -split-input-file -test-print-storage-liveness -o /dev/null 2>&1 | FileCheck %s --check-prefix=PEAK
// RUN: trace-opt %s -split-input-file --pass-pipeline='builtin.module(trace.graph(reorder-for-memory,free-dead-tensors,plan-memory))' | FileCheck %s --check-prefix=PLAN
// The arena's lower bound (MemoryPlan, aligned, returned values apart) of
// the traced order and of the reordered one.
// RUN: trace-opt %s -split-input-file -free-dead-tensors | trace-opt -split-input-file -test-print-memory-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRACED-ARENA
// RUN: trace-opt %s -split-input-file -reorder-for-memory -free-dead-tensors | trace-opt -split-input-file -test-print-memory-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARENA

// Two branches each make a 4 KiB temporary and reduce it to 4 bytes. The
// trace makes both temporaries first (8 KiB alive); reordered, the first
// branch ends before the second starts.
// CHECK-LABEL: trace.graph @two_branches
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[SA:.*]] = pyop "sum"(%[[A]])
// CHECK-NEXT: %[[B:.*]] = pyop "exp"(%arg1)
// CHECK-NEXT: %[[SB:.*]] = pyop "sum"(%[[B]])
// CHECK-NEXT: %[[R:.*]] = pyop "add"(%[[SA]], %[[SB]])
// CHECK-NEXT: ret %[[R]]
// TRACED-LABEL: graph @two_branches
// TRACED: peak 8196 bytes
// PEAK-LABEL: graph @two_branches
// PEAK: peak 4104 bytes
// PLAN-LABEL: trace.graph @two_branches
// PLAN-SAME: trace.arena_bytes
// PLAN: free
trace.graph @two_branches(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
  %4 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %4 : tensor<f32>
}

// -----

// The traced order is already the best: it is kept as it is, though other
// orders (the two returned exps swapped, the constant moved) peak as low.
// CHECK-LABEL: trace.graph @already_best
// CHECK-NEXT: %[[C:.*]] = constant
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[SA:.*]] = pyop "sum"(%[[A]])
// CHECK-NEXT: %[[B:.*]] = pyop "exp"(%arg1)
// CHECK-NEXT: %[[SB:.*]] = pyop "sum"(%[[B]])
// CHECK-NEXT: %[[R:.*]] = pyop "add"(%[[SA]], %[[SB]])
// CHECK-NEXT: %[[E:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[F:.*]] = pyop "mul"(%arg1, %[[C]])
// CHECK-NEXT: ret %[[R]], %[[E]], %[[F]]
// TRACED-LABEL: graph @already_best
// TRACED: peak 8196 bytes
// PEAK-LABEL: graph @already_best
// PEAK: peak 8196 bytes
trace.graph @already_best(%x: tensor<1024xf32>, %y: tensor<1024xf32>)
    -> (tensor<f32>, tensor<1024xf32>, tensor<1024xf32>) {
  %c = constant dense<2.0> : tensor<1024xf32>
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %2 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = pyop "sum"(%2) : (tensor<1024xf32>) -> tensor<f32>
  %4 = pyop "add"(%1, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %5 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %6 = pyop "mul"(%y, %c) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  ret %4, %5, %6 : tensor<f32>, tensor<1024xf32>, tensor<1024xf32>
}

// -----

// An in-place write after a read through a view: add_ writes %1's storage,
// which the neg reads through %v. add_ allocates nothing, so a scheduler
// free to would run it before the neg (which allocates 4 KiB); it stays
// after the view and the neg, while the branches are still reordered.
// CHECK-LABEL: trace.graph @write_after_view_read
// CHECK-NEXT: %[[B:.*]] = pyop "exp"(%arg1)
// CHECK-NEXT: %[[V:.*]] = pyop "view"(%[[B]], [32, 32])
// CHECK-NEXT: %[[N:.*]] = pyop "neg"(%[[V]])
// CHECK-NEXT: %[[SN:.*]] = pyop "sum"(%[[N]])
// CHECK-NEXT: %[[W:.*]] = pyop "add_"(%[[B]], 1.0
// CHECK-NEXT: %[[SW:.*]] = pyop "sum"(%[[W]])
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[SA:.*]] = pyop "sum"(%[[A]])
// TRACED-LABEL: graph @write_after_view_read
// TRACED: peak 12292 bytes
// PEAK-LABEL: graph @write_after_view_read
// PEAK: peak 8196 bytes
trace.graph @write_after_view_read(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v = pyop "view"(%1, [32, 32]) : (tensor<1024xf32>) -> tensor<32x32xf32>
  %2 = pyop "neg"(%v) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %3 = pyop "add_"(%1, 1.0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %4 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %5 = pyop "sum"(%2) : (tensor<32x32xf32>) -> tensor<f32>
  %6 = pyop "sum"(%3) : (tensor<1024xf32>) -> tensor<f32>
  %7 = pyop "add"(%4, %5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %8 = pyop "add"(%7, %6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %8 : tensor<f32>
}

// -----

// The same through the other door: mul_ writes through a view of %1 after
// the neg reads %1 itself. The neg stays before the write.
// CHECK-LABEL: trace.graph @write_through_view_after_read
// CHECK: %[[B:.*]] = pyop "exp"(%arg1)
// CHECK: %[[V:.*]] = pyop "view"(%[[B]], [32, 32])
// CHECK: pyop "neg"(%[[B]])
// CHECK: pyop "mul_"(%[[V]], 2.0
// TRACED-LABEL: graph @write_through_view_after_read
// TRACED: peak 12292 bytes
// PEAK-LABEL: graph @write_through_view_after_read
// PEAK: peak 8196 bytes
trace.graph @write_through_view_after_read(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %v = pyop "view"(%1, [32, 32]) : (tensor<1024xf32>) -> tensor<32x32xf32>
  %2 = pyop "neg"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %3 = pyop "mul_"(%v, 2.0) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %4 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %5 = pyop "sum"(%2) : (tensor<1024xf32>) -> tensor<f32>
  %6 = pyop "sum"(%3) : (tensor<32x32xf32>) -> tensor<f32>
  %7 = pyop "add"(%4, %5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %8 = pyop "add"(%7, %6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %8 : tensor<f32>
}

// -----

// Random ops keep their order. Running rand and its sum before the
// dropout would keep one 4 KiB tensor alive instead of two, but the
// dropout draws its numbers first: the order and the 8 KiB peak stay.
// CHECK-LABEL: trace.graph @random_order
// CHECK-NEXT: %[[D:.*]] = pyop "dropout"(%arg0, 0.5, True)
// CHECK-NEXT: %[[R:.*]] = pyop "rand"([1024])
// CHECK-NEXT: %[[S:.*]] = pyop "sum"(%[[R]])
// CHECK-NEXT: ret %[[D]], %[[S]]
// TRACED-LABEL: graph @random_order
// TRACED: peak 8196 bytes
// PEAK-LABEL: graph @random_order
// PEAK: peak 8196 bytes
trace.graph @random_order(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<f32>) {
  %a = pyop "dropout"(%x, 0.5, True) : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = pyop "rand"([1024]) : () -> tensor<1024xf32>
  %s = pyop "sum"(%b) : (tensor<1024xf32>) -> tensor<f32>
  ret %a, %s : tensor<1024xf32>, tensor<f32>
}

// -----

// With a deterministic exp in the dropout's place, the same move is free
// and taken.
// CHECK-LABEL: trace.graph @random_and_pure
// CHECK-NEXT: %[[R:.*]] = pyop "rand"([1024])
// CHECK-NEXT: %[[S:.*]] = pyop "sum"(%[[R]])
// CHECK-NEXT: %[[E:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: ret %[[E]], %[[S]]
// TRACED-LABEL: graph @random_and_pure
// TRACED: peak 8196 bytes
// PEAK-LABEL: graph @random_and_pure
// PEAK: peak 4100 bytes
trace.graph @random_and_pure(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<f32>) {
  %a = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = pyop "rand"([1024]) : () -> tensor<1024xf32>
  %s = pyop "sum"(%b) : (tensor<1024xf32>) -> tensor<f32>
  ret %a, %s : tensor<1024xf32>, tensor<f32>
}

// -----

// Unknown ops keep their order (mystery before enigma), may read and write
// their operands (the sum of %1 stays after mystery) and their results may
// be their operands (%1 lives as long as %m is used).
// CHECK-LABEL: trace.graph @unknown_ops
// CHECK-NEXT: %[[B:.*]] = pyop "exp"(%arg1)
// CHECK-NEXT: %[[M:.*]] = pyop "mystery"(%[[B]])
// CHECK: pyop "sum"(%[[B]])
// CHECK: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: pyop "enigma"(%[[A]])
// TRACED-LABEL: graph @unknown_ops
// TRACED: peak 8204 bytes
// PEAK-LABEL: graph @unknown_ops
// PEAK: peak 4112 bytes
trace.graph @unknown_ops(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %m = pyop "mystery"(%1) : (tensor<1024xf32>) -> tensor<1024xf32>
  %n = pyop "enigma"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
  %4 = pyop "sum"(%m) : (tensor<1024xf32>) -> tensor<f32>
  %5 = pyop "sum"(%n) : (tensor<1024xf32>) -> tensor<f32>
  %6 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %7 = pyop "add"(%4, %5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %8 = pyop "add"(%6, %7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %8 : tensor<f32>
}

// -----

// A reshape of a transpose must copy; the copy is tied to the exp's
// storage and freed with it, and priced so: 16 KiB of exps and copies
// alive in the trace, 8 KiB (one exp and its copy) reordered.
// CHECK-LABEL: trace.graph @tied_copies
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[TA:.*]] = pyop "t"(%[[A]])
// CHECK-NEXT: %[[RA:.*]] = pyop "reshape"(%[[TA]], [1024])
// CHECK-NEXT: pyop "sum"(%[[RA]])
// CHECK-NEXT: %[[B:.*]] = pyop "exp"(%arg1)
// TRACED-LABEL: graph @tied_copies
// TRACED: peak 16388 bytes
// PEAK-LABEL: graph @tied_copies
// PEAK: peak 8200 bytes
trace.graph @tied_copies(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %1 = pyop "exp"(%y) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %t0 = pyop "t"(%0) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %t1 = pyop "t"(%1) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %r0 = pyop "reshape"(%t0, [1024]) : (tensor<32x32xf32>) -> tensor<1024xf32>
  %r1 = pyop "reshape"(%t1, [1024]) : (tensor<32x32xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%r0) : (tensor<1024xf32>) -> tensor<f32>
  %3 = pyop "sum"(%r1) : (tensor<1024xf32>) -> tensor<f32>
  %4 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %4 : tensor<f32>
}

// -----

// The total peak is the returned 64 KiB product at the end, whatever the
// order: it ties. The arena's peak (the exps, 8 KiB in the trace) is what
// is left to lower, and the order whose arena holds one exp at a time is
// kept though its total peak is no lower.
// CHECK-LABEL: trace.graph @total_ties_arena_drops
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[SA:.*]] = pyop "sum"(%[[A]])
// CHECK-NEXT: %[[B:.*]] = pyop "exp"(%arg1)
// CHECK-NEXT: %[[SB:.*]] = pyop "sum"(%[[B]])
// TRACED-LABEL: graph @total_ties_arena_drops
// TRACED: peak 65540 bytes
// PEAK-LABEL: graph @total_ties_arena_drops
// PEAK: peak 65540 bytes
// TRACED-ARENA-LABEL: graph @total_ties_arena_drops
// TRACED-ARENA: lower bound 8256,
// ARENA-LABEL: graph @total_ties_arena_drops
// ARENA: lower bound 4224,
trace.graph @total_ties_arena_drops(%x: tensor<1024xf32>, %y: tensor<1024xf32>, %z: tensor<16384xf32>) -> tensor<16384xf32> {
  %0 = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = pyop "exp"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = pyop "sum"(%0) : (tensor<1024xf32>) -> tensor<f32>
  %3 = pyop "sum"(%1) : (tensor<1024xf32>) -> tensor<f32>
  %4 = pyop "add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %5 = pyop "mul"(%z, %4) : (tensor<16384xf32>, tensor<f32>) -> tensor<16384xf32>
  ret %5 : tensor<16384xf32>
}

// -----

// A training step in small: %a is a saved activation, %g a gradient, %wg
// the weight's gradient, returned (allocated apart from the arena), whose
// mul reads %a last. The trace makes it late, with %a still in the arena
// while exp(%g) runs; made early, it frees %a first. The returned 256 KiB
// at the end fix the total peak either way.
// CHECK-LABEL: trace.graph @returned_gradient_early
// CHECK: %[[G:.*]] = pyop "mul"(%arg1
// CHECK-NEXT: %[[WG:.*]] = pyop "mul"(%[[G]], %{{.*}})
// CHECK-NEXT: pyop "exp"(%[[G]])
// TRACED-LABEL: graph @returned_gradient_early
// TRACED: peak 278532 bytes
// PEAK-LABEL: graph @returned_gradient_early
// PEAK: peak 278532 bytes
// TRACED-ARENA-LABEL: graph @returned_gradient_early
// TRACED-ARENA: lower bound 36864,
// ARENA-LABEL: graph @returned_gradient_early
// ARENA: lower bound 32768,
trace.graph @returned_gradient_early(%x: tensor<1024xf32>, %y: tensor<4x1024xf32>, %z: tensor<65536xf32>)
    -> (tensor<4x1024xf32>, tensor<f32>, tensor<65536xf32>) {
  %a = pyop "exp"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %s = pyop "sum"(%a) : (tensor<1024xf32>) -> tensor<f32>
  %g = pyop "mul"(%y, %s) : (tensor<4x1024xf32>, tensor<f32>) -> tensor<4x1024xf32>
  %h = pyop "exp"(%g) : (tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %hs = pyop "sum"(%h) : (tensor<4x1024xf32>) -> tensor<f32>
  %wg = pyop "mul"(%g, %a) : (tensor<4x1024xf32>, tensor<1024xf32>) -> tensor<4x1024xf32>
  %big = pyop "mul"(%z, %hs) : (tensor<65536xf32>, tensor<f32>) -> tensor<65536xf32>
  ret %wg, %hs, %big : tensor<4x1024xf32>, tensor<f32>, tensor<65536xf32>
}
