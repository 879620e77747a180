// The distributed algorithms under mpirun (-np 1 to 4, the host's portable backend): TSQR,
// CholeskyQR2, the preconditioned CholeskyQR and RSVD of a matrix split unevenly over the ranks (one rank with fewer
// rows than columns) against the single-process run on the whole matrix, and bad input that every rank must report, none hang on.
// Every rank builds the same whole A from a seed and keeps its own rows; checks that need all rows
// sum over the ranks, so no rank gathers A.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/distributed/distributed.hpp"
#include "randnla/mpi/mpi_communicator.hpp"
#ifdef RANDNLA_TEST_NCCL
#include "randnla/nccl/nccl_transport.hpp"
#endif
#include "randnla/randnla.hpp"

using namespace randnla;

namespace {

struct Host {
  index_t rows = 0, cols = 0;
  std::vector<float> data;
  Host(index_t r, index_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c)) {}
  float& operator()(index_t i, index_t j) { return data[static_cast<std::size_t>(i + j * rows)]; }
  MatrixView<float> view() { return MatrixView<float>(data.data(), rows, cols, std::max<index_t>(rows, 1), MemorySpace::Host); }
};

/// A = U diag(sigma) V^T, sigma_i = decay^i, U and V from QRs of Gaussian matrices (the library's RNG).
Host test_matrix(Backend& b, index_t m, index_t n, double decay = 0.8) {
  Host u(m, n), v(n, n), a(m, n);
  b.fill_random(RandomSpec{Distribution::Gaussian, 3, 0}, u.view());
  b.fill_random(RandomSpec{Distribution::Gaussian, 3, 1}, v.view());
  orthonormalize(b, u.view(), Orthonormalizer::Householder);
  orthonormalize(b, v.view(), Orthonormalizer::Householder);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) v(i, j) *= static_cast<float>(std::pow(decay, j));
  b.product(Op::N, Op::T, 1.0f, MatrixView<const float>(u.view()), MatrixView<const float>(v.view()), 0.0f, a.view(),
            ProductPrecision::fp32());
  return a;
}

/// This rank's rows of an m-row matrix: uneven blocks, the last rank's smaller than n when it can be.
std::pair<index_t, index_t> my_rows(const Communicator& c, index_t m) {
  const int p = c.size(), r = c.rank();
  if (p == 1) return {0, m};
  const index_t last = 5, rest = (m - last) / (p - 1);
  if (r == p - 1) return {rest * (p - 1), m - rest * (p - 1)};
  return {r * rest, rest};
}

Host rows_of(Host& a, index_t r0, index_t count) {
  Host h(count, a.cols);
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < count; ++i) h(i, j) = a(r0 + i, j);
  return h;
}

/// The whole test matrix (m x n, the same on every rank) and this rank's rows of it.
struct Split {
  std::shared_ptr<Backend> b = make_backend(BackendKind::Host);
  MpiCommunicator comm{MPI_COMM_WORLD};
  Host a;
  index_t r0, count;
  Host mine;
  Split(index_t m, index_t n, double decay = 0.8)
      : a(test_matrix(*b, m, n, decay)),
        r0(my_rows(comm, m).first),
        count(my_rows(comm, m).second),
        mine(rows_of(a, r0, count)) {}
};

double sum_over_ranks(double x) {
  double s = 0;
  MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

/// The message of the InvalidArgument f throws, or "no exception".
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no exception";
}

}  // namespace

