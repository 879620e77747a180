// NCCL between the ranks' GPUs (nccl_transport.hpp).
#include "nccl_transport.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <cstring>
#include <vector>

namespace randnla {
namespace {

void check(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) throw DeviceError(std::string(call) + ": " + ncclGetErrorString(r));
}

cudaStream_t stream_of(Backend& b) { return static_cast<cudaStream_t>(b.native_stream()); }

class NcclTransport final : public DeviceTransport {
 public:
  explicit NcclTransport(ncclComm_t comm) : comm_(comm) {}
  ~NcclTransport() override { ncclCommDestroy(comm_); }

  std::string name() const override {
    int v = 0;
    ncclGetVersion(&v);
    return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  }
  void sum(Backend& b, float* x, std::size_t n) override {
    check(ncclAllReduce(x, x, n, ncclFloat32, ncclSum, comm_, stream_of(b)), "ncclAllReduce");
  }
  void sum(Backend& b, double* x, std::size_t n) override {
    check(ncclAllReduce(x, x, n, ncclFloat64, ncclSum, comm_, stream_of(b)), "ncclAllReduce");
  }
  void broadcast(Backend& b, float* x, std::size_t n, int root) override {
    check(ncclBroadcast(x, x, n, ncclFloat32, root, comm_, stream_of(b)), "ncclBroadcast");
  }

 private:
  ncclComm_t comm_;
};

/// Rank 0's NCCL id on every rank, through the host transport (as 64-bit integers).
ncclUniqueId shared_id(Communicator& comm, bool& ok, std::string& why) {
  ncclUniqueId id{};
  constexpr std::size_t words = (sizeof(id) + 7) / 8;
  std::vector<std::int64_t> mine(words, 0);
  if (comm.rank() == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) ok = false, why = std::string("ncclGetUniqueId: ") + ncclGetErrorString(r);
    std::memcpy(mine.data(), &id, sizeof(id));
  }
  const std::vector<std::int64_t> all = comm.allgather(mine);
  std::memcpy(&id, all.data(), sizeof(id));
  return id;
}

/// Whether every rank's `ok` holds, and the first failing rank's reason (by its index in `reasons`).
bool everyone(Communicator& comm, bool ok, const std::vector<std::string>& reasons, int reason, std::string& why) {
  const std::vector<std::int64_t> all = comm.allgather({ok ? 1 : 0, reason});
  for (int r = 0; r < comm.size(); ++r)
    if (all[2 * r] == 0) {
      why = "NCCL not used: rank " + std::to_string(r) + ": " + reasons[static_cast<std::size_t>(all[2 * r + 1])];
      return false;
    }
  return true;
}

}  // namespace

bool attach_nccl(Communicator& comm, Backend& b) {
  // Reasons by index, so that every rank can name another rank's.
  const std::vector<std::string> reasons = {"", "its backend has no device memory", "NCCL failed to start"};
  std::string why;
  const bool device = b.memory_space() == MemorySpace::Device;
  if (!everyone(comm, device, reasons, 1, why)) return comm.attach_device_transport(nullptr, why), false;
  bool ok = true;
  std::string id_error;
  const ncclUniqueId id = shared_id(comm, ok, id_error);
  if (!everyone(comm, ok, reasons, 2, why)) return comm.attach_device_transport(nullptr, why + " (" + id_error + ")"), false;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(b.device());
  ncclComm_t nc = nullptr;
  const ncclResult_t r = ncclCommInitRank(&nc, comm.size(), id, comm.rank());
  cudaSetDevice(previous);
  const std::string error = r == ncclSuccess ? "" : ncclGetErrorString(r);
  if (!everyone(comm, r == ncclSuccess, reasons, 2, why)) {
    if (nc != nullptr) ncclCommDestroy(nc);
    return comm.attach_device_transport(nullptr, why + (error.empty() ? "" : " (" + error + ")")), false;
  }
  comm.attach_device_transport(std::make_shared<NcclTransport>(nc));
  return true;
}

}  // namespace randnla
