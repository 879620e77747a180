// Randomized SVD and PCA of sparse matrices: the 3-D 7-point Laplacian on an N x N x N grid
// (N = 243: 14.3M rows, 1.0e8 non-zeros) and, with --mtx, a Matrix Market file (the WordNet 3.0
// synset graph of scripts/wordnet_matrix.py), at k = 64 and 256, p = 10, q = 2, on the CUDA backend
// (or --backend host), the RSVD with each sketch of --sketches (the Gaussian Omega stored, the sparse
// sign Omega never stored). Per case: the median time of --reps calls after one warm-up, the phases of
// the last call (no error estimate inside: error_probes = 0, as the peers), and the exact relative error ||A - U S V^T||_F / ||A||_F (randnla::relative_error;
// for the PCA, of the centred matrix, from the report). The peers run on the same matrices in the
// same call: perf_tests/peer_sparse_rsvd.py (torch.svd_lowrank and torch.pca_lowrank on the GPU,
// scikit-learn's TruncatedSVD on the host).
// Usage: bench_sparse_rsvd [--backend cuda|host] [--laplacian N] [--mtx PATH] [--ranks 64,256]
//        [--reps R] [--no-pca] [--sketches gaussian,sparse-sign]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "io/matrix_io.hpp"
#include "randnla/backends.hpp"
#include "randnla/sparse/sparse_rsvd.hpp"

using namespace randnla;

