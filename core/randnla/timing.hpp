// Wall-clock timing of work queued on a backend (benchmarks and the tool's gemm report).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "randnla/backend.hpp"

namespace randnla {

/// Median wall time in milliseconds of `reps` runs of f after `warmups` untimed runs, the backend
/// synchronised after each so that queued device work is counted.
inline double median_ms(Backend& b, const std::function<void()>& f, int reps = 10, int warmups = 2) {
  for (int i = 0; i < warmups; ++i) f();
  b.synchronize();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    b.synchronize();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace randnla
