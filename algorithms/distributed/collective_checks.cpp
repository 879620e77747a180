#include "distributed.hpp"

namespace randnla {

void require_same_on_every_rank(Communicator& comm, const std::vector<std::pair<std::string, std::int64_t>>& values) {
  std::vector<std::int64_t> mine;
  for (const auto& v : values) mine.push_back(v.second);
  const std::vector<std::int64_t> all = comm.allgather(mine);
  const std::size_t count = values.size();
  for (int r = 1; r < comm.size(); ++r)
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t theirs = all[r * count + i], first = all[i];
      require(theirs == first, values[i].first, "rank " + std::to_string(r) + ": " + std::to_string(theirs),
              "must be the same on every rank (rank 0: " + std::to_string(first) + ")");
    }
}

void require_on_every_rank(Communicator& comm, bool ok, const std::string& name, std::int64_t value,
                           const std::string& requirement) {
  const std::vector<std::int64_t> all = comm.allgather({ok ? 1 : 0, value});
  for (int r = 0; r < comm.size(); ++r)
    require(all[2 * r] == 1, name, "rank " + std::to_string(r) + ": " + std::to_string(all[2 * r + 1]), requirement);
}

std::vector<std::int64_t> require_distributed_qr_arguments(Communicator& comm, MatrixView<const float> a) {
  const index_t m = a.rows(), n = a.cols();
  require_same_on_every_rank(comm, {{"A.cols", n}});
  require_on_every_rank(comm, n >= 1, "A.cols", n, "must be >= 1");
  require_on_every_rank(comm, m >= 1, "A.rows", m, "must be >= 1 on every rank (each rank holds its own rows)");
  const std::vector<std::int64_t> rows = comm.allgather({m});
  std::int64_t total = 0;
  for (std::int64_t r : rows) total += r;
  require(total >= n, "total rows", total, "must be >= A.cols = " + std::to_string(n));
  return rows;
}

}  // namespace randnla
