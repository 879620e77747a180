// The portable backend: every operation family in Kokkos on the execution space it is given, so it
// runs wherever Kokkos does (Serial, OpenMP, Threads, Cuda, HIP, SYCL), each family from its own
// folder here (products through Kokkos Kernels, vendor BLAS where Kokkos Kernels has a TPL for the
// space; element-wise operations, reductions and the Philox fills as Kokkos kernels; the small
// dense factorizations by LAPACK on the host). The Tensor Core products are emulated with the same
// splits and terms as the CUDA kernels, for validation: capabilities().tensor_cores is false.
// The operations of single algorithms come from this backend's algorithm folders, listed once in
// CMake (RANDNLA_ALGORITHMS), through the generated provide_algorithm_ops.
#pragma once

#include <memory>

#include "portable/context/portable_context.hpp"
#include "portable/conversions/portable_conversions.hpp"
#include "portable/elementwise/portable_elementwise.hpp"
#include "portable/factorizations/portable_factorizations.hpp"
#include "portable/products/portable_products.hpp"
#include "portable/random/portable_random.hpp"
#include "portable/reductions/portable_reductions.hpp"
#include "portable_algorithm_ops.hpp"

namespace randnla {
namespace portable {

template <class Exec>
class PortableBackend final : public Backend,
                              public PortableConversions<Exec>,
                              public PortableElementwise<Exec>,
                              public PortableReductions<Exec>,
                              public PortableRandom<Exec>,
                              public PortableProducts<Exec>,
                              public PortableFactorizations<Exec> {
 public:
  explicit PortableBackend(const Exec& exec) : PortableContext<Exec>(exec) { provide_algorithm_ops(exec, *this); }
};

}  // namespace portable

/// A Backend that queues its work on `exec` (an execution-space instance) and allocates in
/// Exec::memory_space. Kokkos must be initialised while the backend and its allocations are used.
/// Included by choose_backend.cpp alone, which makes one for each execution space Kokkos was built with.
template <class Exec>
std::unique_ptr<Backend> make_portable_backend(const Exec& exec) {
  return std::make_unique<portable::PortableBackend<Exec>>(exec);
}

}  // namespace randnla
