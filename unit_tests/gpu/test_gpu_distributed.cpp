// GPU test of the distributed algorithms on device data (one rank).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/distributed/distributed.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
/// One rank: the collectives are the identity (the sums still stage device buffers through host memory).
class SingleRank final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string host_transport() const override { return "one rank"; }

 protected:
  void sum(float*, std::size_t) override {}
  void sum(double*, std::size_t) override {}
  void broadcast(float*, std::size_t, int) override {}
  void allgather(const std::int64_t* mine, std::size_t n, std::int64_t* all) override { std::copy(mine, mine + n, all); }
};

// The distributed RSVD, TSQR, CholeskyQR2 and preconditioned CholeskyQR on device data (one rank: the device buffers take the host-staged
// path of every collective) equal the one-process runs on the device.
TEST(Gpu, DistributedAlgorithmsOnDeviceData) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  SingleRank comm;
  std::vector<double> sigma(200);
  for (std::size_t i = 0; i < sigma.size(); ++i) sigma[i] = std::pow(0.97, static_cast<double>(i));
  const auto a = test::matrix_with_spectrum(3000, 400, sigma, 5);
  const Matrix<float> da = test::to_backend(*dev, a);
  RsvdOptions o;
  o.error_probes = 0;
  const DistributedRsvdResult d = distributed_rsvd(*dev, comm, da, 32, o);
  const RsvdResult whole = rsvd(*dev, da, 32, o);
  const auto ds = test::to_host(*dev, d.S), ws = test::to_host(*dev, whole.S);
  for (index_t i = 0; i < 32; ++i) EXPECT_NEAR(ds(i, 0), ws(i, 0), 1e-5 * ws(0, 0)) << i;
  EXPECT_LT(test::lowrank_relative_error(a.cview(), test::to_host(*dev, d.U).cview(), ds.cview(),
                                         test::to_host(*dev, d.V).cview()),
            1.01 * test::lowrank_relative_error(a.cview(), test::to_host(*dev, whole.U).cview(), ws.cview(),
                                                test::to_host(*dev, whole.V).cview()));
  const MatrixView<const float> panel = MatrixView<const float>(da.view()).block(0, 0, 3000, 64);
  const DistributedQrResult t = distributed_tsqr(*dev, comm, panel);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, t.Q).cview()), 1e-5);
  // The CholeskyQR variants: the Q of the one-process orthonormaliser, to rounding.
  const std::pair<Orthonormalizer, DistributedQrResult> variants[] = {
      {Orthonormalizer::RandCholeskyQR, distributed_rand_cholesky_qr(*dev, comm, panel)},
      {Orthonormalizer::CholeskyQR2, distributed_cholesky_qr2(*dev, comm, panel)}};
  for (const auto& [method, c] : variants) {
    SCOPED_TRACE(to_string(method));
    Matrix<float> one(*dev, 3000, 64);
    dev->copy(panel, one.view());
    orthonormalize(*dev, one.view(), method);
    const auto cq = test::to_host(*dev, c.Q), oq = test::to_host(*dev, one);
    EXPECT_LT(test::orthogonality_loss(cq.cview()), 1e-5);
    double worst = 0;
    for (std::size_t i = 0; i < cq.data.size(); ++i) worst = std::max(worst, double(std::fabs(cq.data[i] - oq.data[i])));
    EXPECT_LT(worst, 1e-5);
  }
}

}  // namespace
}  // namespace randnla
