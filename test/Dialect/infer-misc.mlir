// RUN: trace-opt %s -split-input-file -verify-diagnostics

// masked_scatter, randperm, round's decimals and
// _scaled_dot_product_flash_attention_for_cpu: the registry's inference,
// which the verifier runs. These calls are valid PyTorch and verify; each
// follows a PyTorch rule.
trace.graph @valid(%x: tensor<3x4xf32>, %m: tensor<4xi1>, %m3: tensor<2x1x4xi1>,
                   %s: tensor<7x2xf32>, %q: tensor<2x3x5x8xf32>, %k: tensor<2x3x6x8xf32>,
                   %v: tensor<2x3x6x8xf32>, %am: tensor<5x6xf32>, %d: tensor<2x3x5x8xf64>,
                   %h: tensor<2x3xf16>) -> () {
  // The mask broadcasts to self; source has any shape.
  %0 = pyop "masked_scatter"(%x, %m, %s) : (tensor<3x4xf32>, tensor<4xi1>, tensor<7x2xf32>) -> tensor<3x4xf32>
  // Self broadcasts to the mask too: the result is their broadcast.
  %1 = pyop "masked_scatter"(%x, %m3, %s) : (tensor<3x4xf32>, tensor<2x1x4xi1>, tensor<7x2xf32>) -> tensor<2x3x4xf32>
  // randperm is int64 without dtype=; n = 0 is an empty permutation.
  %2 = pyop "randperm"(5) : () -> tensor<5xi64>
  %3 = pyop "randperm"(0, "torch.float32") : () -> tensor<0xf32>
  // The largest n each narrow dtype holds exactly: 0..255, 0..2048.
  %4 = pyop "randperm"(256, "torch.uint8") : () -> tensor<256xui8>
  %5 = pyop "randperm"(2049, "torch.float16") : () -> tensor<2049xf16>
  // round.decimals keeps the type; decimals=0 is round.default (ints too).
  %6 = pyop "round"(%x, 3) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %7 = pyop "round"(%h, -2) : (tensor<2x3xf16>) -> tensor<2x3xf16>
  // The output is [N, H, L, E]; logsumexp [N, H, L] in float32.
  %8:2 = pyop "_scaled_dot_product_flash_attention_for_cpu"(%q, %k, %v, 0.0, False, %am, None)
      : (tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, tensor<5x6xf32>)
      -> (tensor<2x3x5x8xf32>, tensor<2x3x5xf32>)
  // float64 keeps its logsumexp in float64.
  %9:2 = pyop "_scaled_dot_product_flash_attention_for_cpu"(%d, %d, %d, 0.0, True)
      : (tensor<2x3x5x8xf64>, tensor<2x3x5x8xf64>, tensor<2x3x5x8xf64>)
      -> (tensor<2x3x5x8xf64>, tensor<2x3x5xf64>)
  ret
}

// -----