/// ||A - Q R||_F / ||A||_F and ||Q^T Q - I||_F over all ranks, from this rank's rows of A and Q.
std::pair<double, double> factor_errors(Host& mine, const DistributedQrResult& t) {
  const index_t count = mine.rows, n = mine.cols;
  double residual = 0, norm = 0;
  std::vector<double> gram(static_cast<std::size_t>(n * n), 0.0);
  const float* q = t.Q.data();
  const float* r = t.R.data();
  for (index_t i = 0; i < count; ++i)
    for (index_t j = 0; j < n; ++j) {
      double s = 0;
      for (index_t p = 0; p <= j; ++p) s += double(q[i + p * count]) * r[p + j * n];
      residual += (mine(i, j) - s) * (mine(i, j) - s), norm += double(mine(i, j)) * mine(i, j);
      for (index_t p = 0; p < n; ++p) gram[static_cast<std::size_t>(j + p * n)] += double(q[i + j * count]) * q[i + p * count];
    }
  MPI_Allreduce(MPI_IN_PLACE, gram.data(), static_cast<int>(gram.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double loss = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t p = 0; p < n; ++p) loss += std::pow(gram[static_cast<std::size_t>(j + p * n)] - (j == p), 2);
  return {std::sqrt(sum_over_ranks(residual) / sum_over_ranks(norm)), std::sqrt(loss)};
}

TEST(Distributed, TsqrFactorsTheWholeMatrixAndMatchesOneProcess) {
  const index_t m = 300, n = 12;
  Split split(m, n);
  auto& [b, comm, a, r0, count, mine] = split;
  const DistributedQrResult t = distributed_tsqr(*b, comm, MatrixView<const float>(mine.view()));
  // A_i = Q_i R on this rank; Q^T Q = sum_i Q_i^T Q_i = I over the ranks.
  const auto [residual, loss] = factor_errors(mine, t);
  EXPECT_LT(residual, 1e-6);
  EXPECT_LT(loss, 1e-5);
  // R equals the single-process R up to the signs of its rows.
  const float* r = t.R.data();
  const TsqrResult whole = tsqr(*b, MatrixView<const float>(a.view()));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i)
      EXPECT_NEAR(std::fabs(r[i + j * n]), std::fabs(whole.R.data()[i + j * n]), 1e-5) << i << ", " << j;
  EXPECT_EQ(t.report.ranks, comm.size());
}

// The CholeskyQR variants over the ranks (CholeskyQR2 and the preconditioned one), at cond(A) 12
// and 5e5: A = Q R, Q orthonormal, R exactly upper triangular, and Q equal to the single process's
// orthonormaliser of the same method on the whole A.
TEST(Distributed, CholeskyQrVariantsMatchOneProcess) {
  const std::pair<Orthonormalizer, DistributedQr> variants[] = {{Orthonormalizer::CholeskyQR2, distributed_cholesky_qr2},
                                                         {Orthonormalizer::RandCholeskyQR, distributed_rand_cholesky_qr}};
  for (const auto& [method, factor] : variants)
    for (double decay : {0.8, 0.3}) {
      const index_t m = 300, n = 12;
      Split split(m, n, decay);
      auto& [b, comm, a, r0, count, mine] = split;
      const DistributedQrResult t = factor(*b, comm, MatrixView<const float>(mine.view()), nullptr);
      SCOPED_TRACE(std::string(to_string(method)) + ", decay " + std::to_string(decay));
      const auto [residual, loss] = factor_errors(mine, t);
      EXPECT_LT(residual, 1e-6);
      EXPECT_LT(loss, 1e-5);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = j + 1; i < n; ++i) ASSERT_EQ(t.R.data()[i + j * n], 0.0f);
      Host whole = a;
      orthonormalize(*b, whole.view(), method);
      double worst = 0;
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < count; ++i)
          worst = std::max(worst, double(std::fabs(t.Q.data()[i + j * count] - whole(r0 + i, j))));
      EXPECT_LT(worst, 1e-5);
    }
}

