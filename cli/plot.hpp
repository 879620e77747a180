// The tool's PNG outputs, drawn by PLplot (its cairo PNG driver: antialiased fonts, axes with
// ticks and labels, legends). Built where CMake finds PLplot (Debian's libplplot-dev and
// plplot-driver-cairo, scripts/install_deps.sh); without it the commands that draw refuse to run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace randnla {
namespace cli {

/// Throws UnsupportedConfiguration naming `outputs` (e.g. "components.png") when this build has no
/// PLplot or PLplot has no pngcairo driver installed: called before any work, so that a command
/// never writes a partial set or an undrawn picture.
void require_plots(const std::string& outputs);

/// One series of a log_plot: y_i at x = i + 1, drawn as a line or as dots in its colour.
struct Series {
  std::vector<double> y;  ///< positive values (others are left out of a log scale)
  std::uint8_t r, g, b;   ///< colour
  bool dots;              ///< dots instead of a line
  std::string label;      ///< legend text
};
/// PNG bytes of a width x height pixel plot of `series` on a logarithmic y axis, with a title, axis
/// labels, ticks and a legend.
std::string log_plot(const std::vector<Series>& series, const std::string& title, const std::string& x_label,
                     const std::string& y_label, int width, int height);

/// One picture of an image_grid: h x w values, row-major, and its caption.
struct Tile {
  std::vector<float> pixels;
  std::string caption;
};
/// PNG bytes of `tiles` (each h x w) in a grid of `grid_cols` columns, `tile_px` pixels per tile
/// side, each captioned. Signed: each tile on a blue-white-red scale symmetric around 0 (a
/// principal component's sign is arbitrary); otherwise all tiles on one gray scale from the
/// smallest to the largest value.
std::string image_grid(const std::vector<Tile>& tiles, int h, int w, int grid_cols, int tile_px, bool is_signed);

}  // namespace cli
}  // namespace randnla
