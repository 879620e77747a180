// NCCL as the device transport of the distributed algorithms' Communicator: sums, broadcasts and
// point-to-point transfers of device buffers between the ranks' GPUs, queued on each backend's
// stream, with no copy through host memory. Built where CMake finds CUDA and NCCL (the CUDA
// toolkit ships it); link RandNLA::randnla_nccl.
#pragma once

#include <memory>
#include <string>

#include "randnla/communicator.hpp"

namespace randnla {

/// Sets NCCL up between the GPUs of every rank's `device_backend` (a CUDA backend, one GPU per
/// rank), bootstrapped over `comm`, and attaches it to `comm`; every rank of `comm` calls this
/// together. Where NCCL cannot run (NCCL built out, a host backend on some rank, two ranks on one
/// GPU, an NCCL error on any rank) no rank attaches it: device buffers stay staged through host
/// memory and comm.transport() says why. Returns whether NCCL was attached (the same on every rank).
bool attach_nccl(Communicator& comm, Backend& device_backend);

}  // namespace randnla
