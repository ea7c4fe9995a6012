// --trace-check-gpu-target checks --trace-lower-to-gpu's options before any
// pass changes the module: a good set leaves the module as it was, a bad
// one is one error at the module naming the option (no LLVM warning, no
// abort inside the NVPTX backend, no ptxas failure later).
//
// RUN: rm -rf %t && split-file %s %t
// A fake toolkit with ptxas but no fatbinary: enough for cubin, not fatbin.
// RUN: mkdir -p %t/kit/bin && touch %t/kit/bin/ptxas && chmod +x %t/kit/bin/ptxas
//
// RUN: trace-opt %t/valid.mlir -split-input-file --trace-check-gpu-target | FileCheck %s
// RUN: trace-opt %t/valid.mlir -split-input-file --trace-check-gpu-target="chip=sm_80 format=bin" | FileCheck %s
// RUN: trace-opt %t/valid.mlir -split-input-file --trace-check-gpu-target="chip=sm_100 features=+ptx86" | FileCheck %s
// RUN: trace-opt %t/valid.mlir -split-input-file --trace-check-gpu-target="chip=sm_100 features=" | FileCheck %s
// RUN: trace-opt %t/valid.mlir -split-input-file --trace-check-gpu-target="format=isa toolkit=%t" | FileCheck %s
// RUN: trace-opt %t/valid.mlir -split-input-file --trace-check-gpu-target="format=bin toolkit=%t/kit" | FileCheck %s
// RUN: trace-opt %t/valid.mlir -split-input-file --trace-check-gpu-target="toolkit=/nonexistent/cuda serialize=false" | FileCheck %s
//
// RUN: trace-opt %t/unknown-chip.mlir --trace-check-gpu-target="chip=sm_999" -verify-diagnostics
// RUN: trace-opt %t/not-a-chip.mlir --trace-check-gpu-target="chip=foo" -verify-diagnostics
// RUN: trace-opt %t/old-ptx.mlir --trace-check-gpu-target="chip=sm_100" -verify-diagnostics
// RUN: trace-opt %t/format.mlir --trace-check-gpu-target="format=elf" -verify-diagnostics
// RUN: trace-opt %t/no-toolkit.mlir --trace-check-gpu-target="toolkit=/nonexistent/cuda" -verify-diagnostics
// RUN: trace-opt %t/no-ptxas.mlir --trace-check-gpu-target="toolkit=%t" -verify-diagnostics
// RUN: trace-opt %t/no-fatbinary.mlir --trace-check-gpu-target="toolkit=%t/kit" -verify-diagnostics

//--- valid.mlir
// Every good set of options leaves a linalg function as it was.
// CHECK-LABEL: func.func @add(
// CHECK-NEXT: linalg.add
// CHECK-NEXT: return
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The module is checked, not its contents: a trace.graph is left as it is
// too (the lowering to linalg comes after the check).
// CHECK-LABEL: trace.graph @g(
// CHECK-NEXT: pyop "relu"
trace.graph @g(%x: tensor<4xf32> {trace.input = "x"}) -> tensor<4xf32> {
  %0 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  ret %0 : tensor<4xf32>
}

//--- unknown-chip.mlir
// A chip LLVM's NVPTX backend does not know (it would only warn).
// expected-error @+1 {{trace-lower-to-gpu: unsupported chip 'sm_999': LLVM's NVPTX backend does not know it (expected a name such as sm_80 or sm_90)}}
module {}

//--- not-a-chip.mlir
// A name that is no chip at all.
// expected-error @+1 {{trace-lower-to-gpu: unsupported chip 'foo'}}
module {}

//--- old-ptx.mlir
// The default +ptx80 is too old for sm_100 (LLVM would abort).
// expected-error @+1 {{trace-lower-to-gpu: features '+ptx80' ask for PTX 8.0, but sm_100 needs PTX 8.6 or later (+ptx86, or no +ptx feature to let LLVM choose)}}
module {}

//--- format.mlir
// An object format gpu-module-to-binary has no name for.
// expected-error @+1 {{trace-lower-to-gpu: unsupported format 'elf' (expected fatbin, bin or isa)}}
module {}

//--- no-toolkit.mlir
// A toolkit path that does not exist.
// expected-error @+1 {{trace-lower-to-gpu: CUDA toolkit path '/nonexistent/cuda' does not exist or is not a directory}}
module {}

//--- no-ptxas.mlir
// A directory that is not a toolkit: cubin and fatbin need bin/ptxas.
// expected-error-re @+1 {{trace-lower-to-gpu: CUDA toolkit '{{.*}}' has no executable {{.*}}bin/ptxas}}
module {}

//--- no-fatbinary.mlir
// ptxas alone is enough for cubin but not for fatbin, which needs
// bin/fatbinary too.
// expected-error-re @+1 {{trace-lower-to-gpu: CUDA toolkit '{{.*}}kit' has no executable {{.*}}kit/bin/fatbinary}}
module {}
