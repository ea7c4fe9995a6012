// RUN: trace-opt %s -split-input-file -convert-trace-to-linalg | FileCheck %s
// The output parses and verifies again (func/linalg/tensor/arith/math are
// registered in trace-opt), and prints the same.
// RUN: trace-opt %s -split-input-file -convert-trace-to-linalg | trace-opt -split-input-file | FileCheck %s
// Every op left as a pyop gets a remark.
// RUN: trace-opt %s -split-input-file -convert-trace-to-linalg -verify-diagnostics -o /dev/null

// The graph becomes a func.func with the same signature and argument names;
// ret -> return, constant -> arith.constant, free erased.
// CHECK-LABEL: func.func @skeleton(
// CHECK-SAME: %[[X:.*]]: tensor<3xf32> {trace.input = "x"}, %[[W:.*]]: tensor<3xf32> {trace.param = "w"}) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK-NOT: free
// CHECK: return %[[C]], %[[X]] : tensor<3xf32>, tensor<3xf32>
trace.graph @skeleton(%x: tensor<3xf32> {trace.input = "x"}, %w: tensor<3xf32> {trace.param = "w"}) -> (tensor<3xf32>, tensor<3xf32>) {
  %c = constant dense<2.0> : tensor<3xf32>
  ret %c, %x : tensor<3xf32>, tensor<3xf32>
}

// -----

// Broadcasting [2,3] + alpha * [3]: the bias reads (d1), alpha scales it.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[S:.*]] = arith.mulf %[[B]], %[[ALPHA]] : f32
// CHECK: %[[R:.*]] = arith.addf %[[A]], %[[S]] : f32
// CHECK: linalg.yield %[[R]] : f32
trace.graph @add_broadcast(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = pyop "add"(%x, %b, 2.0) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  ret %0 : tensor<2x3xf32>
}

// -----

// Type promotion: an i64 [2,1] tensor stretched along d1 (index 0) and
// converted to f32 before the multiply, as the result type says.
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @mul_promote(
// CHECK: linalg.generic {{.*}}#[[COL]]
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[F:.*]] = arith.sitofp %[[B]] : i64 to f32
// CHECK: arith.mulf %[[A]], %[[F]] : f32
trace.graph @mul_promote(%x: tensor<2x3xf32>, %i: tensor<2x1xi64>) -> tensor<2x3xf32> {
  %0 = pyop "mul"(%x, %i) : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>
  ret %0 : tensor<2x3xf32>
}

// -----

// Unary math: gelu in erf form and with approximate='tanh', relu as a
// NaN-propagating max, sigmoid, rsqrt, pow by a number, div by a number.
// CHECK-LABEL: func.func @unary(
// CHECK: math.erf
// CHECK: math.tanh
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: math.rsqrt
// CHECK: math.powf
// CHECK: arith.negf
// CHECK: math.sqrt
// CHECK: math.log
trace.graph @unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "gelu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "gelu"(%0, "tanh") : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "sigmoid"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyop "rsqrt"(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = pyop "pow"(%4, 3.0) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = pyop "neg"(%5) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = pyop "sqrt"(%6) : (tensor<4xf32>) -> tensor<4xf32>
  %8 = pyop "log"(%7) : (tensor<4xf32>) -> tensor<4xf32>
  ret %8 : tensor<4xf32>
}

// -----

// where with a bool mask and a number for `other`.
// CHECK-LABEL: func.func @where(
// CHECK: ^bb0(%[[M:.*]]: i1, %[[A:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.select %[[M]], %[[A]], %[[Z]] : f32
trace.graph @where(%m: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "where"(%m, %x, 0.0) : (tensor<4xi1>, tensor<4xf32>) -> tensor<4xf32>
  ret %0 : tensor<4xf32>
}

// -----

// sum over dim 1 with keepdim: a reduction that drops d1 into a zero-filled
// [2,4], then expand_shape back to [2,1,4].
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @sum_keepdim(
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<2x3x4xf32>) outs(%[[F]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0], [1, 2]] output_shape [2, 1, 4] : tensor<2x4xf32> into tensor<2x1x4xf32>
trace.graph @sum_keepdim(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = pyop "sum"(%x, 1, True) : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  ret %0 : tensor<2x1x4xf32>
}

// -----

// mean over all dims (dim=None): sum into a 0-d tensor, then divide by 24;
// amax over the last dim starts from -inf.
// CHECK-LABEL: func.func @mean_amax(
// CHECK: iterator_types = ["reduction", "reduction", "reduction"]
// CHECK: arith.constant 2.400000e+01 : f32
// CHECK: arith.divf
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
trace.graph @mean_amax(%x: tensor<2x3x4xf32>) -> (tensor<f32>, tensor<2x3xf32>) {
  %0 = pyop "mean"(%x) : (tensor<2x3x4xf32>) -> tensor<f32>
  %1 = pyop "amax"(%x, -1) : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  ret %0, %1 : tensor<f32>, tensor<2x3xf32>
}

// -----

// amin starts from +inf and takes the NaN-propagating minimumf; prod of
// bools starts from 1 and multiplies them widened to i64; any ors x != 0
// (unordered: NaN is true). An integer amin keeps its kernel.
// CHECK-LABEL: func.func @amin_prod_any(
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: arith.minimumf
// CHECK: arith.constant 1 : i64
// CHECK: arith.extui
// CHECK: arith.muli
// CHECK: arith.cmpf une
// CHECK: arith.ori
// CHECK: trace.pyop "amin"
trace.graph @amin_prod_any(%x: tensor<2x3xf32>, %b: tensor<2x3xi1>, %i: tensor<2x3xi64>) -> (tensor<2xf32>, tensor<i64>, tensor<3xi1>, tensor<2xi64>) {
  %0 = pyop "amin"(%x, 1) : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = pyop "prod"(%b) : (tensor<2x3xi1>) -> tensor<i64>
  %2 = pyop "any"(%x, 0) : (tensor<2x3xf32>) -> tensor<3xi1>
  // expected-remark @+1 {{not lowered to linalg: amin of an integer type}}
  %3 = pyop "amin"(%i, 1) : (tensor<2x3xi64>) -> tensor<2xi64>
  ret %0, %1, %2, %3 : tensor<2xf32>, tensor<i64>, tensor<3xi1>, tensor<2xi64>
}

