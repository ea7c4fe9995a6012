// RUN: trace-opt %s -split-input-file --trace-innermost-dim-first | FileCheck %s

// A 2-D loop runs over its dimensions in reverse: the innermost (columns of
// a row-major buffer) is now dimension 0, which gpu-map-parallel-loops gives
// to threadIdx.x; each access still reads the element it read before.
// CHECK-LABEL: func.func @two_d(
// CHECK-SAME: %[[M:[^:]*]]: memref<64x128xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: scf.parallel (%[[J:.*]], %[[I:.*]]) = (%[[C0]], %[[C1]]) to (%[[C128]], %[[C64]]) step (%[[C2]], %[[C1]]) {
// CHECK-NEXT: memref.load %[[M]][%[[I]], %[[J]]]
func.func @two_d(%m: memref<64x128xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c1, %c0) to (%c64, %c128) step (%c1, %c2) {
    %v = memref.load %m[%i, %j] : memref<64x128xf32>
    %w = arith.addf %v, %z : f32
    memref.store %w, %m[%i, %j] : memref<64x128xf32>
  }
  return %z : f32
}

// -----

// Three dimensions: the outermost and innermost swap and the middle one
// stays; nested loops are reversed too.
// CHECK-LABEL: func.func @three_d(
// CHECK-SAME: %[[M:[^:]*]]: memref<2x3x4xf32>
// CHECK: scf.parallel (%[[K:.*]], %[[J:.*]], %[[I:.*]]) = ({{.*}}) to (%c4, %c3, %c2)
// CHECK-NEXT: memref.load %[[M]][%[[I]], %[[J]], %[[K]]]
// CHECK: scf.parallel (%[[B:.*]], %[[A:.*]]) = ({{.*}}) to (%c3, %c2)
// CHECK-NEXT: memref.store %{{.*}}, %[[M]][%[[A]], %[[B]], %{{.*}}]
func.func @three_d(%m: memref<2x3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c3, %c4) step (%c1, %c1, %c1) {
    %v = memref.load %m[%i, %j, %k] : memref<2x3x4xf32>
    scf.parallel (%a, %b) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
      memref.store %v, %m[%a, %b, %k] : memref<2x3x4xf32>
    }
  }
  return
}

// -----

// A 1-D loop has nothing to reverse, and a loop with a reduction keeps its
// order (the pipeline's mapping only handles loops without init values).
// CHECK-LABEL: func.func @left_alone(
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%c8) step (%c1) {
// CHECK: scf.parallel (%[[R:.*]], %[[S:.*]]) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) init
// CHECK-NEXT: memref.load %{{.*}}[%[[R]], %[[S]]]
func.func @left_alone(%v: memref<8xf32>, %m: memref<8x4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %v[%i] : memref<8xf32>
  }
  %sum = scf.parallel (%r, %s) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) init (%z) -> f32 {
    %x = memref.load %m[%r, %s] : memref<8x4xf32>
    scf.reduce(%x : f32) {
    ^bb0(%lhs: f32, %rhs: f32):
      %t = arith.addf %lhs, %rhs : f32
      scf.reduce.return %t : f32
    }
  }
  return %sum : f32
}
