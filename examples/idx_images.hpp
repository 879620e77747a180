// The Fashion-MNIST reader the PCA examples share: an IDX file of unsigned bytes into a host view,
// in a few lines of zlib (which reads plain and gzip-compressed files alike).
#pragma once

#include <Kokkos_Core.hpp>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

using Pixels = Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, Kokkos::HostSpace>;

/// The images of an IDX file of unsigned bytes (magic 0x00000803: count x rows x cols, big-endian
/// extents, then the pixels image after image), one image per row.
inline Pixels read_idx_images(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw std::runtime_error(path + " is a directory");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  unsigned char header[16];
  auto be32 = [&](int at) { return header[at] << 24 | header[at + 1] << 16 | header[at + 2] << 8 | header[at + 3]; };
  if (gzread(f, header, 16) != 16 || be32(0) != 0x803) throw std::runtime_error(path + " is not an IDX file of images");
  Pixels pixels("pixels", be32(4), be32(8) * be32(12));
  const auto bytes = static_cast<unsigned>(pixels.size());
  const bool complete = gzread(f, pixels.data(), bytes) == static_cast<int>(bytes);
  gzclose(f);
  if (!complete) throw std::runtime_error(path + " is shorter than its header says");
  return pixels;
}
