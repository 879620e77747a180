// initialize() on a Kokkos execution-space instance: the backend that the entries of randnla.hpp
// use on it, made and prepared during the application's start-up.
//
//   Kokkos::initialize(argc, argv);
//   randnla::initialize(Kokkos::DefaultExecutionSpace());   // before the first timed call
#pragma once

#include <chrono>

#include "randnla/backends.hpp"
#include "randnla/initialize/initialize.hpp"

namespace randnla {

/// Makes the backend that the entries of randnla.hpp use on `exec` (on a Kokkos::Cuda instance: the
/// CUDA backend on its device and stream, with the cuBLAS and cuSOLVER handles and the memory pool,
/// phase "backend") and prepares it as initialize(Backend&) documents. Call it after
/// Kokkos::initialize, on the instance (stream) the later calls use. Throws what backend_for and
/// initialize(Backend&) throw.
template <class Exec>
InitializeReport initialize(const Exec& exec) {
  const auto start = std::chrono::steady_clock::now();
  auto backend = backend_for(exec);
  const double made_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  InitializeReport report = initialize(*backend);
  PhaseReport phases;
  phases.add("backend", made_ms);
  for (const auto& [name, ms] : report.phases.phases()) phases.add(name, ms);
  report.phases = phases;
  return report;
}

}  // namespace randnla
