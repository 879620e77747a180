// Helpers shared by the benchmarks.
#pragma once

#include <Kokkos_Core.hpp>

#include "randnla/report.hpp"

namespace randnla {
namespace bench {

/// Median wall time (ms) of 10 runs after 2 warm-up runs (randnla::median_ms).
inline double median_ms(Backend& b, const std::function<void()>& f) { return randnla::median_ms(b, f, 10, 2); }

}  // namespace bench
}  // namespace randnla