// A rank-deficient A (its last column a copy of its first) breaks CholeskyQR2 down on every rank.
// An A of rank one (every row the same), whose Y = A Omega then has rank one exactly, makes the
// RSVD fall back to the direct TSQR on every rank, with the single process's singular values.
TEST(Distributed, RankDeficientCholeskyQr2BreaksDownOnEveryRankAndTheRsvdFallsBack) {
  const index_t m = 300, n = 12, k = 3;
  Split split(m, n);
  auto& [b, comm, a, r0, count, mine] = split;
  for (index_t i = 0; i < count; ++i) mine(i, n - 1) = mine(i, 0);
  bool broke = false;
  try {
    distributed_cholesky_qr2(*b, comm, MatrixView<const float>(mine.view()));
  } catch (const NumericalBreakdown& e) {
    broke = std::string(e.what()).find("distributed_cholesky_qr2") != std::string::npos;
  }
  EXPECT_TRUE(broke);
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < m; ++i) a(i, j) = a(0, j);
    for (index_t i = 0; i < count; ++i) mine(i, j) = a(0, j);
  }
  RsvdOptions o;
  o.power_iterations = 0;
  o.oversampling = 2;
  o.error_probes = 0;
  const DistributedRsvdResult d = distributed_rsvd(*b, comm, MatrixView<const float>(mine.view()), k, o);
  const std::vector<std::string>& used = d.report.orthonormalizers;
  EXPECT_NE(std::find(used.begin(), used.end(), "tsqr (distributed)"), used.end());
  const RsvdResult whole = rsvd(*b, MatrixView<const float>(a.view()), k, o);
  for (index_t i = 0; i < k; ++i) EXPECT_NEAR(d.S.data()[i], whole.S.data()[i], 1e-5 * whole.S.data()[0]);
}

/// A host copy of x (in b's memory).
Host host_copy(Backend& b, const Matrix<float>& x) {
  Host h(x.rows(), x.cols());
  b.copy(x.view(), h.view());
  return h;
}

/// U S V^T on the host.
struct HostSvd {
  Host U, S, V;
  HostSvd(Backend& b, const Matrix<float>& u, const Matrix<float>& s, const Matrix<float>& v)
      : U(host_copy(b, u)), S(host_copy(b, s)), V(host_copy(b, v)) {}
  double at(index_t i, index_t j) {
    double x = 0;
    for (index_t p = 0; p < S.rows; ++p) x += double(U(i, p)) * S(p, 0) * V(j, p);
    return x;
  }
};

/// ||U_i S V^T - (U S V^T)(r0 : r0 + U_i.rows, :)||_F / ||U S V^T||_F over the ranks: this rank's
/// rows of the distributed approximation against the same rows of the whole matrix's.
double approximation_difference(HostSvd& mine, HostSvd& whole, index_t r0) {
  double diff = 0, norm = 0;
  for (index_t i = 0; i < mine.U.rows; ++i)
    for (index_t j = 0; j < mine.V.rows; ++j) {
      const double x = mine.at(i, j), y = whole.at(r0 + i, j);
      diff += (x - y) * (x - y), norm += y * y;
    }
  return std::sqrt(sum_over_ranks(diff) / sum_over_ranks(norm));
}

TEST(Distributed, RsvdMatchesOneProcessOnTheWholeMatrix) {
  const index_t m = 400, n = 60, k = 8;
  Split split(m, n);
  auto& [b, comm, a, r0, count, mine] = split;
  for (int q : {0, 2}) {
    RsvdOptions o;
    o.power_iterations = q;
    o.error_probes = 0;
    const DistributedRsvdResult d = distributed_rsvd(*b, comm, MatrixView<const float>(mine.view()), k, o);
    const RsvdResult whole = rsvd(*b, MatrixView<const float>(a.view()), k, o);
    for (index_t i = 0; i < k; ++i) EXPECT_NEAR(d.S.data()[i], whole.S.data()[i], 1e-5 * whole.S.data()[0]) << "q " << q;
    HostSvd ours(*b, d.U, d.S, d.V), theirs(*b, whole.U, whole.S, whole.V);
    EXPECT_LT(approximation_difference(ours, theirs, r0), 1e-5) << "q " << q;
    EXPECT_EQ(d.distribution.ranks, comm.size());
  }
}

