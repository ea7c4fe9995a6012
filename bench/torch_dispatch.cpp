//===- torch_dispatch.cpp - PyTorch eager dispatch cost from C++ ----------===//
//
// The C++ side of bench/runtime_bench.py's dispatch comparison: the same
// chain of N `x = x + 1.0` on a 1-element f32 tensor as the TraceIR graph,
// run eagerly through ATen's dispatcher with no Python in the loop, under
// InferenceMode (no autograd bookkeeping), on one thread. Prints the best
// of 5 runs in microseconds per op.
//
// Built by runtime_bench.py against the pip wheel's libtorch:
//   g++ -O2 -std=c++20 torch_dispatch.cpp -I$T/include -L$T/lib -ltorch_cpu
//   -lc10
//
//===----------------------------------------------------------------------===//

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 10000;
  at::set_num_threads(1);
  c10::InferenceMode guard;
  at::Tensor x = at::zeros({1});
  for (int i = 0; i < 1000; ++i) // warm-up
    x = x + 1.0;
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    x = at::zeros({1});
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i)
      x = x + 1.0;
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    best = std::min(best, s);
  }
  if (x.item<float>() != float(n)) {
    std::fprintf(stderr, "wrong result %f\n", x.item<float>());
    return 1;
  }
  std::printf("%.4f\n", best * 1e6 / n);
  return 0;
}
