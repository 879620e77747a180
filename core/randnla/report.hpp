// What an algorithm reports of its run: named phases and their wall-clock times, measured by one
// timer that waits for the backend's queued work, with an optional progress callback.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "randnla/backend.hpp"

namespace randnla {

/// Called after each phase with its name and the milliseconds it took (e.g. for progress output).
using Progress = std::function<void(const std::string& phase, double ms)>;

/// Phases in the order they first ran, with their milliseconds; a phase that runs several times
/// (the products of power iterations) adds up.
class PhaseReport {
 public:
  void add(const std::string& phase, double ms) {
    for (auto& p : phases_)
      if (p.first == phase) {
        p.second += ms;
        return;
      }
    phases_.emplace_back(phase, ms);
  }
  /// Milliseconds spent in `phase`; 0 when it did not run.
  double ms(const std::string& phase) const {
    for (const auto& p : phases_)
      if (p.first == phase) return p.second;
    return 0.0;
  }
  double total_ms() const {
    double t = 0;
    for (const auto& p : phases_) t += p.second;
    return t;
  }
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }
  /// "projection 0.63 ms, orthonormalisation 0.78 ms, ..., total 4.42 ms".
  std::string to_string() const {
    std::string s;
    char buf[96];
    for (const auto& p : phases_) {
      std::snprintf(buf, sizeof buf, "%s %.2f ms, ", p.first.c_str(), p.second);
      s += buf;
    }
    std::snprintf(buf, sizeof buf, "total %.2f ms", total_ms());
    return s + buf;
  }

 private:
  std::vector<std::pair<std::string, double>> phases_;
};

/// Wall-clock milliseconds of the work queued on a backend since the last lap (the backend is
/// synchronised first), added to a report and passed to the progress callback.
class Stopwatch {
 public:
  explicit Stopwatch(Backend& b, PhaseReport* report = nullptr, Progress progress = nullptr)
      : b_(b), report_(report), progress_(std::move(progress)), t_(now()) {}
  double lap(const std::string& phase) {
    b_.synchronize();
    const auto t = now();
    const double ms = std::chrono::duration<double, std::milli>(t - t_).count();
    t_ = t;
    if (report_) report_->add(phase, ms);
    if (progress_) progress_(phase, ms);
    return ms;
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  Backend& b_;
  PhaseReport* report_;
  Progress progress_;
  std::chrono::steady_clock::time_point t_;
};

/// Median wall time in milliseconds of `reps` runs of f after `warmups` untimed runs, each timed
/// by the Stopwatch (benchmarks and the tool's gemm report).
inline double median_ms(Backend& b, const std::function<void()>& f, int reps = 10, int warmups = 2) {
  for (int i = 0; i < warmups; ++i) f();
  Stopwatch clock(b);
  clock.lap("warm-up");
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    f();
    t.push_back(clock.lap("run"));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace randnla