// The Kokkos entry on this rank's rows as a view: the same singular values as on the backend.
// Fixed accuracy over the ranks: the rank found and the singular values of the one-process run on
// the whole matrix (the same blocks of Omega), and an error estimate that meets the tolerance.
TEST(Distributed, FixedAccuracyRsvdMatchesOneProcess) {
  const index_t m = 300, n = 40;
  Split split(m, n);
  auto& [b, comm, a, r0, count, mine] = split;
  FixedAccuracyOptions o;
  o.tolerance = 0.05;
  o.block_size = 4;
  const DistributedRsvdResult d = distributed_rsvd_fixed_accuracy(*b, comm, MatrixView<const float>(mine.view()), o);
  const RsvdResult whole = rsvd_fixed_accuracy(*b, MatrixView<const float>(a.view()), o);
  ASSERT_EQ(d.S.rows(), whole.S.rows());
  EXPECT_GE(d.S.rows(), 14);  // sigma_j = 0.8^j: no rank below 14 leaves a tail under 0.05 ||A||_F (Eckart-Young)
  for (index_t i = 0; i < d.S.rows(); ++i) EXPECT_NEAR(d.S.data()[i], whole.S.data()[i], 1e-5 * whole.S.data()[0]) << i;
  EXPECT_LE(d.report.relative_error_estimate, 0.05);
  EXPECT_NEAR(d.report.relative_error_estimate, whole.report.relative_error_estimate, 1e-4);
  // U's rows on this rank are the one-process U's rows, up to the signs of its columns.
  ASSERT_EQ(d.U.rows(), count);
  for (index_t j = 0; j < d.U.cols(); ++j)
    for (index_t i = 0; i < count; ++i)
      EXPECT_NEAR(std::fabs(d.U.data()[i + j * count]), std::fabs(whole.U.data()[r0 + i + j * m]), 1e-4) << i << "," << j;
  FixedAccuracyOptions other = o;
  if (comm.size() > 1 && comm.rank() == 1) other.tolerance = 0.1;
  const std::string message = message_of([&] { distributed_rsvd_fixed_accuracy(*b, comm, MatrixView<const float>(mine.view()), other); });
  EXPECT_EQ(message.find("tolerance") != std::string::npos, comm.size() > 1) << message;
}

