// libFuzzer target: the scipy.sparse .npz reader (a zip archive of .npy members) must accept or reject any bytes with randnla::Error only.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/matrix_io.hpp"
#include "randnla/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    randnla::io::parse_npz_sparse(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const randnla::Error&) {
  }
  return 0;
}