trace.graph @masked_scatter_mask_dtype(%x: tensor<3x4xf32>, %m: tensor<3x4xui8>, %s: tensor<12xf32>) -> () {
  // expected-error @+1 {{"masked_scatter": mask must be a bool tensor, got ui8}}
  %0 = pyop "masked_scatter"(%x, %m, %s) : (tensor<3x4xf32>, tensor<3x4xui8>, tensor<12xf32>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @masked_scatter_source_dtype(%x: tensor<3x4xf32>, %m: tensor<3x4xi1>, %s: tensor<12xf64>) -> () {
  // expected-error @+1 {{"masked_scatter": source must have self's dtype f32, got f64}}
  %0 = pyop "masked_scatter"(%x, %m, %s) : (tensor<3x4xf32>, tensor<3x4xi1>, tensor<12xf64>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @masked_scatter_broadcast(%x: tensor<3x4xf32>, %m: tensor<3xi1>, %s: tensor<12xf32>) -> () {
  // expected-error @+1 {{"masked_scatter": shapes [3, 4] and [3] cannot be broadcast together}}
  %0 = pyop "masked_scatter"(%x, %m, %s) : (tensor<3x4xf32>, tensor<3xi1>, tensor<12xf32>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @randperm_negative() -> () {
  // expected-error @+1 {{"randperm": n must be non-negative, got -1}}
  %0 = pyop "randperm"(-1) : () -> tensor<0xi64>
  ret
}

// -----

trace.graph @randperm_too_large() -> () {
  // 0..256 does not fit uint8.
  // expected-error @+1 {{"randperm": n = 257 is too large for dtype uint8 (at most 256: every value 0..n-1 must be exact)}}
  %0 = pyop "randperm"(257, "torch.uint8") : () -> tensor<257xui8>
  ret
}

// -----

trace.graph @randperm_bf16() -> () {
  // bfloat16 holds 0..256 exactly; ATen checks nothing here and repeats values.
  // expected-error @+1 {{"randperm": n = 258 is too large for dtype bfloat16 (at most 257}}
  %0 = pyop "randperm"(258, "torch.bfloat16") : () -> tensor<258xbf16>
  ret
}

// -----

trace.graph @randperm_bool() -> () {
  // expected-error @+1 {{"randperm": randperm has no bool kernel (dtype=torch.bool)}}
  %0 = pyop "randperm"(3, "torch.bool") : () -> tensor<3xi1>
  ret
}

// -----

trace.graph @round_decimals_int(%x: tensor<3xi64>) -> () {
  // ATen's round.decimals has no integer kernel.
  // expected-error @+1 {{"round": decimals=2 takes floating-point tensors, got i64}}
  %0 = pyop "round"(%x, 2) : (tensor<3xi64>) -> tensor<3xi64>
  ret
}

// -----

trace.graph @round_decimals_float(%x: tensor<3xf32>) -> () {
  // expected-error @+1 {{"round": argument #1 (decimals) must be an int}}
  %0 = pyop "round"(%x, 1.5) : (tensor<3xf32>) -> tensor<3xf32>
  ret
}

// -----

trace.graph @flash_rank(%q: tensor<3x5x8xf32>) -> () {
  // expected-error @+1 {{"_scaled_dot_product_flash_attention_for_cpu": query, key and value must have rank 4 ([N, H, L, E]), got [3, 5, 8], [3, 5, 8] and [3, 5, 8]}}
  %0:2 = pyop "_scaled_dot_product_flash_attention_for_cpu"(%q, %q, %q)
      : (tensor<3x5x8xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32>) -> (tensor<3x5x8xf32>, tensor<3x5xf32>)
  ret
}

// -----

trace.graph @flash_dropout(%q: tensor<1x2x5x8xf32>) -> () {
  // expected-error @+1 {{"_scaled_dot_product_flash_attention_for_cpu": dropout_p must be 0 (ATen's CPU kernel has no dropout), got 5.000000e-01}}
  %0:2 = pyop "_scaled_dot_product_flash_attention_for_cpu"(%q, %q, %q, 0.5)
      : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> (tensor<1x2x5x8xf32>, tensor<1x2x5xf32>)
  ret
}

// -----

trace.graph @flash_bool_mask(%q: tensor<1x2x5x8xf32>, %m: tensor<5x5xi1>) -> () {
  // expected-error @+1 {{"_scaled_dot_product_flash_attention_for_cpu": attn_mask must have the query's dtype f32, got i1}}
  %0:2 = pyop "_scaled_dot_product_flash_attention_for_cpu"(%q, %q, %q, 0.0, False, %m)
      : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<5x5xi1>) -> (tensor<1x2x5x8xf32>, tensor<1x2x5xf32>)
  ret
}

// -----

trace.graph @flash_heads(%q: tensor<1x2x5x8xf32>, %k: tensor<1x4x5x8xf32>) -> () {
  // expected-error @+1 {{must have the same batch and heads (dims 0 and 1)}}
  %0:2 = pyop "_scaled_dot_product_flash_attention_for_cpu"(%q, %k, %k)
      : (tensor<1x2x5x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>) -> (tensor<1x2x5x8xf32>, tensor<1x2x5xf32>)
  ret
}

// -----

trace.graph @flash_head_size(%q: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x4xf32>) -> () {
  // expected-error @+1 {{must have the same head size (last dim)}}
  %0:2 = pyop "_scaled_dot_product_flash_attention_for_cpu"(%q, %q, %v)
      : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>) -> (tensor<1x2x5x4xf32>, tensor<1x2x5xf32>)
  ret
}