TEST(Distributed, KokkosEntryOnEachRanksRows) {
  const index_t m = 240, n = 40, k = 6;
  Split split(m, n);
  auto& [b, comm, a, r0, count, mine] = split;
  Kokkos::View<float**, Kokkos::LayoutLeft> my_view("A_i", count, n);
  auto mirror = Kokkos::create_mirror_view(my_view);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < count; ++i) mirror(i, j) = a(r0 + i, j);
  Kokkos::deep_copy(my_view, mirror);
  DistributedReport how;
  const auto r = randnla::distributed_rsvd(Kokkos::DefaultExecutionSpace(), comm, my_view, k, {}, &how);
  ASSERT_EQ(static_cast<index_t>(r.U.extent(0)), count);
  ASSERT_EQ(static_cast<index_t>(r.S.extent(0)), k);
  const RsvdResult whole = rsvd(*b, MatrixView<const float>(a.view()), k);
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.S);
  for (index_t i = 0; i < k; ++i) EXPECT_NEAR(s(i), whole.S.data()[i], 1e-5 * whole.S.data()[0]);
  EXPECT_EQ(how.ranks, comm.size());
  EXPECT_NE(how.transport.find("MPI"), std::string::npos);
  const auto t = randnla::distributed_tsqr(Kokkos::DefaultExecutionSpace(), comm, my_view);
  EXPECT_EQ(static_cast<index_t>(t.Q.extent(0)), count);
  EXPECT_EQ(static_cast<index_t>(t.R.extent(0)), n);
  FixedAccuracyOptions fixed;
  fixed.tolerance = 0.3;
  const auto f = randnla::distributed_rsvd_fixed_accuracy(Kokkos::DefaultExecutionSpace(), comm, my_view, fixed);
  EXPECT_EQ(static_cast<index_t>(f.U.extent(0)), count);
  EXPECT_LE(f.report.relative_error_estimate, 0.3);
  // The CholeskyQR variants' R against TSQR's: the same factor up to the signs of its rows.
  const auto c = randnla::distributed_rand_cholesky_qr(Kokkos::DefaultExecutionSpace(), comm, my_view);
  ASSERT_EQ(static_cast<index_t>(c.Q.extent(0)), count);
  auto rc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.R);
  auto rt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.R);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) EXPECT_NEAR(std::fabs(rc(i, j)), std::fabs(rt(i, j)), 1e-4 * std::fabs(rt(0, 0)));
  const auto c2 = randnla::distributed_cholesky_qr2(Kokkos::DefaultExecutionSpace(), comm, my_view);
  ASSERT_EQ(static_cast<index_t>(c2.Q.extent(0)), count);
  auto r2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c2.R);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) EXPECT_NEAR(std::fabs(r2(i, j)), std::fabs(rt(i, j)), 1e-4 * std::fabs(rt(0, 0)));

  // This rank's rows as a LayoutRight view: the RSVDs read it in place through its transpose (the
  // same Omega, the products with the roles swapped: A's results to rounding); the QRs transpose it
  // into their Q's memory (the entries say so) and factor that, so they compute what they computed
  // on the LayoutLeft view, to the bit.
  Kokkos::View<float**, Kokkos::LayoutRight> my_rows("A_i", count, n);
  Kokkos::deep_copy(my_rows, my_view);
  const auto rr = randnla::distributed_rsvd(Kokkos::DefaultExecutionSpace(), comm, my_rows, k);
  EXPECT_EQ(rr.input, "A: row-major, read in place as A^T");
  EXPECT_NE(rr.report.sketch_kernel.find("row-major: the transpose"), std::string::npos) << rr.report.sketch_kernel;
  EXPECT_EQ(r.input, "A: column-major, read in place");
  ASSERT_EQ(static_cast<index_t>(rr.U.extent(0)), count);
  auto sr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rr.S);
  for (index_t i = 0; i < k; ++i) EXPECT_NEAR(sr(i), s(i), 1e-5 * s(0)) << i;
  auto ur = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rr.U);
  auto ul = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.U);
  for (index_t j = 0; j < k; ++j)  // the leading singular vectors, separated by sigma_j = 0.8^j
    for (index_t i = 0; i < count; ++i) EXPECT_NEAR(std::fabs(ur(i, j)), std::fabs(ul(i, j)), 1e-3) << i << "," << j;
  const auto fr = randnla::distributed_rsvd_fixed_accuracy(Kokkos::DefaultExecutionSpace(), comm, my_rows, fixed);
  EXPECT_EQ(fr.input, rr.input);
  EXPECT_EQ(fr.S.extent(0), f.S.extent(0));
  EXPECT_LE(fr.report.relative_error_estimate, 0.3);
  const auto elements = [](const auto& v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<float>(h.data(), h.data() + h.size());
  };
  const auto tr = randnla::distributed_tsqr(Kokkos::DefaultExecutionSpace(), comm, my_rows);
  EXPECT_EQ(tr.input, "A: row-major, transposed into Q's memory and factored there");
  EXPECT_EQ(elements(tr.R), elements(t.R));
  EXPECT_EQ(elements(tr.Q), elements(t.Q));
  const auto c2r = randnla::distributed_cholesky_qr2(Kokkos::DefaultExecutionSpace(), comm, my_rows);
  EXPECT_EQ(c2r.input, tr.input);
  EXPECT_EQ(elements(c2r.R), elements(c2.R));
  EXPECT_EQ(elements(c2r.Q), elements(c2.Q));
  const auto cr = randnla::distributed_rand_cholesky_qr(Kokkos::DefaultExecutionSpace(), comm, my_rows);
  EXPECT_EQ(elements(cr.R), elements(c.R));
  EXPECT_EQ(elements(cr.Q), elements(c.Q));
}

