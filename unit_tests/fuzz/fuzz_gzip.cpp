// libFuzzer target: gzip input (corrupt, truncated, concatenated, bomb-like) must decompress or be
// refused with randnla::Error, never past the limit; what it decompresses to goes through every
// reader, as read_matrix would take it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/matrix_io.hpp"
#include "randnla/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kLimit = std::size_t(1) << 26;  // far below the run's -rss_limit_mb
  std::string bytes;
  try {
    bytes = randnla::io::gunzip(std::string(reinterpret_cast<const char*>(data), size), "fuzz", kLimit);
  } catch (const randnla::Error&) {
    return 0;
  }
  if (bytes.size() > kLimit) __builtin_trap();  // the limit not kept
  for (auto parse : {+[](const std::string& b) { randnla::io::parse_npy(b, "fuzz", 5); },
                     +[](const std::string& b) { randnla::io::parse_mtx(b, "fuzz"); },
                     +[](const std::string& b) { randnla::io::parse_idx(b, "fuzz"); }}) {
    try {
      parse(bytes);
    } catch (const randnla::Error&) {
    }
  }
  return 0;
}
