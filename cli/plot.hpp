// Raster pictures for the tool's PNG outputs: a grid of component images and a line plot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace randnla {
namespace cli {

struct Picture {
  int width = 0, height = 0, channels = 1;
  std::vector<std::uint8_t> pixels;  // row-major
};

/// count images of h x w (column j of `columns`, ld = h*w, row-major pixels) in a grid of
/// `grid_cols` columns, each scaled symmetrically around mid-gray and enlarged `zoom` times.
Picture image_grid(const float* columns, int h, int w, int count, int grid_cols, int zoom);

/// Log-scale plot of positive series (x = index from 1) on white, each series in its colour,
/// with decade labels, a title and a legend.
struct Series {
  std::vector<double> y;
  std::uint8_t r, g, b;
  bool dots;          ///< dots instead of a line
  std::string label;  ///< legend text: digits, '-' and lower-case letters
};
Picture log_plot(const std::vector<Series>& series, const std::string& title, int width, int height);

}  // namespace cli
}  // namespace randnla