// -----

// softmax over dim 1: max, sum of exp(x - max), then exp(x - max) / sum;
// log_softmax ends in x - max - log(sum).
// CHECK-LABEL: func.func @softmax(
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: math.log
// CHECK: return
trace.graph @softmax(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = pyop "softmax"(%x, 1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = pyop "log_softmax"(%x, -1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  ret %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// layer_norm over the last dim with weight and bias: mean, variance, then
// (x - mean) * rsqrt(var + eps) * w + b; w and b read (d2).
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm(
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #[[LAST]], #[[LAST]], #{{.*}}]
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: math.rsqrt
trace.graph @layer_norm(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = pyop "layer_norm"(%x, [4], %w, %b, 1.0e-05, True) : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  ret %0 : tensor<2x3x4xf32>
}

// -----

// linear with a [out, in] weight: transposed once, the 3-D input collapsed
// to rows, the bias broadcast into the accumulator, the rows expanded back.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:.*]]: tensor<2x5x3xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4xf32>
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>) permutation = [1, 0]
// CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x5x3xf32> into tensor<10x3xf32>
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4xf32>) outs(%{{.*}} : tensor<10x4xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X2]], %[[WT]] : tensor<10x3xf32>, tensor<3x4xf32>) outs(%[[ACC]] : tensor<10x4xf32>)
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 5, 4] : tensor<10x4xf32> into tensor<2x5x4xf32>
trace.graph @linear(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x5x4xf32> {
  %0 = pyop "linear"(%x, %w, %b) : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  ret %0 : tensor<2x5x4xf32>
}

// -----

// mm and addmm (beta * self + alpha * mm) on zero-filled accumulators;
// bmm as batch_matmul; matmul with a broadcast batch dim on the left.
// CHECK-LABEL: func.func @matmuls(
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<5x3xf32>, tensor<3x4xf32>)
// CHECK: linalg.matmul
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x5x3xf32>, tensor<2x3x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x5x3xf32>) outs(%{{.*}} : tensor<2x5x3xf32>)
// CHECK: linalg.batch_matmul
trace.graph @matmuls(%a: tensor<5x3xf32>, %y: tensor<3x4xf32>, %b: tensor<4xf32>, %x: tensor<2x5x3xf32>, %z: tensor<2x3x4xf32>, %a1: tensor<1x5x3xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  %0 = pyop "mm"(%a, %y) : (tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %1 = pyop "addmm"(%b, %a, %y, 0.5, 2.0) : (tensor<4xf32>, tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %2 = pyop "bmm"(%x, %z) : (tensor<2x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %3 = pyop "matmul"(%a1, %z) : (tensor<1x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  ret %0, %1, %2, %3 : tensor<5x4xf32>, tensor<5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
}

// -----

// embedding: a generic over [2,2,3] that casts the i64 index and gathers
// the row with tensor.extract.
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME: %[[W:.*]]: tensor<10x3xf32>, %[[I:.*]]: tensor<2x2xi64>
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<2x2xi64>) outs(%{{.*}} : tensor<2x2x3xf32>)
// CHECK: ^bb0(%[[IDX:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[ROW:.*]] = arith.index_cast %[[IDX]] : i64 to index
// CHECK: %[[COL:.*]] = linalg.index 2 : index
// CHECK: tensor.extract %[[W]][%[[ROW]], %[[COL]]] : tensor<10x3xf32>
trace.graph @embedding(%w: tensor<10x3xf32>, %i: tensor<2x2xi64>) -> tensor<2x2x3xf32> {
  %0 = pyop "embedding"(%w, %i, -1, False, False) : (tensor<10x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  ret %0 : tensor<2x2x3xf32>
}

// -----

// Views: unflatten/unsqueeze as expand_shape, flatten/squeeze as
// collapse_shape, a view that regroups across dims through 1-D, permute as
// linalg.transpose, slice with a step and select (rank-reducing) as
// extract_slice, expand as a broadcasting generic, contiguous and eval
// dropout as the input itself.
// CHECK-LABEL: func.func @views(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x6x4xf32>
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3]] output_shape [2, 2, 3, 4] : tensor<2x6x4xf32> into tensor<2x2x3x4xf32>
// CHECK: tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x6x4xf32> into tensor<48xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x6x4xf32> into tensor<48xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [4, 12] : tensor<48xf32> into tensor<4x12xf32>
// CHECK: linalg.transpose ins(%[[X]] : tensor<2x6x4xf32>) outs(%{{.*}} : tensor<4x6x2xf32>) permutation = [2, 1, 0]
// CHECK: tensor.extract_slice %[[X]][0, 1, 0] [2, 2, 4] [1, 2, 1] : tensor<2x6x4xf32> to tensor<2x2x4xf32>
// CHECK: %[[SEL:.*]] = tensor.extract_slice %[[X]][1, 0, 0] [1, 6, 4] [1, 1, 1] : tensor<2x6x4xf32> to tensor<6x4xf32>
// CHECK: %[[U:.*]] = tensor.expand_shape %[[SEL]] {{\[}}[0, 1], [2]] output_shape [1, 6, 4] : tensor<6x4xf32> into tensor<1x6x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[U]] : tensor<1x6x4xf32>) outs(%{{.*}} : tensor<3x6x4xf32>)
// CHECK: %[[SQ:.*]] = tensor.collapse_shape %[[U]] {{\[}}[0, 1], [2]] : tensor<1x6x4xf32> into tensor<6x4xf32>
// CHECK: return {{.*}}, %[[SQ]] :
trace.graph @views(%x: tensor<2x6x4xf32>) -> (tensor<2x2x3x4xf32>, tensor<48xf32>, tensor<4x12xf32>, tensor<4x6x2xf32>, tensor<2x2x4xf32>, tensor<3x6x4xf32>, tensor<6x4xf32>) {
  %0 = pyop "unflatten"(%x, -2, [-1, 3]) : (tensor<2x6x4xf32>) -> tensor<2x2x3x4xf32>
  %1 = pyop "flatten"(%x) : (tensor<2x6x4xf32>) -> tensor<48xf32>
  %2 = pyop "view"(%x, (4, -1)) : (tensor<2x6x4xf32>) -> tensor<4x12xf32>
  %3 = pyop "permute"(%x, (2, 1, 0)) : (tensor<2x6x4xf32>) -> tensor<4x6x2xf32>
  %4 = pyop "slice"(%x, 1, 1, 5, 2) : (tensor<2x6x4xf32>) -> tensor<2x2x4xf32>
  %5 = pyop "select"(%x, 0, -1) : (tensor<2x6x4xf32>) -> tensor<6x4xf32>
  %6 = pyop "unsqueeze"(%5, 0) : (tensor<6x4xf32>) -> tensor<1x6x4xf32>
  %7 = pyop "expand"(%6, (3, -1, -1)) : (tensor<1x6x4xf32>) -> tensor<3x6x4xf32>
  %8 = pyop "squeeze"(%6, 0) : (tensor<1x6x4xf32>) -> tensor<6x4xf32>
  %9 = pyop "contiguous"(%8) : (tensor<6x4xf32>) -> tensor<6x4xf32>
  %10 = pyop "dropout"(%9, 0.1, False) : (tensor<6x4xf32>) -> tensor<6x4xf32>
  ret %0, %1, %2, %3, %4, %7, %10 : tensor<2x2x3x4xf32>, tensor<48xf32>, tensor<4x12xf32>, tensor<4x6x2xf32>, tensor<2x2x4xf32>, tensor<3x6x4xf32>, tensor<6x4xf32>
}

// -----

// transpose and t swap two dims.
// CHECK-LABEL: func.func @transposes(
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x3x2xf32>) permutation = [2, 1, 0]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
trace.graph @transposes(%x: tensor<2x3x4xf32>, %y: tensor<2x3xf32>) -> (tensor<4x3x2xf32>, tensor<3x2xf32>) {
  %0 = pyop "transpose"(%x, 0, -1) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %1 = pyop "t"(%y) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  ret %0, %1 : tensor<4x3x2xf32>, tensor<3x2xf32>
}

// -----

// cat: each operand inserted at its running offset along dim into one
// tensor.empty; an i64 operand is converted to f32 first.
// CHECK-LABEL: func.func @cat(
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x3xf32>, %[[B:[^:]*]]: tensor<2x1xi64>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[S0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x4xf32>
// CHECK: %[[BF:.*]] = linalg.generic
// CHECK: arith.sitofp
// CHECK: tensor.insert_slice %[[BF]] into %[[S0]][0, 3] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x4xf32>
trace.graph @cat(%a: tensor<2x3xf32>, %b: tensor<2x1xi64>) -> tensor<2x4xf32> {
  %0 = pyop "cat"(%a, %b, -1) : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  ret %0 : tensor<2x4xf32>
}

// -----

// Comparisons compare in torch.result_type of the operands and give i1:
// f32 with broadcasting, i64 with an int, i64 lifted to f32 by a float;
// where selects on the i1 result.
// CHECK-LABEL: func.func @compare(
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: arith.cmpi ne, %{{.*}}, %[[TWO]] : i64
// CHECK: %[[F:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.cmpf oge, %[[F]], %{{.*}} : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
trace.graph @compare(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<3xi64>) -> (tensor<3xi1>, tensor<3xi1>, tensor<2x3xf32>) {
  %0 = pyop "lt"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = pyop "ne"(%i, 2) : (tensor<3xi64>) -> tensor<3xi1>
  %2 = pyop "ge"(%i, 0.5) : (tensor<3xi64>) -> tensor<3xi1>
  %3 = pyop "where"(%0, %x, 0.0) : (tensor<2x3xi1>, tensor<2x3xf32>) -> tensor<2x3xf32>
  ret %1, %2, %3 : tensor<3xi1>, tensor<3xi1>, tensor<2x3xf32>
}

// -----

// hardtanh clamps with maximumf then minimumf (NaN propagates); on an
// integer result with the bounds as integers.
// CHECK-LABEL: func.func @hardtanh(
// CHECK: %[[LO:.*]] = arith.constant -5.000000e-01 : f32
// CHECK: %[[M:.*]] = arith.maximumf %{{.*}}, %[[LO]] : f32
// CHECK: %[[HI:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: arith.minimumf %[[M]], %[[HI]] : f32
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK: arith.minsi %{{.*}}, %{{.*}} : i64
trace.graph @hardtanh(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = pyop "hardtanh"(%x, -0.5, 2.0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "hardtanh"(%i, -1, 3) : (tensor<4xi64>) -> tensor<4xi64>
  ret %0, %1 : tensor<4xf32>, tensor<4xi64>
}

// -----

// The binary ops: maximum and minimum propagate NaN (maximumf/minimumf) and
// compare bools unsigned; clamp with number bounds is max then min;
// remainder is fmod moved into the divisor's sign; the logical ops read
// their operands as bools (!= 0, so NaN is true).
// CHECK-LABEL: func.func @binary_ops(
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.minui %{{.*}}, %{{.*}} : i1
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[M:.*]] = arith.remf %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[M]] : f32
// CHECK: arith.cmpf une
// CHECK: arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: math.atan2 %{{.*}}, %{{.*}} : f32
trace.graph @binary_ops(%x: tensor<4xf32>, %y: tensor<4xf32>, %b: tensor<4xi1>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xi64>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %0 = pyop "maximum"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "minimum"(%b, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = pyop "clamp"(%i, -2, 5) : (tensor<4xi64>) -> tensor<4xi64>
  %3 = pyop "remainder"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = pyop "logical_and"(%x, %i) : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xi1>
  %5 = pyop "atan2"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  ret %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xi1>, tensor<4xi64>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// -----

// An integer fmod stays a kernel's: PyTorch raises on a zero divisor, the
// lowered code would not.
// CHECK-LABEL: func.func @integer_fmod(
// CHECK: trace.pyop "fmod"
trace.graph @integer_fmod(%i: tensor<4xi64>) -> tensor<4xi64> {
  // expected-remark @+1 {{not lowered to linalg: an integer 'fmod' (division by zero)}}
  %0 = pyop "fmod"(%i, %i) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  ret %0 : tensor<4xi64>
}

// -----

// The float functions are one math op each; an integer input is converted
// to the f32 result first (torch.sin of an int64 tensor is f32), and
// reciprocal divides 1 by it.
// CHECK-LABEL: func.func @float_functions(
// CHECK: math.sin %{{.*}} : f32
// CHECK: %[[F:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: math.log1p %[[F]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: arith.divf %[[ONE]], %{{.*}} : f32
trace.graph @float_functions(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = pyop "sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "log1p"(%i) : (tensor<4xi64>) -> tensor<4xf32>
  %2 = pyop "reciprocal"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  ret %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// sign is (x > 0) - (x < 0) as selects (NaN and -0.0 give +0.0); round
// is half to even; an integer rounds to itself; isnan compares unordered
// in the input's type; bitwise_not of a bool is xor with true.
// CHECK-LABEL: func.func @sign_round_predicates(
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[X:.*]], %{{.*}} : f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[X]], %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.select %[[NEG]], %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[POS]], %{{.*}}, %[[S]] : f32
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: ^bb0(%[[I:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT: linalg.yield %[[I]] : i64
// CHECK: ^bb0(%[[Y:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[Y]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[NAN]] : i1
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: arith.xori %{{.*}}, %[[TRUE]] : i1
trace.graph @sign_round_predicates(%x: tensor<4xf32>, %i: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>) {
  %0 = pyop "sign"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "round"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "floor"(%i) : (tensor<4xi64>) -> tensor<4xi64>
  %3 = pyop "isnan"(%x) : (tensor<4xf32>) -> tensor<4xi1>
  %4 = pyop "bitwise_not"(%b) : (tensor<4xi1>) -> tensor<4xi1>
  ret %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>
}

// -----

// f16 against bf16 compares in f32, torch.result_type's promotion (in f16,
// the first operand's type, bf16's 1e-30 would round to 0 and equal 0).
// CHECK-LABEL: func.func @compare_halves(
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
trace.graph @compare_halves(%a: tensor<3xf16>, %b: tensor<3xbf16>) -> tensor<3xi1> {
  %0 = pyop "eq"(%a, %b) : (tensor<3xf16>, tensor<3xbf16>) -> tensor<3xi1>
  ret %0 : tensor<3xi1>
}

// -----

// conv2d: zero tensor.pad, the bias broadcast over the channel dim as the
// accumulator, then conv_2d_nchw_fchw with the strides; groups split the
// channels for conv_2d_ngchw_gfchw.
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x2x5x5xf32>, %[[W:[^:]*]]: tensor<4x2x3x3xf32>, %[[B:[^:]*]]: tensor<4xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %{{.*}} : f32
// CHECK: } : tensor<1x2x5x5xf32> to tensor<1x2x7x7xf32>
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[CH]], {{.*}}]{{.*}} ins(%[[B]] : tensor<4xf32>)
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%[[P]], %[[W]] : tensor<1x2x7x7xf32>, tensor<4x2x3x3xf32>) outs(%[[ACC]] : tensor<1x4x3x3xf32>)
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x2x1x5x5xf32>, tensor<2x2x1x3x3xf32>) outs(%{{.*}} : tensor<1x2x2x1x1xf32>)
trace.graph @conv(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>, %wg: tensor<4x1x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) {
  %0 = pyop "conv2d"(%x, %w, %b, 2, 1) : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %1 = pyop "conv2d"(%x, %wg, None, 1, 0, 2, 2) : (tensor<1x2x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x1x1xf32>
  ret %0, %1 : tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>
}

// -----

// max_pool2d pads with -inf and pools from -inf; adaptive_avg_pool2d with
// an output size that divides the input sums equal windows and divides.
// CHECK-LABEL: func.func @pools(
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]] : f32
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: linalg.fill
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%{{.*}}, %[[WIN]] : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK: linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<[3, 2]> : vector<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x2x6x6xf32>, tensor<3x2xf32>) outs(%{{.*}} : tensor<1x2x2x3xf32>)
// CHECK: arith.constant 6.000000e+00 : f32
// CHECK: arith.divf
trace.graph @pools(%x: tensor<1x2x6x6xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x2x3xf32>) {
  %0 = pyop "max_pool2d"(%x, 3, 2, 1) : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %1 = pyop "adaptive_avg_pool2d"(%x, (2, 3)) : (tensor<1x2x6x6xf32>) -> tensor<1x2x2x3xf32>
  ret %0, %1 : tensor<1x2x3x3xf32>, tensor<1x2x2x3xf32>
}