// Bad input on one rank: every rank throws InvalidArgument naming it (a hang fails the test by
// ctest's timeout).
TEST(Distributed, BadInputOnOneRankIsReportedOnEveryRank) {
  const index_t m = 200, n = 30, k = 5;
  Split split(m, n);
  auto& [b, comm, a, r0, count, mine] = split;
  const bool last = comm.rank() == comm.size() - 1;
  const MatrixView<const float> av(mine.view());
  const auto rsvd_with = [&](MatrixView<const float> x, index_t kk, RsvdOptions o) {
    return message_of([&] { distributed_rsvd(*b, comm, x, kk, o); });
  };
  if (comm.size() > 1) {
    EXPECT_NE(rsvd_with(av, last ? k + 1 : k, {}).find("k"), std::string::npos);
    RsvdOptions seeded;
    seeded.seed = last ? 7 : 42;
    EXPECT_NE(rsvd_with(av, k, seeded).find("seed"), std::string::npos);
    EXPECT_NE(message_of([&] { distributed_tsqr(*b, comm, last ? av.block(0, 0, count, n - 1) : av); }).find("A.cols"),
              std::string::npos);
    EXPECT_NE(message_of([&] { distributed_rand_cholesky_qr(*b, comm, last ? av.block(0, 0, count, n - 1) : av); })
                  .find("A.cols"),
              std::string::npos);
  }
  EXPECT_NE(rsvd_with(last ? av.block(0, 0, 0, n) : av, k, {}).find("A.rows"), std::string::npos);
  Host bad = mine;
  if (last) bad(0, 3) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(rsvd_with(MatrixView<const float>(bad.view()), k, {}).find("non-finite"), std::string::npos);
  EXPECT_NE(message_of([&] { distributed_rand_cholesky_qr(*b, comm, MatrixView<const float>(bad.view())); }).find("non-finite"),
            std::string::npos);
  EXPECT_NE(rsvd_with(av, n + 1, {}).find("k"), std::string::npos);
  // After all of that, the ranks still agree: a good call runs on every rank.
  EXPECT_EQ(rsvd_with(av, k, {}), "no exception");
}

#ifdef RANDNLA_TEST_NCCL
// NCCL between the ranks' GPUs: attached where every rank has a GPU of its own, refused on every
// rank with the reason otherwise (ranks sharing one GPU); either way the distributed algorithms on
// device data equal the host-staged runs.
TEST(Distributed, NcclOrHostStagingOnDeviceData) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU visible";
  const index_t m = 300, n = 12;
  Split split(m, n);
  auto& [b, comm, a, r0, count, mine] = split;
  auto dev = make_backend(BackendKind::Cuda);
  Matrix<float> da(*dev, count, n);
  dev->copy(MatrixView<const float>(mine.view()), da.view());
  MpiCommunicator nccl(MPI_COMM_WORLD);
  const bool attached = attach_nccl(nccl, *dev);
  EXPECT_NE(nccl.transport().find(attached ? "device buffers through NCCL" : "NCCL not used"), std::string::npos)
      << nccl.transport();
  const auto host_of = [&](const Matrix<float>& x) {
    std::vector<float> h(static_cast<std::size_t>(x.rows() * x.cols()));
    dev->copy(x.view(), MatrixView<float>(h.data(), x.rows(), x.cols(), x.rows(), MemorySpace::Host));
    return h;
  };
  const auto near = [](const std::vector<float>& x, const std::vector<float>& y, double tol) {
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, double(std::fabs(x[i] - y[i])));
    return worst < tol;
  };
  const DistributedQrResult t = distributed_tsqr(*dev, nccl, da), ts = distributed_tsqr(*dev, comm, da);
  EXPECT_TRUE(near(host_of(t.Q), host_of(ts.Q), 1e-6));
  EXPECT_TRUE(near(host_of(t.R), host_of(ts.R), 1e-5));
  const DistributedQrResult c = distributed_rand_cholesky_qr(*dev, nccl, da), cs = distributed_rand_cholesky_qr(*dev, comm, da);
  EXPECT_TRUE(near(host_of(c.Q), host_of(cs.Q), 1e-6));
  RsvdOptions o;
  o.oversampling = 3;
  o.error_probes = 0;
  const DistributedRsvdResult r = distributed_rsvd(*dev, nccl, da, 5, o), rs = distributed_rsvd(*dev, comm, da, 5, o);
  EXPECT_TRUE(near(host_of(r.S), host_of(rs.S), 1e-5));
  EXPECT_EQ(r.distribution.transport, nccl.transport());
}

