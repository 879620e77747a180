// What an algorithm reports of its run: named phases and their times, measured by one timer of the
// backend's queue (its marks, or the host clock after waiting), with an optional progress callback.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
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
  /// Adds `ms` milliseconds to `phase`, appending it when it has not run before.
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
  /// The sum of every phase's milliseconds.
  double total_ms() const {
    double t = 0;
    for (const auto& p : phases_) t += p.second;
    return t;
  }
  /// Every phase's name and milliseconds, in the order the phases first ran.
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

/// Milliseconds of the work queued on a backend between laps, added to a report and passed to the
/// progress callback. Where the backend marks its queue (CUDA events), a lap puts a mark there and
/// returns without waiting, so that phases follow each other on the device without a pause: the
/// report gets the phases' times at finish() (or at the next lap_ms(), or when the Stopwatch
/// goes), and with a progress callback at every lap. Elsewhere every lap waits for the queue and
/// reads the host clock.
class Stopwatch {
 public:
  /// Starts timing the work queued on `b` from now; laps go into `report` (when non-null) and to
  /// `progress` (when set).
  explicit Stopwatch(Backend& b, PhaseReport* report = nullptr, Progress progress = nullptr)
      : b_(b), report_(report), progress_(std::move(progress)), last_(mark()) {}
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;
  ~Stopwatch() {
    try {
      finish();
    } catch (...) {  // a destructor must not throw; the report then lacks the phases left
    }
  }

  /// Ends `phase`: the work queued since the last lap is its work.
  void lap(const std::string& phase) {
    pending_.emplace_back(phase, mark());
    if (progress_) finish();
  }
  /// Ends `phase` and returns its milliseconds, waiting for its work.
  double lap_ms(const std::string& phase) {
    lap(phase);
    return finish();
  }
  /// Puts the phases lapped so far into the report and returns the last's milliseconds, after
  /// waiting for everything queued on the backend: an algorithm calls it last, so that its results
  /// (the copies out of its workspace among them, which do not wait) are complete when it returns.
  double finish() {
    double ms = 0.0;
    for (auto& p : pending_) {
      ms = milliseconds(last_, p.second);
      last_ = std::move(p.second);
      if (report_) report_->add(p.first, ms);
      if (progress_) progress_(p.first, ms);
    }
    pending_.clear();
    b_.synchronize();
    return ms;
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Mark {
    std::shared_ptr<void> queued;  // the backend's mark, or null: then `host`, after waiting
    Clock::time_point host;
  };
  Mark mark() {
    Mark m{b_.queue_mark(), {}};
    if (!m.queued) {
      b_.synchronize();
      m.host = Clock::now();
    }
    return m;
  }
  double milliseconds(const Mark& from, const Mark& to) {
    if (from.queued) return b_.milliseconds_between(from.queued, to.queued);
    return std::chrono::duration<double, std::milli>(to.host - from.host).count();
  }

  Backend& b_;
  PhaseReport* report_;
  Progress progress_;
  Mark last_;
  std::vector<std::pair<std::string, Mark>> pending_;
};

/// Median wall time in milliseconds of `reps` runs of f after `warmups` untimed runs, each timed
/// by its own Stopwatch from just before f is called to just after it returns, so that no run
/// includes the previous one's waiting and reading of its marks (benchmarks and the tool's gemm
/// report).
inline double median_ms(Backend& b, const std::function<void()>& f, int reps = 10, int warmups = 2) {
  for (int i = 0; i < warmups; ++i) f();
  b.synchronize();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    Stopwatch clock(b);
    f();
    t.push_back(clock.lap_ms("run"));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace randnla
