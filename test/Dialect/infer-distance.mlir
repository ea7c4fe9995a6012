// RUN: trace-opt %s -split-input-file -verify-diagnostics

// _cdist_forward, _pdist_forward, _embedding_bag and grid_sampler_2d: the
// registry's inference, which the verifier runs. These calls are valid
// PyTorch and verify; each follows a PyTorch rule.
trace.graph @valid(%a: tensor<2x4x3xf32>, %b: tensor<2x5x3xf32>, %c: tensor<3x1x4x3xf64>,
                   %d: tensor<2x5x3xf64>, %y: tensor<7x4xf32>, %yd: tensor<?x4xf64>,
                   %w: tensor<10x4xf32>, %wh: tensor<10x4xf16>, %wd: tensor<10x4xf64>,
                   %i: tensor<9xi64>, %i32: tensor<9xi32>, %o: tensor<4xi64>,
                   %o32: tensor<4xi32>, %ps: tensor<9xf32>,
                   %x: tensor<2x3x5x6xf32>, %g: tensor<2x4x7x2xf32>,
                   %xb: tensor<?x3x5x6xbf16>, %gb: tensor<2x4x7x2xbf16>) -> () {
  // [*, P, M] x [*, R, M] -> [*, P, R].
  %0 = pyop "_cdist_forward"(%a, %b, 2.0, None) : (tensor<2x4x3xf32>, tensor<2x5x3xf32>) -> tensor<2x4x5xf32>
  // The batch dims broadcast; any non-negative p and compute_mode 1 or 2.
  %1 = pyop "_cdist_forward"(%c, %d, 0.5, 2) : (tensor<3x1x4x3xf64>, tensor<2x5x3xf64>) -> tensor<3x2x4x5xf64>
  // 7 rows have 7 * 6 / 2 = 21 pairs; p defaults to 2.
  %2 = pyop "_pdist_forward"(%y) : (tensor<7x4xf32>) -> tensor<21xf32>
  %3 = pyop "_pdist_forward"(%yd, 1.0) : (tensor<?x4xf64>) -> tensor<?xf64>
  // sum of f32: offset2bag stays empty (ATen's fast path); 4 bags.
  %4:4 = pyop "_embedding_bag"(%w, %i, %o) : (tensor<10x4xf32>, tensor<9xi64>, tensor<4xi64>) -> (tensor<4x4xf32>, tensor<0xi64>, tensor<4xi64>, tensor<4xi64>)
  // max: max_indices per element; include_last_offset: one bag fewer.
  %5:4 = pyop "_embedding_bag"(%wh, %i, %o, False, 2, False, None, True, -1) : (tensor<10x4xf16>, tensor<9xi64>, tensor<4xi64>) -> (tensor<3x4xf16>, tensor<9xi64>, tensor<3xi64>, tensor<3x4xi64>)
  // f64 sums fill offset2bag; i32 indices and offsets give i32 results.
  %6:4 = pyop "_embedding_bag"(%wd, %i32, %o32, False, 0) : (tensor<10x4xf64>, tensor<9xi32>, tensor<4xi32>) -> (tensor<4x4xf64>, tensor<9xi32>, tensor<4xi32>, tensor<4xi32>)
  // per_sample_weights with a padding_idx; mixed index dtypes promote.
  %7:4 = pyop "_embedding_bag"(%w, %i32, %o, False, 0, False, %ps, False, 2) : (tensor<10x4xf32>, tensor<9xi32>, tensor<4xi64>, tensor<9xf32>) -> (tensor<4x4xf32>, tensor<9xi64>, tensor<4xi64>, tensor<4xi64>)
  // The forward-only alias: one bag_size per offset (PyTorch's meta shape).
  %10:4 = pyop "_embedding_bag_forward_only"(%w, %i, %o, False, 1, False, None, True, -1) : (tensor<10x4xf32>, tensor<9xi64>, tensor<4xi64>) -> (tensor<3x4xf32>, tensor<9xi64>, tensor<4xi64>, tensor<3xi64>)
  // [N, C, H, W] at [N, OH, OW, 2] -> [N, C, OH, OW].
  %8 = pyop "grid_sampler_2d"(%x, %g, 0, 0, False) : (tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32>) -> tensor<2x3x4x7xf32>
  // A dynamic batch takes the grid's.
  %9 = pyop "grid_sampler_2d"(%xb, %gb, 2, 2, True) : (tensor<?x3x5x6xbf16>, tensor<2x4x7x2xbf16>) -> tensor<2x3x4x7xbf16>
  ret
}

// -----

trace.graph @cdist_columns(%a: tensor<4x3xf32>, %b: tensor<5x2xf32>) -> () {
  // expected-error @+1 {{"_cdist_forward": X1 and X2 must have the same number of columns. X1: 3 X2: 2}}
  %0 = pyop "_cdist_forward"(%a, %b, 2.0, None) : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<4x5xf32>
  ret
}

// -----

trace.graph @cdist_negative_p(%a: tensor<4x3xf32>) -> () {
  // expected-error @+1 {{"_cdist_forward": supports non-negative p values only, got p = -1}}
  %0 = pyop "_cdist_forward"(%a, %a, -1.0, None) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  ret
}

// -----

trace.graph @cdist_mode(%a: tensor<4x3xf32>) -> () {
  // expected-error @+1 {{"_cdist_forward": possible modes: None, 1, 2, but was: 3}}
  %0 = pyop "_cdist_forward"(%a, %a, 2.0, 3) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  ret
}

// -----