// -----

// batch_norm in eval mode: one generic reading the per-channel vectors
// along dim 1.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @batch_norm(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[ID]]]
// CHECK: arith.constant 1.000000e-03 : f32
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.addf
trace.graph @batch_norm(%x: tensor<2x3x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = pyop "batch_norm"(%x, %w, %b, %m, %v, False, 0.1, 0.001, False) : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  ret %0 : tensor<2x3x4xf32>
}

// -----

// scaled_dot_product_attention with a bool mask [L, S] broadcast over the
// batch and heads: the batch dims collapse; scores are a contraction over E
// that reads K [b, j, e] in place (no transpose); scale, then a masked-out
// entry becomes -inf; the softmax gives 0 where the row max is -inf (a
// fully masked row); P @ V is a batch_matmul, expanded back.
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[MASK:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @sdpa_bool_mask(
// CHECK-SAME: %[[QA:.*]]: tensor<2x3x4x8xf32>, %[[KA:.*]]: tensor<2x3x5x8xf32>, %[[VA:.*]]: tensor<2x3x5x6xf32>, %[[MA:.*]]: tensor<4x5xi1>
// CHECK: %[[Q3:.*]] = tensor.collapse_shape %[[QA]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x8xf32> into tensor<6x4x8xf32>
// CHECK: %[[K3:.*]] = tensor.collapse_shape %[[KA]]
// CHECK: %[[V3:.*]] = tensor.collapse_shape %[[VA]]
// CHECK: %[[SC:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[Q3]], %[[K3]] : tensor<6x4x8xf32>, tensor<6x5x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[SC4:.*]] = tensor.expand_shape %[[SC]] {{.*}} into tensor<2x3x4x5xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[MASK]], #{{.*}}], {{.*}} ins(%[[SC4]], %[[MA]] : tensor<2x3x4x5xf32>, tensor<4x5xi1>)
// CHECK: ^bb0(%[[X:[^:]*]]: f32, %[[M:[^:]*]]: i1, %{{.*}}: f32):
// CHECK: %[[SCALED:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[M]], %[[SCALED]], %[[NINF]] : f32
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: ^bb0(%{{.*}}: f32, %[[MAX:[^:]*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[P:.*]] = arith.divf
// CHECK: %[[DEAD:.*]] = arith.cmpf oeq, %[[MAX]], %{{.*}} : f32
// CHECK: arith.select %[[DEAD]], %{{.*}}, %[[P]] : f32
// CHECK: %[[P3:.*]] = tensor.collapse_shape %{{.*}} into tensor<6x4x5xf32>
// CHECK: %[[O:.*]] = linalg.batch_matmul ins(%[[P3]], %[[V3]] : tensor<6x4x5xf32>, tensor<6x5x6xf32>)
// CHECK: tensor.expand_shape %[[O]] {{.*}} into tensor<2x3x4x6xf32>
trace.graph @sdpa_bool_mask(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x5x8xf32>, %v: tensor<2x3x5x6xf32>, %m: tensor<4x5xi1>) -> tensor<2x3x4x6xf32> {
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %v, %m) : (tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32>, tensor<4x5xi1>) -> tensor<2x3x4x6xf32>
  ret %0 : tensor<2x3x4x6xf32>
}

// -----

// Causal with an explicit scale, 3-D: key j after query i (linalg.index of
// the last two dims) is -inf; a float mask is added instead; the default
// scale is 1/sqrt(E) = 0.5 for E = 4.
// CHECK-LABEL: func.func @sdpa_causal_float(
// CHECK: ^bb0(%[[X:[^:]*]]: f32, %{{.*}}: f32):
// CHECK: %[[SCALE:.*]] = arith.constant 3.000000e-01 : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %[[X]], %[[SCALE]] : f32
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: %[[LATER:.*]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK: arith.select %[[LATER]], %{{.*}}, %[[SCALED]] : f32
// CHECK: linalg.batch_matmul
// CHECK: ^bb0(%[[Y:[^:]*]]: f32, %[[FM:[^:]*]]: f32, %{{.*}}: f32):
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[S2:.*]] = arith.mulf %[[Y]], %[[HALF]] : f32
// CHECK: arith.addf %[[S2]], %[[FM]] : f32
// CHECK: linalg.batch_matmul
trace.graph @sdpa_causal_float(%q: tensor<3x5x4xf32>, %m: tensor<5x5xf32>) -> (tensor<3x5x4xf32>, tensor<3x5x4xf32>) {
  %0 = pyop "scaled_dot_product_attention"(%q, %q, %q, None, 0.0, True, 0.3) : (tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>) -> tensor<3x5x4xf32>
  %1 = pyop "scaled_dot_product_attention"(%q, %q, %q, %m) : (tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<5x5xf32>) -> tensor<3x5x4xf32>
  ret %0, %1 : tensor<3x5x4xf32>, tensor<3x5x4xf32>
}

// -----

// lstm, 1 layer, forward then reverse, with biases: per direction, the
// input projection of the whole sequence is one matmul onto b_ih + b_hh;
// an scf.for over the 5 steps carries h, c (fresh copies of h0 and c0)
// and the output as tensors; each step multiplies h by w_hh^T, applies the
// cell to that step's gates plus this product in
// one generic written over (h, c) and the output's slice at [t, 0, d * H]
// (so that both the yields and the insert_slice bufferize in place). The
// reverse direction counts t down and continues the same output tensor.
// CHECK-DAG: #[[G0:.*]] = affine_map<(d0, d1) -> (d0, 0, d1)>
// CHECK-DAG: #[[G3:.*]] = affine_map<(d0, d1) -> (d0, 3, d1)>
// CHECK-LABEL: func.func @lstm_bidirectional(
// CHECK-SAME: %[[X:[^:]*]]: tensor<5x2x3xf32>, %[[H0:[^:]*]]: tensor<2x2x4xf32>, %[[C0:[^:]*]]: tensor<2x2x4xf32>, %[[WIH:[^:]*]]: tensor<16x3xf32>, %[[WHH:[^:]*]]: tensor<16x4xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<5x2x3xf32> into tensor<10x3xf32>
// CHECK: %[[OUT0:.*]] = tensor.empty() : tensor<5x2x8xf32>
// CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<10x16xf32>)
// CHECK: %[[WIHT:.*]] = linalg.transpose ins(%[[WIH]] : tensor<16x3xf32>)
// CHECK: %[[PROJ:.*]] = linalg.matmul ins(%[[ROWS]], %[[WIHT]] : tensor<10x3xf32>, tensor<3x16xf32>) outs(%[[BIAS]] : tensor<10x16xf32>)
// CHECK: %[[GATES:.*]] = tensor.expand_shape %[[PROJ]] {{.*}} into tensor<5x2x16xf32>
// CHECK: %[[WHHT:.*]] = linalg.transpose ins(%[[WHH]] : tensor<16x4xf32>)
// CHECK: %[[HROW:.*]] = tensor.extract_slice %[[H0]][0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[HI:.*]] = linalg.copy ins(%[[HROW]] : tensor<2x4xf32>)
// CHECK: %[[CROW:.*]] = tensor.extract_slice %[[C0]][0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[CI:.*]] = linalg.copy ins(%[[CROW]] : tensor<2x4xf32>)
// CHECK: %[[FWD:.*]]:3 = scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[H:.*]] = %[[HI]], %[[C:.*]] = %[[CI]], %[[OUT:.*]] = %[[OUT0]]) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x8xf32>) {
// CHECK: %[[GT:.*]] = tensor.extract_slice %[[GATES]][%[[T]], 0, 0] [1, 2, 16] [1, 1, 1] : tensor<5x2x16xf32> to tensor<2x16xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[REC:.*]] = linalg.matmul ins(%[[H]], %[[WHHT]] : tensor<2x4xf32>, tensor<4x16xf32>) outs(%[[ZERO]] : tensor<2x16xf32>)
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %[[OUT]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1] : tensor<5x2x8xf32> to tensor<2x4xf32>
// CHECK: %[[GX:.*]] = tensor.expand_shape %[[GT]] {{\[}}[0], [1, 2]] output_shape [2, 4, 4]
// CHECK: %[[GH:.*]] = tensor.expand_shape %[[REC]] {{\[}}[0], [1, 2]] output_shape [2, 4, 4]
// CHECK: %[[CELL:.*]]:3 = linalg.generic {indexing_maps = [#[[G0]], #{{.*}}, #{{.*}}, #[[G3]], #[[G0]], #{{.*}}, #{{.*}}, #[[G3]], #{{.*}}, #{{.*}}, #{{.*}}], {{.*}} ins(%[[GX]], %[[GX]], %[[GX]], %[[GX]], %[[GH]], %[[GH]], %[[GH]], %[[GH]] : {{.*}}) outs(%[[H]], %[[C]], %[[SLOT]] : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: math.tanh
// CHECK: %[[NEWOUT:.*]] = tensor.insert_slice %[[CELL]]#2 into %[[OUT]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<5x2x8xf32>
// CHECK: scf.yield %[[CELL]]#0, %[[CELL]]#1, %[[NEWOUT]]
// CHECK: scf.for %[[T2:.*]] = {{.*}} iter_args({{.*}}, {{.*}}, %[[OUT2:.*]] = %[[FWD]]#2)
// CHECK: %[[REV:.*]] = arith.subi %{{.*}}, %[[T2]] : index
// CHECK: tensor.extract_slice %[[OUT2]][%[[REV]], 0, 4] [1, 2, 4]
// CHECK: %[[HN:.*]] = tensor.insert_slice %[[FWD]]#0 into %{{.*}}[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<2x4xf32> into tensor<2x2x4xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[HN]][1, 0, 0]
// CHECK: return
trace.graph @lstm_bidirectional(%x: tensor<5x2x3xf32>, %h0: tensor<2x2x4xf32>, %c0: tensor<2x2x4xf32>, %w0: tensor<16x3xf32>, %u0: tensor<16x4xf32>, %b0: tensor<16xf32>, %d0: tensor<16xf32>, %w1: tensor<16x3xf32>, %u1: tensor<16x4xf32>, %b1: tensor<16xf32>, %d1: tensor<16xf32>) -> (tensor<5x2x8xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>) {
  %0:3 = pyop "lstm"(%x, %h0, %c0, %w0, %u0, %b0, %d0, %w1, %u1, %b1, %d1, True, 1, 0.0, False, True, False) : (tensor<5x2x3xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<5x2x8xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)
  ret %0#0, %0#1, %0#2 : tensor<5x2x8xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>
}

// -----

// gru, 2 layers, batch_first, no biases: the input is transposed to
// time-major first and the output back; the hidden projection starts from
// zero each step (r scales only it inside n); the cell reads h_{t-1} as its
// out; layer 1 reads layer 0's output.
// CHECK-LABEL: func.func @gru_batch_first(
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x5x3xf32>) outs(%{{.*}} : tensor<5x2x3xf32>) permutation = [1, 0, 2]
// CHECK: %[[L0:.*]]:2 = scf.for
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x12xf32>) outs(%[[Z]] : tensor<2x12xf32>)
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: arith.subf
// CHECK: scf.yield
// CHECK: tensor.collapse_shape %[[L0]]#1 {{\[}}[0, 1], [2]] : tensor<5x2x4xf32> into tensor<10x4xf32>
// CHECK: scf.for
// CHECK: linalg.transpose ins(%{{.*}} : tensor<5x2x4xf32>) outs(%{{.*}} : tensor<2x5x4xf32>) permutation = [1, 0, 2]
trace.graph @gru_batch_first(%x: tensor<2x5x3xf32>, %h0: tensor<2x2x4xf32>, %w0: tensor<12x3xf32>, %u0: tensor<12x4xf32>, %w1: tensor<12x4xf32>, %u1: tensor<12x4xf32>) -> (tensor<2x5x4xf32>, tensor<2x2x4xf32>) {
  %0:2 = pyop "gru"(%x, %h0, %w0, %u0, %w1, %u1, False, 2, 0.0, False, False, True) : (tensor<2x5x3xf32>, tensor<2x2x4xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<12x4xf32>, tensor<12x4xf32>) -> (tensor<2x5x4xf32>, tensor<2x2x4xf32>)
  ret %0#0, %0#1 : tensor<2x5x4xf32>, tensor<2x2x4xf32>
}

// -----

// What cannot be lowered stays a trace.pyop inside the func.func, with a
// remark saying why; the rest of the graph is still lowered around it.
// CHECK-LABEL: func.func @left(
// CHECK: %[[M:.*]] = trace.pyop "mystery"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: trace.pyop "dropout"(%[[M]], 0.5, True)
// CHECK: trace.pyop "relu"(%{{.*}}) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK: linalg.generic
// CHECK: return
trace.graph @left(%x: tensor<4xf32>, %d: tensor<?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  // expected-remark @+1 {{not lowered to linalg: no lowering for 'mystery'}}
  %0 = pyop "mystery"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{not lowered to linalg: training dropout draws random numbers}}
  %1 = pyop "dropout"(%0, 0.5, True) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{not lowered to linalg: an operand has a dynamic shape (tensor<?xf32>)}}
  %2 = pyop "relu"(%d) : (tensor<?xf32>) -> tensor<?xf32>
  %3 = pyop "neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  ret %3, %2 : tensor<4xf32>, tensor<?xf32>
}

