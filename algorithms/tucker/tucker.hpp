// Random-projection HOSVD: a Tucker approximation A ~ g x_1 Q_1 x_2 Q_2 ... x_N Q_N of an N-way
// FP32 tensor from random sketches of its mode unfoldings, two-pass (Ahmadi-Asl et al. 2021;
// Ootomo & Yokota, Sec. 5.2), sequentially truncated, or single-pass (Sun, Guo, Luo, Tropp &
// Udell 2020).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "randnla/common/options.hpp"
#include "randnla/common/precision_policy.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/backend.hpp"
#include "randnla/report.hpp"
#include "randnla/tensor_view.hpp"
#include "randnla/tucker/tensor.hpp"

namespace randnla {

/// How rp_hosvd() sketches the modes and forms the core.
enum class TuckerVariant {
  /// Every mode sketched from A (W_i = A_(i) Omega_(i), Q_i = qr(W_i)), then g = A x_i Q_i^T:
  /// N + 1 reads of A (Ahmadi-Asl et al. 2021, RP-HOSVD; Ootomo & Yokota, Sec. 5.2).
  TwoPass,
  /// Mode i sketched from the tensor already reduced in modes < i (each product contracts the mode
  /// it has sketched): 2 reads of A, then products with ever smaller tensors (ST-HOSVD's order).
  SequentiallyTruncated,
  /// Every mode sketch and a core sketch H = A x_i Phi_i^T from one read of A, the core recovered
  /// by least squares, g = H x_i (Phi_i^T Q_i)^+ (Sun, Guo, Luo, Tropp & Udell 2020, Alg. 1 and
  /// the two-sided recovery of their Sec. 3): for tensors read once. Larger error than the others.
  SinglePass
};

/// The names of TuckerVariant's values as the command-line tool spells them ("two-pass", "sequential", "single-pass").
inline const EnumNames<TuckerVariant>& names_of(TuckerVariant) {
  static const EnumNames<TuckerVariant> names{{TuckerVariant::TwoPass, "two-pass"},
                                              {TuckerVariant::SequentiallyTruncated, "sequential"},
                                              {TuckerVariant::SinglePass, "single-pass"}};
  return names;
}

/// Options of the random-projection HOSVD, rp_hosvd(); every field has a default (oversampling 0;
/// seed, products and progress as CommonOptions documents them: products are the sketches' and the
/// core's). With oversampling p, mode i is sketched with l_i = min(J_i + p, I_i, the product of the
/// other extents) columns and the l_1 x ... x l_N core is truncated to J_1 x ... x J_N by an HOSVD
/// of its own (FP64 Gram matrices); p = 0: Q_i has J_i columns, as in the papers' RP-HOSVD.
struct TuckerOptions : FixedRankOptions {
  TuckerOptions() : FixedRankOptions(0) {}
  TuckerVariant variant = TuckerVariant::TwoPass;  ///< how the modes are sketched and the core formed
  int power_iterations = 0;  ///< q per mode: W_i = (A_(i) A_(i)^T)^q A_(i) Omega_(i)
  Orthonormalizer orthonormalizer = Orthonormalizer::Auto;  ///< Q_i = qr(W_i)
  /// SinglePass: columns of Phi_i, s_i = min(core_sketch_factor l_i + 1, I_i); Sun et al. take 2.
  index_t core_sketch_factor = 2;
  /// SinglePass: A is taken in slabs of consecutive slices along its last mode, of at most this
  /// many bytes (at least one slice), each used for all N + 1 sketches before the next (as slabs of
  /// a tensor that arrives, or is read, in parts would be). 0: all of A as one slab, the fastest
  /// where A is in device memory (H100: 11.8 ms at 1024^3, rank 64, against 13.1 ms in 1 GiB slabs
  /// and 46 ms in 64 MiB ones; perf_tests/results/bench_tucker.md).
  std::size_t slab_bytes = 0;
};

/// Phases (milliseconds of the device's queue, marked without waiting where the backend can):
/// "projection" (the products with Omega and the power iterations'), "input check" (only in a run
/// that waits, see rp_hosvd), "orthonormalisation", "core" (the products with Q_i^T, or the
/// single pass's recovery), "truncation".
struct TuckerReport {
  std::string backend;                        ///< the backend that ran, e.g. the GPU's name or "host"
  std::string sketch_kernel;                  ///< the first sketch product's kernel, e.g. "shgemm fp16-TC"
  std::vector<std::string> orthonormalizers;  ///< the method each orthonormalisation used
  std::vector<index_t> sketch_columns;        ///< l_i
  PhaseReport phases;                         ///< milliseconds per phase, in the order they ran
  double total_ms() const { return phases.total_ms(); }  ///< the phases' sum, milliseconds
};

/// A Tucker approximation A ~ g x_1 Q_1 ... x_N Q_N as matrices in the backend's memory (FP32,
/// column-major).
struct TuckerResult {
  /// The core g (J_1 x ... x J_N, first index fastest), stored as its mode-1 unfolding
  /// g_(1) (J_1 x J_2 ... J_N).
  Matrix<float> core;
  std::vector<index_t> core_extents;  ///< J_1 .. J_N
  std::vector<Matrix<float>> factors; ///< Q_i, I_i x J_i, orthonormal columns
  TuckerReport report;                ///< what ran and the phases' times
};

/// Rank-(J_1, ..., J_N) Tucker approximation of A (I_1 x ... x I_N, N = 3 to 5, FP32, first index
/// fastest and packed as a LayoutLeft view is, in the backend's memory; not modified):
/// A ~ g x_1 Q_1 ... x_N Q_N by random projection (TuckerVariant says which). Ootomo & Yokota,
/// "Mixed-Precision Random Projection for RandNLA on Tensor Cores", Sec. 5.2: Omega_(i) in FP16
/// and SHGEMM where options.products is Auto (with Tensor Cores) or split.
/// Mode products read A in place: the mode-1 and mode-N unfoldings are matrices of A's memory, a
/// middle mode's sketch is one product whose K runs over A's slices (Backend::product_summed); a
/// contraction with Q_i^T
/// moves that mode last (X_(1)^T Q_1 is X x_1 Q_1^T with modes 2..N, 1), so after N of them the
/// core is in order, with no permuted copy. Memory besides A and the outputs: the sketches, one
/// Omega_(i) (prod_{k != i} I_k x l_i, FP16 or FP32), the partial sums of a middle mode's sketch
/// where the backend has no kernel for product_summed (at most |A| / 16 elements) and the first
/// contraction (|A| l_1 / I_1).
/// The run is queued without waiting for the device until its end (orthonormalize_queued: the
/// small products and orthonormalisations of the later modes run back to back); where one of its
/// orthonormalisations broke down, or the core came out non-finite, it runs again waiting at each
/// step, with the orthonormalisers' fallbacks and the input check, and the report is that run's.
/// Outputs: the run's own matrices where `outputs` is null, else copies into what it allocates.
/// Throws InvalidArgument naming the parameter and value for ranks.size() != N, a rank outside
/// 1..I_i, oversampling < 0, power_iterations < 0, core_sketch_factor < 1, non-finite entries in A
/// (found from the first sketch, as rsvd does), or strides that are not packed.
template <class T, int N>
TuckerResult rp_hosvd(Backend& backend, TensorView<T, N> a, const std::vector<index_t>& ranks,
                      const TuckerOptions& options = {}, const MatrixAllocator& outputs = nullptr) {
  static_assert(N >= 3 && N <= 5, "randnla::rp_hosvd: tensors of 3 to 5 modes");
  static_assert(std::is_same<std::remove_const_t<T>, float>::value, "randnla::rp_hosvd: FP32 tensors");
  return rp_hosvd(backend, packed_tensor(a, "A"), ranks, options, outputs);
}

/// The same on a packed tensor of any number of modes >= 2 (rp_hosvd's work).
TuckerResult rp_hosvd(Backend& backend, const PackedTensor& a, const std::vector<index_t>& ranks,
                      const TuckerOptions& options = {}, const MatrixAllocator& outputs = nullptr);

/// X := g x_1 Q_1 ... x_N Q_N (I_1 x ... x I_N, FP32, packed; the backend's memory), from the
/// result of rp_hosvd, by the same N contractions in FP32 (SGEMM).
Matrix<float> tucker_reconstruct(Backend& backend, const TuckerResult& t);

/// ||A - g x_1 Q_1 ... x_N Q_N||_F / ||A||_F in FP64 sums (forms the reconstruction: |A| floats).
double tucker_relative_error(Backend& backend, const PackedTensor& a, const TuckerResult& t);

}  // namespace randnla
