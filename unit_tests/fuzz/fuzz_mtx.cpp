// libFuzzer target: the .mtx parser must accept or reject any bytes with randnla::Error only.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/matrix_io.hpp"
#include "randnla/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    randnla::io::parse_mtx(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const randnla::Error&) {
  }
  return 0;
}
