// RUN: trace-opt %s -split-input-file --trace-serial-host-compute-to-gpu | FileCheck %s

// A 0-d sum as convert-linalg-to-parallel-loops leaves it (the store of the
// initial value and a serial loop nest on the host) moves into one launch of
// one thread; its constants stay on the host, before the launch.
// CHECK-LABEL: func.func @sum(
// CHECK-SAME: %[[X:[^:]*]]: memref<64xf32>, %[[OUT:[^:]*]]: memref<f32>)
// CHECK: %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: memref.
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK-NEXT: memref.store %[[CST]], %[[OUT]][]
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load %[[X]]
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @sum(%x: memref<64xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  memref.store %cst, %out[] : memref<f32>
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %x[%i] : memref<64xf32>
    %a = memref.load %out[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// -----

// An op with effects (an allocation, a copy) ends a run: the 0-d add after
// the allocation is a launch of its own, and the allocation and the copy
// stay on the host, where they are host work.
// CHECK-LABEL: func.func @runs(
// CHECK: gpu.launch
// CHECK-NEXT: memref.store
// CHECK: gpu.terminator
// CHECK: %[[ALLOC:.*]] = memref.alloc() : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store %{{.*}}, %[[ALLOC]][]
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: memref.copy %[[ALLOC]]
func.func @runs(%a: memref<f32>, %b: memref<f32>) {
  %cst = arith.constant 1.0 : f32
  memref.store %cst, %a[] : memref<f32>
  %alloc = memref.alloc() : memref<f32>
  %x = memref.load %a[] : memref<f32>
  %y = memref.load %b[] : memref<f32>
  %z = arith.addf %x, %y : f32
  memref.store %z, %alloc[] : memref<f32>
  memref.copy %alloc, %b : memref<f32> to memref<f32>
  return
}

// -----

// A run whose value is used after it cannot move into a launch (the launch
// returns nothing): it stays on the host, for the plan reader to refuse.
// CHECK-LABEL: func.func @escapes(
// CHECK-NOT: gpu.launch
// CHECK: %[[V:.*]] = memref.load
// CHECK-NEXT: return %[[V]]
func.func @escapes(%a: memref<f32>) -> f32 {
  %v = memref.load %a[] : memref<f32>
  return %v : f32
}

// -----

// A host loop around launches (an RNN's time loop) is orchestration and
// stays on the host, with the launch inside it as it was; code that only
// launches is no host compute.
// CHECK-LABEL: func.func @time_loop(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: gpu.launch
// CHECK-NOT: gpu.launch
func.func @time_loop(%h: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %t = %c0 to %c8 step %c1 {
    %v = memref.load %h[] : memref<f32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %v, %h[] : memref<f32>
      gpu.terminator
    }
  }
  return
}

// -----

// A declaration has no body to move.
// CHECK-LABEL: func.func private @external(memref<f32>)
func.func private @external(memref<f32>)
