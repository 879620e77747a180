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

}  // namespace randnla
