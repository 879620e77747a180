#include "plot.hpp"

#include "randnla/error.hpp"

#ifdef RANDNLA_HAVE_PLPLOT
#include <plplot.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include <unistd.h>
#endif

namespace randnla {
namespace cli {

#ifndef RANDNLA_HAVE_PLPLOT

void require_plots(const std::string& outputs) {
  throw UnsupportedConfiguration("writing " + outputs + " needs PLplot, which this build of randnla lacks: install "
                                 "libplplot-dev and plplot-driver-cairo (scripts/install_deps.sh) and reconfigure");
}
std::string log_plot(const std::vector<Series>&, const std::string&, const std::string&, const std::string&, int, int) {
  require_plots("a plot");
  return {};
}
std::string image_grid(const std::vector<Tile>&, int, int, int, int, bool) {
  require_plots("an image grid");
  return {};
}

#else

namespace {

constexpr const char* kDevice = "pngcairo";

bool device_installed() {
  int count = 256;  // in: room for this many devices (PLplot keeps one for its end mark); out: how many
  std::vector<const char*> menu(static_cast<std::size_t>(count)), names(menu.size());
  const char** m = menu.data();
  const char** n = names.data();
  plgDevs(&m, &n, &count);
  for (int i = 0; i < count; ++i)
    if (std::strcmp(n[i], kDevice) == 0) return true;
  return false;
}

/// One PLplot stream drawing a width x height PNG into a temporary file (PLplot opens and closes
/// the file itself): begun by the constructor, ended and read back by png().
class PngStream {
 public:
  PngStream(int width, int height) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/randnla-plot-XXXXXX";
    const int fd = mkstemp(path_.data());
    if (fd < 0) throw Error("randnla: cannot create a temporary file for a plot in " + path_);
    close(fd);
    PLINT stream = 0;
    plmkstrm(&stream);
    plsdev(kDevice);
    plsfnam(path_.c_str());
    const std::string geometry = std::to_string(width) + "x" + std::to_string(height);
    plsetopt("geometry", geometry.c_str());
    plscolbg(255, 255, 255);
    plinit();
    plscol0(1, 0, 0, 0);  // axes and text in black
    plcol0(1);
  }
  ~PngStream() {
    if (!ended_) plend1();
    std::remove(path_.c_str());
  }
  PngStream(const PngStream&) = delete;
  PngStream& operator=(const PngStream&) = delete;

  std::string png() {
    plend1();  // the driver writes the page here
    ended_ = true;
    std::ifstream in(path_, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < 8 || bytes.compare(1, 3, "PNG") != 0) throw Error("randnla: PLplot wrote no PNG to " + path_);
    return bytes;
  }

