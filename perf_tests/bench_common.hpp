// Timing and reporting helpers shared by the benchmarks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include <Kokkos_Core.hpp>

#include "randnla/backend.hpp"

namespace randnla {
namespace bench {

/// Median wall time (ms) of `reps` runs after 2 warm-up runs, the backend synchronised around each.
inline double median_ms(Backend& b, const std::function<void()>& f, int reps = 10) {
  f();
  f();
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

}  // namespace bench
}  // namespace randnla