namespace {

/// The 3-D 7-point Laplacian with Dirichlet boundary on an n^3 grid: row r = i + n j + n^2 l,
/// 6 on the diagonal and -1 for each neighbour, columns ascending (peer_sparse_rsvd.py builds the same).
io::SparseMatrix laplacian_3d(std::int64_t n) {
  io::SparseMatrix a;
  a.rows = a.cols = n * n * n;
  a.source_type = "3-D 7-point Laplacian, " + std::to_string(n) + "^3 grid";
  a.row_ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
  a.col_idx.reserve(static_cast<std::size_t>(7 * a.rows));
  a.values.reserve(static_cast<std::size_t>(7 * a.rows));
  a.row_ptr.push_back(0);
  const std::int64_t steps[3] = {1, n, n * n};
  for (std::int64_t l = 0; l < n; ++l)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t r = i + n * j + n * n * l, at[3] = {i, j, l};
        auto entry = [&](std::int64_t c, float v) {
          a.col_idx.push_back(static_cast<std::int32_t>(c));
          a.values.push_back(v);
        };
        for (int d = 2; d >= 0; --d)
          if (at[d] > 0) entry(r - steps[d], -1.0f);
        entry(r, 6.0f);
        for (int d = 0; d < 3; ++d)
          if (at[d] < n - 1) entry(r + steps[d], -1.0f);
        a.row_ptr.push_back(static_cast<std::int32_t>(a.values.size()));
      }
  return a;
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

std::vector<index_t> parse_ranks(const std::string& list) {
  std::vector<index_t> ranks;
  for (const std::string& item : split_list(list)) {
    ranks.push_back(std::strtoll(item.c_str(), nullptr, 10));
    require(ranks.back() > 0, "--ranks", list, "must be positive integers separated by commas");
  }
  return ranks;
}

void run(Backend& b, const std::string& name, const io::SparseMatrix& host, const std::vector<index_t>& ranks, int reps,
         bool with_pca, const std::vector<SketchOperator>& sketches) {
  const index_t nnz = static_cast<index_t>(host.values.size());
  const CsrArrays a = copy_csr(
      b, CsrView{host.rows, host.cols, nnz, host.row_ptr.data(), host.col_idx.data(), host.values.data(), MemorySpace::Host});
  for (index_t k : ranks) {
    for (SketchOperator sketch : sketches) {
      RsvdOptions o;
      o.power_iterations = 2;
      o.error_probes = 0;  // as the peers, which estimate no error
      o.sketch_operator = sketch;
      RsvdResult r;
      double ms = 0;
      const std::size_t before = b.memory_use().bytes;
      b.reset_peak_memory();  // every call's peak alike: each call's result goes before the next
      try {
        // The previous call's result goes before the next call (at 243^3 and k = 256 both would not fit).
        ms = randnla::median_ms(b, [&] { r = RsvdResult(), r = rsvd(b, a.view, k, o); }, reps, 1);
      } catch (const DeviceError& e) {  // out of device memory on a smaller card: the other rows still run
        std::printf("randnla rsvd  matrix=%s k=%lld sketch=%s: %s\n", name.c_str(), static_cast<long long>(k),
                    to_string(sketch), e.what());
        continue;
      }
      const double block = 4.0 * static_cast<double>(std::max(host.rows, host.cols)) * static_cast<double>(k + o.oversampling);
      const double peak_blocks = static_cast<double>(b.memory_use().peak_bytes - before) / block;
      const double err = relative_error(b, a.view, r.U, r.S, r.V);
      std::printf("randnla rsvd  matrix=%s m=%lld n=%lld nnz=%lld k=%lld l=%lld q=2 sketch=%s ms=%.2f rel_err=%.6e\n"
                  "  sketch: %s\n  phases: %s\n  peak working memory: %.2f GiB, %.2f blocks of max(m, n) x l floats\n",
                  name.c_str(), static_cast<long long>(host.rows), static_cast<long long>(host.cols),
                  static_cast<long long>(nnz), static_cast<long long>(k), static_cast<long long>(k + o.oversampling),
                  to_string(sketch), ms, err, r.report.sketch_kernel.c_str(), r.report.phases.to_string().c_str(),
                  peak_blocks * block / (1 << 30), peak_blocks);
      std::fflush(stdout);
    }
    if (!with_pca) continue;
    PcaOptions po;
    po.power_iterations = 2;
    PcaResult p;
    double pms = 0;
    try {
      pms = randnla::median_ms(b, [&] { p = PcaResult(), p = pca(b, a.view, k, po); }, reps, 1);
    } catch (const DeviceError& e) {
      std::printf("randnla pca   matrix=%s k=%lld: %s\n", name.c_str(), static_cast<long long>(k), e.what());
      continue;
    }
    std::printf("randnla pca   matrix=%s m=%lld n=%lld nnz=%lld k=%lld l=%lld q=2 ms=%.2f rel_err=%.6e (centred)\n  phases: %s\n",
                name.c_str(), static_cast<long long>(host.rows), static_cast<long long>(host.cols),
                static_cast<long long>(nnz), static_cast<long long>(k), static_cast<long long>(k + po.oversampling), pms,
                p.report.relative_error_estimate, p.report.phases.to_string().c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::string backend = "cuda", mtx, ranks = "64,256", sketch_list = "gaussian,sparse-sign";
  std::int64_t grid = 243;
  int reps = 5;
  bool with_pca = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--backend" && has_value) backend = argv[++i];
    else if (arg == "--laplacian" && has_value) grid = std::strtoll(argv[++i], nullptr, 10);
    else if (arg == "--mtx" && has_value) mtx = argv[++i];
    else if (arg == "--ranks" && has_value) ranks = argv[++i];
    else if (arg == "--reps" && has_value) reps = std::atoi(argv[++i]);
    else if (arg == "--no-pca") with_pca = false;
    else if (arg == "--sketches" && has_value) sketch_list = argv[++i];
    else throw InvalidArgument("argument", arg, "is not an option of bench_sparse_rsvd (see its header)");
  }
  require(grid >= 0 && grid <= 1290, "--laplacian", grid, "must lie in 0 .. 1290 (0: none; 7 N^3 < 2^31)");
  require(reps >= 1, "--reps", reps, "must be >= 1");
  if (backend == "cuda" && !cuda_available()) {
    std::printf("bench_sparse_rsvd: no GPU, nothing to measure (--backend host runs on the host)\n");
    return 0;
  }
  auto b = make_backend(parse_enum<BackendKind>(backend, "--backend"));
  std::printf("device: %s; p = 10, q = 2; median of %d calls after one warm-up\n", b->description().c_str(), reps);
  const std::vector<index_t> k = parse_ranks(ranks);
  std::vector<SketchOperator> sketches;
  for (const std::string& s : split_list(sketch_list)) sketches.push_back(parse_enum<SketchOperator>(s, "--sketches"));
  if (!mtx.empty())
    run(*b, mtx.substr(mtx.find_last_of('/') + 1), io::parse_mtx_sparse(io::read_file(mtx), mtx), k, reps, with_pca, sketches);
  if (grid > 0) run(*b, "laplacian3d-" + std::to_string(grid), laplacian_3d(grid), k, reps, with_pca, sketches);
  return 0;
}
