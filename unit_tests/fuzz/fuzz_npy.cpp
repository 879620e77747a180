// libFuzzer target: the .npy parser (1-D to 5-D arrays) must accept or reject any bytes with randnla::Error only.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/matrix_io.hpp"
#include "randnla/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    randnla::io::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz", 5);  // up to 5-D, as tucker reads
  } catch (const randnla::Error&) {
  }
  return 0;
}
