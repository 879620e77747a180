// Shared test helpers: FP64 references, test matrices, error measures.
#pragma once

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "randnla/backend.hpp"
#include "randnla/sparse_projection/sparse_sign_operator.hpp"

namespace randnla {
namespace test {

/// A host matrix in FP64 or FP32 that owns its data (column-major, ld = rows).
template <class T>
struct HostMatrix {
  index_t rows = 0, cols = 0;
  std::vector<T> data;
  HostMatrix() = default;
  HostMatrix(index_t r, index_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c)) {}
  T& operator()(index_t i, index_t j) { return data[i + j * rows]; }
  T operator()(index_t i, index_t j) const { return data[i + j * rows]; }
  MatrixView<T> view() { return MatrixView<T>(data.data(), rows, cols, rows > 1 ? rows : 1, MemorySpace::Host); }
  MatrixView<const T> cview() const {
    return MatrixView<const T>(data.data(), rows, cols, rows > 1 ? rows : 1, MemorySpace::Host);
  }
};

/// Element classes of the accuracy tests (SHGEMM paper Fig. 5, TCEC paper Sec. 5).
enum class Elements { Normal, Uniform01, ExpRand_m15_15, ExpRand_m35_m15, ExpRand_m45_m35 };
const char* to_string(Elements e);
/// rows x cols matrix of the class; exp_rand(a, b): exponent uniform in [a, b], mantissa uniform, random sign.
HostMatrix<float> random_matrix(index_t rows, index_t cols, Elements e, std::uint64_t seed);

/// op(A) op(B) in FP64 from FP32 (or FP16-valued FP32) inputs.
HostMatrix<double> reference_gemm(Op ta, Op tb, const HostMatrix<float>& a, const HostMatrix<float>& b);
/// ||C - R||_F / ||R||_F.
double relative_error(const HostMatrix<float>& c, const HostMatrix<double>& r);
/// Y = S A in FP64 (k x b) for A D x b, from the operator's own walk.
HostMatrix<double> sparse_projection_fp64(const SparseSignOperator& s, const HostMatrix<float>& a);

/// A = U diag(sigma) V^T with Haar-like orthonormal U (m x r), V (n x r) built in FP64.
HostMatrix<float> matrix_with_spectrum(index_t m, index_t n, const std::vector<double>& sigma, std::uint64_t seed);
/// sqrt(sum_{i >= k} sigma_i^2): the Eckart–Young optimum of a rank-k approximation.
double eckart_young(const std::vector<double>& sigma, index_t k);
/// A = G1 G2^T with Gaussian G1 (m x r), G2 (n x r), formed in FP64: exactly rank r (the randomized
/// LRA paper's test matrices).
HostMatrix<float> gaussian_rank(index_t m, index_t n, index_t r, std::uint64_t seed);
/// ||A - X Y^T||_F / ||A||_F in FP64, host views.
double factor_relative_error(MatrixView<const float> a, MatrixView<const float> x, MatrixView<const float> y);
/// ||A - U diag(S) V^T||_F / ||A||_F in FP64, host views.
double lowrank_relative_error(MatrixView<const float> a, MatrixView<const float> u, MatrixView<const float> s,
                              MatrixView<const float> v);
/// Singular values of A in FP64 (LAPACK dgesvd).
std::vector<double> singular_values(MatrixView<const float> a);
/// max |Q^T Q - I| for a host view.
double orthogonality_loss(MatrixView<const float> q);
/// ||Y - Q Q^T Y||_F / ||Y||_F, all in FP64: how far range(Y) lies outside range(Q) (0: Q spans Y).
double span_residual(const HostMatrix<float>& y, const HostMatrix<float>& q);

/// Symmetric FP64 test matrices of the eigensolver, by kind: Gram matrices of graded and clustered
/// spectra ("graded": eigenvalues i^-3; "cluster": twenty equal, then a decay), an indefinite
/// Gaussian one ("random"), "zero", a diagonal with triple eigenvalues ("multiple"), and Gaussian
/// ones scaled by 1e-150 ("tiny") and 1e150 ("huge").
HostMatrix<double> symmetric_test_matrix(const std::string& kind, index_t n);

/// How far eigenpairs (v: n x n, w: n x 1, host views) are from G's: ||G||_2 (the largest |w_ref|),
/// max |w - w_ref|, max |V^T V - I| and max |G V - V diag(w)|.
struct EigenErrors {
  double norm, value, orthogonality, residual;
};
EigenErrors eigen_errors(const HostMatrix<double>& g, MatrixView<const double> v, MatrixView<const double> w,
                         MatrixView<const double> w_ref);

/// The portable backend on each distinct execution space of this Kokkos among its default, its
/// default host and Serial (e.g. OpenMP on 2 threads and Serial; Cuda and Serial), with its name.
std::vector<std::pair<std::string, std::shared_ptr<Backend>>> portable_backends();

/// Copies a backend matrix to a host matrix (any backend).
HostMatrix<float> to_host(Backend& b, MatrixView<const float> x);

/// x copied into a LayoutLeft view on the default execution space's memory.
Kokkos::View<float**, Kokkos::LayoutLeft> to_kokkos(const HostMatrix<float>& x);
/// A rank-2 float view of any space and layout copied to the host. Through a packed LayoutLeft copy
/// in the view's own space: Kokkos copies a strided view across spaces by no mechanism.
template <class View>
HostMatrix<float> from_kokkos(const View& v) {
  Kokkos::View<float**, Kokkos::LayoutLeft, typename View::memory_space> packed("packed", v.extent(0), v.extent(1));
  Kokkos::deep_copy(packed, v);
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
  HostMatrix<float> h(static_cast<index_t>(v.extent(0)), static_cast<index_t>(v.extent(1)));
  for (index_t j = 0; j < h.cols; ++j)
    for (index_t i = 0; i < h.rows; ++i) h(i, j) = mirror(i, j);
  return h;
}
/// Copies a host matrix into a new matrix of the backend.
Matrix<float> to_backend(Backend& b, const HostMatrix<float>& x);

/// The message of the InvalidArgument f throws, or "no error".
std::string invalid_argument_message(const std::function<void()>& f);

/// A column-major m x k host matrix whose columns test ReductionOps::signs_of_largest: column j's
/// largest magnitude is shared by a positive and a negative entry (a tie: the first wins) in odd
/// columns, lies in the last row for j % 3 == 0, and is negative for j % 4 < 2; column 1 is zero.
std::vector<float> columns_with_ties(index_t m, index_t k);
/// signs_of_largest by its definition: the sign of numpy's argmax of |x| per column (+1 for zero).
std::vector<float> signs_of_largest_reference(const std::vector<float>& x, index_t m, index_t k);

/// An N-way FP64 host tensor, first index fastest, packed.
struct HostTensor {
  std::vector<index_t> extents;
  std::vector<double> data;
  index_t size() const;
};
/// Y = X x_n M (M rows x I_n, column-major): Y_(n) = M X_(n), in FP64.
HostTensor mode_product(const HostTensor& x, int n, const std::vector<double>& m, index_t rows);
/// Ootomo & Yokota's Algorithm 3: G uniform(-1, 1) of size J_1 x ... x J_N, then G x_i M_i with
/// M_i = (Omega_a Omega_b)^T, I_i x J_i of rank J_i - deficit, both factors uniform(-1, 1).
HostTensor paper_tensor(const std::vector<index_t>& dims, const std::vector<index_t>& ranks, index_t deficit,
                        std::uint64_t seed);

}  // namespace test
}  // namespace randnla
