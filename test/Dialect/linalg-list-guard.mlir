// MLIR 22's linalg.reduce, linalg.broadcast and linalg.transpose parsers
// crash (a null attribute dereferenced) on anything but a list of i64s after
// `dimensions =` / `permutation =` (found by trace-parser-fuzzer). TraceIR's
// readers check those lists first and report the position instead.
// RUN: split-file %s %t
// RUN: not trace-opt %t/reduce.mlir 2>&1 | FileCheck %s --check-prefix=REDUCE
// RUN: not trace-opt %t/transpose.mlir 2>&1 | FileCheck %s --check-prefix=TRANSPOSE
// RUN: not trace-opt %t/overflow.mlir 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// RUN: not trace-opt %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=BINARY
// RUN: not trace-opt %t/after-word.mlir 2>&1 | FileCheck %s --check-prefix=AFTER-WORD
// The well-formed forms (custom, and generic where the list is an
// attribute-dictionary entry) still parse.
// RUN: trace-opt %t/good.mlir | trace-opt --mlir-print-op-generic | trace-opt | FileCheck %s --check-prefix=GOOD

//--- reduce.mlir
func.func @f(%x: tensor<2x3xf32>, %o: tensor<2xf32>) -> tensor<2xf32> {
  %r = linalg.reduce ins(%x : tensor<2x3xf32>) outs(%o : tensor<2xf32>) dimensions = ([1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2xf32>
}
// REDUCE: reduce.mlir:2:73: error: expected a list of 64-bit integers such as [0, 1] after '='

//--- transpose.mlir
func.func @f(%x: tensor<2x3xf32>, %o: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%o : tensor<3x2xf32>) permutation = array<i64: 1, 0>
  return %r : tensor<3x2xf32>
}
// TRANSPOSE: transpose.mlir:2:78: error: expected a list of 64-bit integers

//--- overflow.mlir
func.func @f(%x: tensor<2x3xf32>, %o: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%o : tensor<3x2xf32>) permutation = [1, 99999999999999999999]
  return %r : tensor<3x2xf32>
}
// OVERFLOW: overflow.mlir:2:78: error: expected a list of 64-bit integers

//--- binary.mlir
func.func @f(%x: tensor<2x3xf32>, %o: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%o : tensor<3x2xf32>) permutation = [0b1, 0]
  return %r : tensor<3x2xf32>
}
// MLIR's lexer has no 0b literals: this also crashed the parser.
// BINARY: binary.mlir:2:78: error: expected a list of 64-bit integers

//--- after-word.mlir
func.func @f(%x: tensor<2x3xf32>, %o: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.transpose permutation = [1
  return %r : tensor<3x2xf32>
}
// The keyword right after the op name, with no ins/outs, is checked too.
// AFTER-WORD: after-word.mlir:2:25: error: expected a list of 64-bit integers

//--- good.mlir
func.func @f(%x: tensor<2x3xf32>, %o: tensor<3x2xf32>, %s: tensor<2xf32>) -> (tensor<3x2xf32>, tensor<2xf32>) {
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%o : tensor<3x2xf32>) permutation = [0x1, 0]
  %r = linalg.reduce ins(%x : tensor<2x3xf32>) outs(%s : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %t, %r : tensor<3x2xf32>, tensor<2xf32>
}
// GOOD: linalg.transpose {{.*}} permutation = [1, 0]
// GOOD: linalg.reduce {{.*}} dimensions = [1]