// -----

// Attention dropout and dropout between training lstm layers draw random
// numbers; a single training layer has nothing to drop and is lowered.
// CHECK-LABEL: func.func @left_random(
// CHECK: trace.pyop "scaled_dot_product_attention"
// CHECK: trace.pyop "lstm"
// CHECK-NOT: trace.pyop
// CHECK: scf.for
// CHECK: return
trace.graph @left_random(%q: tensor<2x3x4xf32>, %x: tensor<3x1x2xf32>, %h: tensor<2x1x2xf32>, %w0: tensor<8x2xf32>, %u0: tensor<8x2xf32>, %w1: tensor<8x2xf32>, %u1: tensor<8x2xf32>, %h1: tensor<1x1x2xf32>) -> (tensor<2x3x4xf32>, tensor<3x1x2xf32>, tensor<3x1x2xf32>) {
  // expected-remark @+1 {{not lowered to linalg: dropout_p > 0 draws random numbers}}
  %0 = pyop "scaled_dot_product_attention"(%q, %q, %q, None, 0.1) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // expected-remark @+1 {{not lowered to linalg: training dropout between layers draws random numbers}}
  %1:3 = pyop "lstm"(%x, %h, %h, %w0, %u0, %w1, %u1, False, 2, 0.5, True, False, False) : (tensor<3x1x2xf32>, tensor<2x1x2xf32>, tensor<2x1x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<3x1x2xf32>, tensor<2x1x2xf32>, tensor<2x1x2xf32>)
  %2:3 = pyop "lstm"(%x, %h1, %h1, %w0, %u0, False, 1, 0.5, True, False, False) : (tensor<3x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<3x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  ret %0, %1#0, %2#0 : tensor<2x3x4xf32>, tensor<3x1x2xf32>, tensor<3x1x2xf32>
}

// -----

// _to_copy converts each element as .to(dtype) does: fptosi truncates, a
// float is True where it is not 0, bool widens unsigned.
// CHECK-LABEL: func.func @to_copy(
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK: arith.uitofp %{{.*}} : i1 to f16
trace.graph @to_copy(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xi64>, tensor<4xi1>, tensor<4xf16>) {
  %0 = pyop "_to_copy"(%x, "torch.int64") : (tensor<4xf32>) -> tensor<4xi64>
  %1 = pyop "_to_copy"(%x, "torch.bool") : (tensor<4xf32>) -> tensor<4xi1>
  %2 = pyop "_to_copy"(%b, "torch.float16") : (tensor<4xi1>) -> tensor<4xf16>
  ret %0, %1, %2 : tensor<4xi64>, tensor<4xi1>, tensor<4xf16>
}

// -----

// full, full_like and scalar_tensor fill a tensor.empty; an int64 fill
// value stays exact, a bool one is i1.
// CHECK-LABEL: func.func @fill(
// CHECK: %[[F:.*]] = arith.constant -1.500000e+00 : f32
// CHECK: linalg.fill ins(%[[F]] : f32)
// CHECK: %[[I:.*]] = arith.constant 9007199254740993 : i64
// CHECK: linalg.fill ins(%[[I]] : i64)
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK: %[[B:.*]] = arith.constant true
// CHECK: linalg.fill ins(%[[B]] : i1)
trace.graph @fill(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>, tensor<2x3xi1>) {
  %0 = pyop "full_like"(%x, -1.5) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = pyop "full"([4], 9007199254740993) : () -> tensor<4xi64>
  %2 = pyop "scalar_tensor"(3) : () -> tensor<f32>
  %3 = pyop "full_like"(%x, True, "torch.bool") : (tensor<2x3xf32>) -> tensor<2x3xi1>
  ret %0, %1, %2, %3 : tensor<2x3xf32>, tensor<4xi64>, tensor<f32>, tensor<2x3xi1>
}

// -----

// ones_like fills a 1 of the result's dtype.
// CHECK-LABEL: func.func @ones_like(
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: linalg.fill ins(%[[ONE]] : i64)
// CHECK: %[[H:.*]] = arith.constant 1.000000e+00 : f16
// CHECK: linalg.fill ins(%[[H]] : f16)
trace.graph @ones_like(%x: tensor<2x3xf32>) -> (tensor<2x3xi64>, tensor<2x3xf16>) {
  %0 = pyop "ones_like"(%x, "torch.int64") : (tensor<2x3xf32>) -> tensor<2x3xi64>
  %1 = pyop "ones_like"(%x, "torch.float16") : (tensor<2x3xf32>) -> tensor<2x3xf16>
  ret %0, %1 : tensor<2x3xi64>, tensor<2x3xf16>
}

// -----

// The special functions compute in f64, as the runtime's kernels, and round
// to the result's type: lgamma is fdlibm's (its log near 0.9 and Stirling's
// series from 8 on), digamma the kernel's recurrence as a 10-step scf.for
// before its asymptotic series, erfinv Giles' start and 8 Halley steps,
// polygamma(3, x) 3! times the Hurwitz zeta, its direct sum an scf.while.
// CHECK-LABEL: func.func @special_functions(
// CHECK: linalg.generic
// CHECK: %[[X:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: math.absf %[[X]] : f64
// CHECK: math.log
// CHECK: math.sin
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: linalg.generic
// CHECK: math.tan
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: math.log
// CHECK: math.copysign
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: linalg.generic
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK: scf.for
// CHECK: math.erfc
// CHECK: math.erf
// CHECK: math.exp
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: linalg.generic
// CHECK: scf.while
// CHECK: math.powf
// CHECK: arith.constant 6.000000e+00 : f64
// CHECK: linalg.yield %{{.*}} : f64
trace.graph @special_functions(%x: tensor<4xf32>, %i: tensor<4xi64>, %d: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  %0 = pyop "lgamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "digamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "erfinv"(%i) : (tensor<4xi64>) -> tensor<4xf32>
  %3 = pyop "polygamma"(3, %d) : (tensor<4xf64>) -> tensor<4xf64>
  ret %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}

// -----

// polygamma(1, x) is trigamma (no zeta); a negative n stays the kernel's,
// which reports it. hypot squares in f64 for an f32 and scales an f64 by its
// larger operand; an infinite operand wins over NaN. signbit reads the bits
// of a float (-0.0 and -NaN count) and compares an integer with 0.
// CHECK-LABEL: func.func @polygamma_hypot_signbit(
// CHECK: math.sin
// CHECK: scf.for
// CHECK-NOT: scf.while
// CHECK: trace.pyop "polygamma"(-1, %{{.*}})
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: math.sqrt
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.maximumf %{{.*}} : f64
// CHECK: arith.divf
// CHECK: math.sqrt
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.cmpi slt, %[[BITS]], %{{.*}} : i32
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
trace.graph @polygamma_hypot_signbit(%x: tensor<4xf32>, %d: tensor<4xf64>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xi1>, tensor<4xi1>) {
  %0 = pyop "polygamma"(1, %x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{not lowered to linalg: polygamma(n, x) does not support negative n}}
  %1 = pyop "polygamma"(-1, %x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "hypot"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "hypot"(%d, %d) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %4 = pyop "signbit"(%x) : (tensor<4xf32>) -> tensor<4xi1>
  %5 = pyop "signbit"(%i) : (tensor<4xi64>) -> tensor<4xi1>
  ret %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xi1>, tensor<4xi1>
}

// -----

// argmax along a dim: one generic with a value and an index accumulator,
// starting from (-inf, 0); a NaN beats a number, ties go to the smaller
// position (linalg.index). dim=None reduces every dim, the position
// row-major (i * 3 + j). An integer argmin starts from the dtype's largest.
// max.dim keepdim gives (values, indices) expanded to [2, 1].
// CHECK-LABEL: func.func @arg_reductions(
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.index 1 : index
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: arith.constant 3 : i64
// CHECK: arith.constant 9223372036854775807 : i64
// CHECK: arith.cmpi slt
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 1] : tensor<2xi64> into tensor<2x1xi64>
trace.graph @arg_reductions(%x: tensor<2x3xf32>, %i: tensor<2x3xi64>) -> (tensor<2xi64>, tensor<i64>, tensor<3xi64>, tensor<2x1xf32>, tensor<2x1xi64>) {
  %0 = pyop "argmax"(%x, 1) : (tensor<2x3xf32>) -> tensor<2xi64>
  %1 = pyop "argmax"(%x) : (tensor<2x3xf32>) -> tensor<i64>
  %2 = pyop "argmin"(%i, 0) : (tensor<2x3xi64>) -> tensor<3xi64>
  %3:2 = pyop "max"(%x, 1, True) : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>)
  ret %0, %1, %2, %3#0, %3#1 : tensor<2xi64>, tensor<i64>, tensor<3xi64>, tensor<2x1xf32>, tensor<2x1xi64>
}

