#include "mpi_communicator.hpp"

#include <climits>

namespace randnla {
namespace {

/// MPI's error as a DeviceError naming the call (MPI's default handler aborts instead: the
/// constructor installs MPI_ERRORS_RETURN on the communicator).
void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw DeviceError(std::string(call) + ": " + std::string(text, static_cast<std::size_t>(length)));
}

/// MPI counts are int: larger messages go in pieces of at most INT_MAX elements.
template <class F>
void in_pieces(std::size_t n, F&& f) {
  for (std::size_t at = 0; at < n || at == 0; at += INT_MAX) {
    f(at, static_cast<int>(std::min<std::size_t>(n - at, INT_MAX)));
    if (n == 0) break;
  }
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

std::string MpiCommunicator::host_transport() const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string v(version, static_cast<std::size_t>(length));
  v = v.substr(0, v.find_first_of(",\n"));
  return "MPI (" + v + ")";
}

void MpiCommunicator::sum(float* x, std::size_t n) {
  in_pieces(n, [&](std::size_t at, int count) {
    check(MPI_Allreduce(MPI_IN_PLACE, x + at, count, MPI_FLOAT, MPI_SUM, comm_), "MPI_Allreduce");
  });
}

void MpiCommunicator::sum(double* x, std::size_t n) {
  in_pieces(n, [&](std::size_t at, int count) {
    check(MPI_Allreduce(MPI_IN_PLACE, x + at, count, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
  });
}

void MpiCommunicator::broadcast(float* x, std::size_t n, int root) {
  in_pieces(n, [&](std::size_t at, int count) { check(MPI_Bcast(x + at, count, MPI_FLOAT, root, comm_), "MPI_Bcast"); });
}

void MpiCommunicator::allgather(const std::int64_t* mine, std::size_t n, std::int64_t* all) {
  check(MPI_Allgather(mine, static_cast<int>(n), MPI_INT64_T, all, static_cast<int>(n), MPI_INT64_T, comm_),
        "MPI_Allgather");
}

}  // namespace randnla
