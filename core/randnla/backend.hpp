// A backend: one device context with every operation family on it. Algorithms take a Backend&
// and use its families; backends/portable provides each family in Kokkos (any execution space)
// with Kokkos Kernels and LAPACK, backends/cuda with CUDA kernels, cuBLAS and cuSOLVER, each
// family from its own files. Operations one algorithm alone needs are not here: they are small
// interfaces beside that algorithm, which DeviceContext::ops finds.
#pragma once

#include "randnla/context.hpp"
#include "randnla/matrix.hpp"
#include "randnla/ops/conversions.hpp"
#include "randnla/ops/elementwise.hpp"
#include "randnla/ops/factorizations.hpp"
#include "randnla/ops/products.hpp"
#include "randnla/ops/random_generation.hpp"
#include "randnla/ops/reductions.hpp"

namespace randnla {

/// The device context (memory, copies, queue) and the families: conversions, element-wise
/// operations, reductions, random generation, products and dense factorizations. Each family's
/// public members check their arguments once, then call the backend's unchecked hooks.
class Backend : public virtual ProductOps, public virtual FactorizationOps, public virtual RandomOps {};

}  // namespace randnla