// -----

// var in f64: the sum, the mean (/ 4), the squared deviations, divided by
// n - correction (4 - 1); with correction 9 over all 8 elements the divisor
// is 0 (inf or NaN, as PyTorch), keepdim expanding the 0-d result.
// CHECK-LABEL: func.func @var(
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.constant 4.000000e+00 : f64
// CHECK: arith.mulf %{{.*}} : f64
// CHECK: arith.constant 3.000000e+00 : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.constant 0.000000e+00 : f64
// CHECK: tensor.expand_shape
trace.graph @var(%x: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<1x1xf32>) {
  %0 = pyop "var"(%x, 1) : (tensor<2x4xf32>) -> tensor<2xf32>
  %1 = pyop "var"(%x, None, 9, True) : (tensor<2x4xf32>) -> tensor<1x1xf32>
  ret %0, %1 : tensor<2xf32>, tensor<1x1xf32>
}

// -----

// cumsum along dim 1: a generic over the result's dims and j (a reduction),
// adding x[j] in f64 while j <= i (linalg.index), rounded to f32 after;
// cumprod of an int64 multiplies in i64 from 1; a bool cumsum widens to
// int64. A scan dim longer than 4096 stays the kernel's.
// CHECK-LABEL: func.func @scans(
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = linalg.index 2 : index
// CHECK: arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.constant 1 : i64
// CHECK: arith.muli
// CHECK: arith.extui %{{.*}} : i1 to i64
// CHECK: trace.pyop "cumsum"
trace.graph @scans(%x: tensor<2x5xf32>, %i: tensor<4xi64>, %b: tensor<3x2xi1>, %l: tensor<5000xf32>) -> (tensor<2x5xf32>, tensor<4xi64>, tensor<3x2xi64>, tensor<5000xf32>) {
  %0 = pyop "cumsum"(%x, 1) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = pyop "cumprod"(%i, 0) : (tensor<4xi64>) -> tensor<4xi64>
  %2 = pyop "cumsum"(%b, 0) : (tensor<3x2xi1>) -> tensor<3x2xi64>
  // expected-remark @+1 {{not lowered to linalg: a scan dim longer than 4096 (the lowering's work is quadratic in it)}}
  %3 = pyop "cumsum"(%l, 0) : (tensor<5000xf32>) -> tensor<5000xf32>
  ret %0, %1, %2, %3 : tensor<2x5xf32>, tensor<4xi64>, tensor<3x2xi64>, tensor<5000xf32>
}