// One GPU per rank (scripts/mpirun_gpus.sh; ranks sharing a GPU are tested the same way, their
// sums staged through host memory): the distributed TSQR and RSVD on the ranks' GPUs equal the
// single-GPU tsqr() and rsvd() of the whole matrix on this rank's GPU to rounding, Q's columns and
// R's rows up to sign.
TEST(Distributed, OnTheRanksGpusEqualsOneGpu) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU visible";
  const index_t m = 6000, n = 48, k = 10;
  Split split(m, n, 0.95);  // cond(A) about 11
  auto& [b, comm, a, r0, count, mine] = split;
  auto dev = make_backend(BackendKind::Cuda);
  Matrix<float> whole(*dev, m, n), rows(*dev, count, n);
  dev->copy(MatrixView<const float>(a.view()), whole.view());
  dev->copy(MatrixView<const float>(mine.view()), rows.view());
  MpiCommunicator nccl(MPI_COMM_WORLD);
  attach_nccl(nccl, *dev);
  SCOPED_TRACE(nccl.transport());

  const DistributedQrResult t = distributed_tsqr(*dev, nccl, rows);
  const TsqrResult one = tsqr(*dev, MatrixView<const float>(whole.view()));
  Host q = host_copy(*dev, t.Q), r = host_copy(*dev, t.R), q1 = host_copy(*dev, one.Q), r1 = host_copy(*dev, one.R);
  double worst_r = 0, worst_q = 0;
  for (index_t j = 0; j < n; ++j) {
    const float sign = (r(j, j) < 0) == (r1(j, j) < 0) ? 1.0f : -1.0f;
    for (index_t p = 0; p <= j; ++p) worst_r = std::max(worst_r, double(std::fabs(std::fabs(r(p, j)) - std::fabs(r1(p, j)))));
    for (index_t i = 0; i < count; ++i) worst_q = std::max(worst_q, double(std::fabs(q(i, j) - sign * q1(r0 + i, j))));
  }
  EXPECT_LT(worst_r, 1e-5 * std::fabs(r1(0, 0)));
  EXPECT_LT(worst_q, 2e-5);

  RsvdOptions o;
  o.error_probes = 0;
  const DistributedRsvdResult d = distributed_rsvd(*dev, nccl, rows, k, o);
  const RsvdResult w = rsvd(*dev, MatrixView<const float>(whole.view()), k, o);
  HostSvd ours(*dev, d.U, d.S, d.V), theirs(*dev, w.U, w.S, w.V);
  for (index_t i = 0; i < k; ++i) EXPECT_NEAR(ours.S(i, 0), theirs.S(i, 0), 1e-5 * theirs.S(0, 0));
  EXPECT_LT(approximation_difference(ours, theirs, r0), 1e-5);
}
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int failed = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    failed = RUN_ALL_TESTS();
  }
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