 private:
  std::string path_;
  bool ended_ = false;
};

}  // namespace

void require_plots(const std::string& outputs) {
  if (!device_installed())
    throw UnsupportedConfiguration("writing " + outputs + " needs PLplot's " + kDevice +
                                   " driver, which is not installed: install plplot-driver-cairo");
}

std::string log_plot(const std::vector<Series>& series, const std::string& title, const std::string& x_label,
                     const std::string& y_label, int width, int height) {
  require_plots("a plot");
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  std::size_t points = 1;
  for (const Series& s : series) {
    points = std::max(points, s.y.size());
    for (double v : s.y)
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!(lo <= hi)) throw InvalidArgument("series", "of no positive value", "cannot be drawn on a log scale");
  PngStream out(width, height);
  plschr(0, 1.1);
  // Whole decades around the data (a decade more where it spans less than one).
  const double top = std::ceil(std::log10(hi)), bottom = std::min(std::floor(std::log10(lo)), top - 1);
  plenv(0.5, static_cast<double>(points) + 0.5, bottom, top, 0, 20);  // axis 20: log y, labelled decades
  pllab(x_label.c_str(), y_label.c_str(), title.c_str());
  std::vector<PLINT> options, colours, symbol_numbers, line_styles;
  std::vector<PLFLT> line_widths, symbol_scales;
  std::vector<const char*> labels, symbols;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const PLINT colour = static_cast<PLINT>(2 + k);
    plscol0(colour, s.r, s.g, s.b);
    plcol0(colour);
    std::vector<PLFLT> x, y;
    for (std::size_t i = 0; i < s.y.size(); ++i)
      if (s.y[i] > 0) x.push_back(static_cast<double>(i + 1)), y.push_back(std::log10(s.y[i]));
    if (s.dots)
      plstring(static_cast<PLINT>(x.size()), x.data(), y.data(), "#(840)");  // a circle
    else
      plline(static_cast<PLINT>(x.size()), x.data(), y.data());
    options.push_back(s.dots ? PL_LEGEND_SYMBOL : PL_LEGEND_LINE);
    colours.push_back(colour), symbol_numbers.push_back(1), line_styles.push_back(1);
    line_widths.push_back(1.5), symbol_scales.push_back(1.0);
    labels.push_back(s.label.c_str()), symbols.push_back("#(840)");
  }
  plcol0(1);
  PLFLT legend_w = 0, legend_h = 0;
  pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_TOP | PL_POSITION_RIGHT |
           PL_POSITION_INSIDE, 0.02, 0.02, 0.08, 0, 1, 1, 0, 0, static_cast<PLINT>(series.size()), options.data(), 1.0,
           1.0, 2.0, 0.0, colours.data(), labels.data(), nullptr, nullptr, nullptr, nullptr, colours.data(),
           line_styles.data(), line_widths.data(), colours.data(), symbol_scales.data(), symbol_numbers.data(),
           symbols.data());
  return out.png();
}

std::string image_grid(const std::vector<Tile>& tiles, int h, int w, int grid_cols, int tile_px, bool is_signed) {
  require_plots("an image grid");
  const int count = static_cast<int>(tiles.size()), grid_rows = (count + grid_cols - 1) / grid_cols;
  float lo = HUGE_VALF, hi = -HUGE_VALF;
  for (const Tile& t : tiles)
    for (float v : t.pixels) lo = std::min(lo, v), hi = std::max(hi, v);
  PngStream out(grid_cols * tile_px, grid_rows * tile_px);
  if (is_signed) {  // blue (negative) - white (0) - red (positive), in RGB
    const PLFLT at[] = {0, 0.5, 1}, red[] = {0.1, 1, 0.75}, green[] = {0.25, 1, 0.1}, blue[] = {0.75, 1, 0.1};
    plscmap1l(1, 3, at, red, green, blue, nullptr);
  } else {
    plscmap1l(1, 2, std::vector<PLFLT>{0, 1}.data(), std::vector<PLFLT>{0, 1}.data(), std::vector<PLFLT>{0, 1}.data(),
              std::vector<PLFLT>{0, 1}.data(), nullptr);
  }
  plssub(grid_cols, grid_rows);
  plschr(0, 1.6);
  std::vector<PLFLT> column(static_cast<std::size_t>(w * h));
  std::vector<PLFLT*> columns(static_cast<std::size_t>(w));
  for (const Tile& t : tiles) {
    pladv(0);
    plvpor(0.04, 0.96, 0.02, 0.84);
    plwind(0, w, 0, h);
    float peak = 1e-30f;
    for (float v : t.pixels) peak = std::max(peak, std::abs(v));
    // plimage takes columns bottom to top: image row y is plot row h - 1 - y.
    for (int x = 0; x < w; ++x) {
      columns[static_cast<std::size_t>(x)] = column.data() + static_cast<std::size_t>(x) * h;
      for (int y = 0; y < h; ++y) column[static_cast<std::size_t>(x) * h + (h - 1 - y)] = t.pixels[static_cast<std::size_t>(y) * w + x];
    }
    const double z0 = is_signed ? -peak : lo, z1 = is_signed ? peak : (hi > lo ? hi : lo + 1);
    plimage(columns.data(), w, h, 0, w, 0, h, z0, z1, 0, w, 0, h);
    plcol0(1);
    plbox("bc", 0, 0, "bc", 0, 0);
    plmtex("t", 0.6, 0.5, 0.5, t.caption.c_str());
  }
  return out.png();
}

#endif

}  // namespace cli
}  // namespace randnla
