// RUN: trace-opt %s -split-input-file -verify-diagnostics --trace-merge-gpu-modules | FileCheck %s
// RUN: trace-opt %s -split-input-file -verify-diagnostics --trace-merge-gpu-modules="fingerprint" | FileCheck %s --check-prefix=FP

// Two outlined kernels (both named after their function, in modules that
// outlining made unique) end up in one gpu.module, named trace_kernels, each
// kernel renamed after its old module; both launches point at the new
// symbols and the emptied module is gone.
// CHECK-LABEL: func.func @two(
// CHECK: gpu.launch_func @trace_kernels::@two_kernel blocks
// CHECK: gpu.launch_func @trace_kernels::@two_kernel_0 blocks
// CHECK: gpu.module @trace_kernels {
// CHECK-NEXT: gpu.func @two_kernel(
// CHECK: gpu.func @two_kernel_0(
// CHECK-NOT: gpu.module
// With fingerprint, one host function gives both its kernels one suffix.
// FP-LABEL: func.func @two(
// FP: gpu.launch_func @trace_kernels::@two_kernel_[[H:[0-9a-f]{8}]] blocks
// FP: gpu.launch_func @trace_kernels::@two_kernel_0_[[H]] blocks
// FP: gpu.module @trace_kernels {
// FP-NEXT: gpu.func @two_kernel_[[H]](
// FP: gpu.func @two_kernel_0_[[H]](
// FP-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @two(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @two_kernel::@two_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    gpu.launch_func @two_kernel_0::@two_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    return
  }
  gpu.module @two_kernel {
    gpu.func @two_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @two_kernel_0 {
    gpu.func @two_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// One gpu.module is already one binary: without fingerprint nothing
// changes. With it, the kernel still gets its suffix (the runtime looks the
// name up) and the module its name.
// CHECK-LABEL: func.func @one(
// CHECK: gpu.launch_func @one_kernel::@one_kernel blocks
// CHECK: gpu.module @one_kernel {
// CHECK-NEXT: gpu.func @one_kernel(
// FP-LABEL: func.func @one(
// FP: gpu.launch_func @trace_kernels::@one_kernel_[[S:[0-9a-f]{8}]] blocks
// FP: gpu.module @trace_kernels {
// FP-NEXT: gpu.func @one_kernel_[[S]](
module attributes {gpu.container_module} {
  func.func @one(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @one_kernel::@one_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    return
  }
  gpu.module @one_kernel {
    gpu.func @one_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// The fingerprint is per host function: the same kernel launched with
// another grid hashes differently, so a fatbin built for one grid lacks the
// names the other looks up.
// FP-LABEL: func.func @grid4(
// FP: gpu.launch_func @trace_kernels::@grid4_kernel_[[A:[0-9a-f]{8}]] blocks
// FP-LABEL: func.func @grid8(
// FP-NOT: @grid8_kernel_[[A]]
// FP: gpu.launch_func @trace_kernels::@grid8_kernel_[[B:[0-9a-f]{8}]] blocks
// FP-NOT: @grid8_kernel_[[A]]
// FP: gpu.module @trace_kernels {
// FP-NEXT: gpu.func @grid4_kernel_[[A]](
// FP: gpu.func @grid8_kernel_[[B]](
// CHECK-LABEL: func.func @grid4(
// CHECK: gpu.launch_func @trace_kernels::@grid4_kernel blocks
// CHECK-LABEL: func.func @grid8(
// CHECK: gpu.launch_func @trace_kernels::@grid8_kernel blocks
module attributes {gpu.container_module} {
  func.func @grid4(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @grid4_kernel::@k blocks in (%c4, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    return
  }
  func.func @grid8(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @grid8_kernel::@k blocks in (%c8, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    return
  }
  gpu.module @grid4_kernel {
    gpu.func @k(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @grid8_kernel {
    gpu.func @k(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A symbol trace_kernels that exists already keeps its name; the kernels
// go into the first gpu.module, which keeps its own.
// CHECK-LABEL: func.func @trace_kernels(
// CHECK: gpu.launch_func @a_kernel::@a_kernel blocks
// CHECK: gpu.launch_func @a_kernel::@b_kernel blocks
// CHECK: gpu.module @a_kernel {
// CHECK-NEXT: gpu.func @a_kernel(
// CHECK: gpu.func @b_kernel(
// CHECK-NOT: gpu.module
// FP-LABEL: func.func @trace_kernels(
// FP: gpu.launch_func @a_kernel::@a_kernel_[[T:[0-9a-f]{8}]] blocks
// FP: gpu.launch_func @a_kernel::@b_kernel_[[T]] blocks
// FP: gpu.module @a_kernel {
module attributes {gpu.container_module} {
  func.func @trace_kernels(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a_kernel::@a_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    gpu.launch_func @b_kernel::@b_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    return
  }
  gpu.module @a_kernel {
    gpu.func @a_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @b_kernel {
    gpu.func @b_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A gpu.module holding more than one gpu.func is not what outlining makes:
// its other symbols could clash once merged, so it is an error.
module attributes {gpu.container_module} {
  func.func @helpers(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @h_kernel::@h_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    gpu.launch_func @i_kernel::@i_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    return
  }
  gpu.module @h_kernel {
    // expected-error @+1 {{trace-merge-gpu-modules: expected one gpu.func per outlined gpu.module}}
    gpu.func @h_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
    gpu.func @helper() {
      gpu.return
    }
  }
  gpu.module @i_kernel {
    gpu.func @i_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A launch of a kernel that is in no gpu.module (here an already
// serialized gpu.binary) cannot be pointed at the merged module.
module attributes {gpu.container_module} {
  func.func @serialized(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{trace-merge-gpu-modules: launch of an unknown kernel}}
    gpu.launch_func @old::@old_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    gpu.launch_func @p_kernel::@p_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    gpu.launch_func @q_kernel::@q_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<8xf32>)
    return
  }
  gpu.binary @old [#gpu.object<#nvvm.target, "">]
  gpu.module @p_kernel {
    gpu.func @p_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @q_kernel {
    gpu.func @q_kernel(%m: memref<8xf32>) kernel {
      gpu.return
    }
  }
}
