// Orthonormal bases of tall-skinny matrices, the range finder's inner step.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "randnla/backend.hpp"

namespace randnla {

/// The method that makes a tall-skinny Y (m x l, m >= l) orthonormal: asked for in options, and
/// reported (RsvdReport::orthonormalizers, ...) as the one that actually ran.
enum class Orthonormalizer {
  Householder,        ///< LAPACK geqrf + orgqr (cuSOLVER on the GPU): unconditionally stable
  CholeskyQR,         ///< one pass, Gram matrix and Cholesky in FP64: orthogonality ~ cond(Y)^2 * 2^-53
  CholeskyQR2,        ///< two passes (Yamamoto et al. 2015): FP32-level orthogonality for cond(Y) < ~1e7
  ShiftedCholeskyQR3, ///< shifted first pass, then CholeskyQR2 (Fukaya et al. 2020): cond(Y) up to ~1e15
  RandCholeskyQR,     ///< sketch-preconditioned (Higgins, Szyld, Boman & Yamazaki, arXiv 2309.05868;
                      ///< Garrison, Chen & Ipsen, arXiv 2606.18411): R0 from a Householder QR of the
                      ///< sketch Omega^T Y (Omega m x 2l Gaussian in FP16, through SHGEMM), then
                      ///< CholeskyQR passes on the well-conditioned Y R0^{-1} in FP64: FP32-level
                      ///< orthogonality up to cond(Y) near 1/u without a shift
  RandCholeskyQRSparse,  ///< the same preconditioned CholeskyQR with a sparse sign sketch S Y instead
                         ///< (S 2l x m, about 8 non-zeros per column, never stored: sparse_sign_projection)
  Tsqr,               ///< TSQR by a reduction tree of Householder QRs (tsqr(), Q over Y): as stable as
                      ///< Householder, the leaves factored independently (Demmel et al. 2012)
  OnePass,            ///< one CholeskyQR pass by the backend's fastest path for Y's shape: the fused kernel
                      ///< (FP64 Gram sums, as CholeskyQR), else the Tensor Core pass (FP32-accurate split
                      ///< products: orthogonality ~ cond(Y)^2 2^-24), else CholeskyQR's FP64 path, which
                      ///< also takes over, with its fallbacks, where a faster pass breaks down. For bases
                      ///< that only carry a span to the next product (the range finder's bases between
                      ///< products under Auto); reported as CholeskyQR
  Auto,               ///< CholeskyQR passes until the equilibrated Gram matrix of the panel is the
                      ///< identity to FP32's unit roundoff (||D G D - I||_F <= 2^-24, D = diag(G)^{-1/2}),
                      ///< then Q = Y D: no pass when Y's columns are already orthogonal, one or two
                      ///< otherwise (reported as ColumnScaling, CholeskyQR or CholeskyQR2); on the
                      ///< Tensor Core path (orthonormalize()), until ||Q^T Q - I||_F <= 2^-20 sqrt(l)
  ColumnScaling       ///< reported only (Auto): Y's columns were orthogonal already, Q = Y D
};

/// The names of Orthonormalizer's values as the command-line tool spells them ("householder", "cholqr", ...).
inline const EnumNames<Orthonormalizer>& names_of(Orthonormalizer) {
  static const EnumNames<Orthonormalizer> names{{Orthonormalizer::Householder, "householder"},
                                                {Orthonormalizer::CholeskyQR, "cholqr"},
                                                {Orthonormalizer::CholeskyQR2, "cholqr2"},
                                                {Orthonormalizer::ShiftedCholeskyQR3, "scholqr3"},
                                                {Orthonormalizer::RandCholeskyQR, "rand-cholqr"},
                                                {Orthonormalizer::RandCholeskyQRSparse, "rand-cholqr-sparse"},
                                                {Orthonormalizer::Tsqr, "tsqr"},
                                                {Orthonormalizer::OnePass, "one-pass"},
                                                {Orthonormalizer::Auto, "auto"},
                                                {Orthonormalizer::ColumnScaling, "colscale", false}};
  return names;
}

/// The seed of the preconditioned CholeskyQR's Gaussian sketch Omega: the same Omega for every call
/// and every process (the distributed version draws each rank's rows of the same Omega).
constexpr std::uint64_t kPreconditionerSketchSeed = 0x5eed0c40;

/// Y (m x l, m >= l, FP32, backend memory) := Q, orthonormal columns spanning range(Y). Every
/// CholeskyQR pass factors the equilibrated Gram matrix D G D in FP64 (van der Sluis scaling: the
/// same Q, a Cholesky less sensitive to the column norms of Y). Where the backend has a fused path
/// and prefers it for Y's shape (CUDA: l <= 64), Auto, CholeskyQR and CholeskyQR2 run there, without an FP64
/// copy of Y and with one wait for the device: each pass reads Y in FP32 and writes Y R^{-1}
/// rounded to FP32, and Auto stops once the Gram sums show Y orthonormal to FP32 rounding
/// (2^-24 (1 + 2 sqrt(l)): the rounding of Y included)
/// (CholeskyQrOps::fused_cholesky_qr); where it breaks down, the chain below continues. Where the
/// backend prefers it for wider panels (CholeskyQrOps::split_preferred; CUDA: 64 < l <= 1024,
/// m >= 4 l), Auto runs the Tensor Core CholeskyQR first: G = Y^T Y and Y R^{-1} as FP32-accurate
/// split products (TCEC), R^{-1} in FP64, each pass accepted where eight Gaussian probes, summed
/// in FP64, put ||Q^T Q - I||_F within 2^-20 sqrt(l) (about 6x FP32 Householder's orthogonality);
/// an extra m x l FP32 buffer; a breakdown or a failed check hands over to the FP64 path. Where
/// the fused or Tensor Core path takes Y's shape, RandCholeskyQR and RandCholeskyQRSparse run on
/// the Tensor Cores: R0 from an FP32 Householder QR of the sketch, Z = Y R0^{-1} as an
/// FP32-accurate split product, then the fused or Tensor Core CholeskyQR of Z (two m x l FP32
/// buffers, no FP64 copy of Y); a breakdown there hands over to the FP64 path.
/// A Cholesky breakdown (non-positive or non-finite pivot) falls back along
/// CholeskyQR/CholeskyQR2/Auto/RandCholeskyQR(Sparse) -> ShiftedCholeskyQR3 -> Householder; Householder
/// and Tsqr never break down. Returns the method that
/// produced Q. Q = Y R^{-1} with R upper triangular; R's diagonal is positive for every method
/// but Householder, whose column signs are LAPACK's.
/// Throws InvalidArgument if m < l.
Orthonormalizer orthonormalize(Backend& backend, MatrixView<float> y, Orthonormalizer method);

/// The same for a row-major Y (m x l), given as Y^T column-major (Transposed: a LayoutRight view's
/// memory, l x m), orthonormalised in that memory without a copy of it: the FP64 CholeskyQR chain
/// runs on Y^T with every product's roles swapped (G = Y^T Y as Y^T (Y^T)^T, Q^T = R^{-T} Y^T; the
/// sketch of the preconditioned methods as (Y^T) Omega), so the fused and Tensor Core paths, which
/// stream column-major panels, do not run. Householder and Tsqr (asked for, or the chain's last
/// fallback) factor column-major memory: Y is transposed into an m x l FP32 buffer for them and
/// back. Returns the method that produced Q. Throws InvalidArgument if m < l.
Orthonormalizer orthonormalize(Backend& backend, Transposed<float> y, Orthonormalizer method);

/// The verdict of orthonormalize_queued: the method that produced Q, or nothing where the fused
/// CholeskyQR broke down (Y then spans what it spanned but is not orthonormal, and no fallback ran).
/// Reading it waits for the device.
using OrthonormalizationVerdict = std::function<std::optional<Orthonormalizer>()>;
/// orthonormalize() for pipelines that check their orthonormalisations once, at the end, and redo
/// the work where one failed (rp_hosvd): where the fused CholeskyQR takes Y it is queued without a
/// wait for the device and without a fallback; elsewhere orthonormalize() runs at once, fallbacks
/// included, and the verdict is known. Throws InvalidArgument if m < l.
OrthonormalizationVerdict orthonormalize_queued(Backend& backend, MatrixView<float> y, Orthonormalizer method);

/// ||Q^T Q - I||_F of Q (m x l, FP32, backend memory), the Gram matrix in FP64.
double orthogonality_loss(Backend& backend, MatrixView<const float> q);
/// ||A - Q R||_F / ||A||_F (A m x n, Q m x l, R l x n; FP32, backend memory): the residual in FP32,
/// its norm in FP64; 0 for a zero A.
double factorization_residual(Backend& backend, MatrixView<const float> a, MatrixView<const float> q,
                              MatrixView<const float> r);

/// Y (m x l, m >= l, FP64, backend memory) := Q in place, orthonormal to FP64 rounding: the FP64
/// chain of orthonormalize() above (CholeskyQR passes with FP64 Gram matrices, the preconditioned
/// methods with their FP32 sketch and its R0 applied in FP64, ShiftedCholeskyQR3, then Householder
/// QR in FP64, LAPACK dgeqrf / cuSOLVER Dgeqrf); Tsqr, whose tree is FP32, runs Householder QR
/// and is reported so; no fused or Tensor Core path. Y is written only once Q is found (by a pass
/// that did not break down, or by Householder QR). Returns the method that produced Q. Throws
/// InvalidArgument if m < l.
Orthonormalizer orthonormalize(Backend& backend, MatrixView<double> y, Orthonormalizer method);

/// The same for an FP64 panel Y (left unchanged), Q (m x l) written in FP32: the Gram matrix is
/// formed from Y's FP64 values, with no rounding to FP32 first.
Orthonormalizer orthonormalize(Backend& backend, MatrixView<const double> y, MatrixView<float> q,
                               Orthonormalizer method);

}  // namespace randnla