trace.graph @cdist_half(%a: tensor<4x3xf16>) -> () {
  // expected-error @+1 {{"_cdist_forward": x1 must be f32 or f64 (as PyTorch's), got f16}}
  %0 = pyop "_cdist_forward"(%a, %a, 2.0, None) : (tensor<4x3xf16>, tensor<4x3xf16>) -> tensor<4x4xf16>
  ret
}

// -----

trace.graph @cdist_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x5x3xf32>) -> () {
  // expected-error @+1 {{"_cdist_forward": shapes [2] and [3] cannot be broadcast together}}
  %0 = pyop "_cdist_forward"(%a, %b, 2.0, None) : (tensor<2x4x3xf32>, tensor<3x5x3xf32>) -> tensor<2x4x5xf32>
  ret
}

// -----

trace.graph @pdist_rank(%a: tensor<2x4x3xf32>) -> () {
  // expected-error @+1 {{"_pdist_forward": only supports 2D tensors, got: [2, 4, 3]}}
  %0 = pyop "_pdist_forward"(%a, 2.0) : (tensor<2x4x3xf32>) -> tensor<1xf32>
  ret
}

// -----

trace.graph @bag_mode(%w: tensor<10x4xf32>, %i: tensor<9xi64>, %o: tensor<4xi64>) -> () {
  // expected-error @+1 {{"_embedding_bag": mode must be 0 (sum), 1 (mean) or 2 (max), got 3}}
  %0:4 = pyop "_embedding_bag"(%w, %i, %o, False, 3) : (tensor<10x4xf32>, tensor<9xi64>, tensor<4xi64>) -> (tensor<4x4xf32>, tensor<9xi64>, tensor<4xi64>, tensor<4xi64>)
  ret
}

// -----

trace.graph @bag_weights_mean(%w: tensor<10x4xf32>, %i: tensor<9xi64>, %o: tensor<4xi64>, %ps: tensor<9xf32>) -> () {
  // expected-error @+1 {{"_embedding_bag": per_sample_weights only supported with mode='sum'}}
  %0:4 = pyop "_embedding_bag"(%w, %i, %o, False, 1, False, %ps) : (tensor<10x4xf32>, tensor<9xi64>, tensor<4xi64>, tensor<9xf32>) -> (tensor<4x4xf32>, tensor<9xi64>, tensor<4xi64>, tensor<4xi64>)
  ret
}

// -----

trace.graph @bag_indices_rank(%w: tensor<10x4xf32>, %i: tensor<3x3xi64>, %o: tensor<4xi64>) -> () {
  // expected-error @+1 {{"_embedding_bag": indices and offsets must be 1-D, got [3, 3] and [4]}}
  %0:4 = pyop "_embedding_bag"(%w, %i, %o) : (tensor<10x4xf32>, tensor<3x3xi64>, tensor<4xi64>) -> (tensor<4x4xf32>, tensor<0xi64>, tensor<4xi64>, tensor<4xi64>)
  ret
}

// -----

trace.graph @bag_float_indices(%w: tensor<10x4xf32>, %i: tensor<9xf32>, %o: tensor<4xi64>) -> () {
  // expected-error @+1 {{"_embedding_bag": indices and offsets must be i32 or i64, got f32 and i64}}
  %0:4 = pyop "_embedding_bag"(%w, %i, %o) : (tensor<10x4xf32>, tensor<9xf32>, tensor<4xi64>) -> (tensor<4x4xf32>, tensor<0xi64>, tensor<4xi64>, tensor<4xi64>)
  ret
}

// -----

trace.graph @bag_last_offset(%w: tensor<10x4xf32>, %i: tensor<9xi64>, %o: tensor<0xi64>) -> () {
  // expected-error @+1 {{"_embedding_bag": include_last_offset: number of offset should be at least 1}}
  %0:4 = pyop "_embedding_bag"(%w, %i, %o, False, 0, False, None, True) : (tensor<10x4xf32>, tensor<9xi64>, tensor<0xi64>) -> (tensor<0x4xf32>, tensor<0xi64>, tensor<0xi64>, tensor<0xi64>)
  ret
}

// -----

trace.graph @grid_mode(%x: tensor<2x3x5x6xf32>, %g: tensor<2x4x7x2xf32>) -> () {
  // expected-error @+1 {{"grid_sampler_2d": interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got 3}}
  %0 = pyop "grid_sampler_2d"(%x, %g, 3, 0, False) : (tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32>) -> tensor<2x3x4x7xf32>
  ret
}

// -----

trace.graph @grid_shape(%x: tensor<2x3x5x6xf32>, %g: tensor<2x4x7x3xf32>) -> () {
  // expected-error @+1 {{"grid_sampler_2d": expected input [N, C, H, W] and grid [N, H_out, W_out, 2], got [2, 3, 5, 6] and [2, 4, 7, 3]}}
  %0 = pyop "grid_sampler_2d"(%x, %g, 0, 0, False) : (tensor<2x3x5x6xf32>, tensor<2x4x7x3xf32>) -> tensor<2x3x4x7xf32>
  ret
}

// -----

trace.graph @grid_dtype(%x: tensor<2x3x5x6xf32>, %g: tensor<2x4x7x2xf64>) -> () {
  // expected-error @+1 {{"grid_sampler_2d": input and grid must have one floating dtype, got f32 and f64}}
  %0 = pyop "grid_sampler_2d"(%x, %g, 0, 0, False) : (tensor<2x3x5x6xf32>, tensor<2x4x7x2xf64>) -> tensor<2x3x4x7xf32>
  ret
}
