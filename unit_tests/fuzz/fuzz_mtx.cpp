// libFuzzer target: the .mtx parsers (dense, and CSR for coordinate files) must accept or reject
// any bytes with randnla::Error only.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/matrix_io.hpp"
#include "randnla/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    randnla::io::parse_mtx(bytes, "fuzz");
  } catch (const randnla::Error&) {
  }
  try {
    if (randnla::io::is_mtx_coordinate(bytes)) randnla::io::parse_mtx_sparse(bytes, "fuzz");
  } catch (const randnla::Error&) {
  }
  return 0;
}
