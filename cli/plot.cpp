#include "plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace randnla {
namespace cli {

Picture image_grid(const float* columns, int h, int w, int count, int grid_cols, int zoom) {
  const int grid_rows = (count + grid_cols - 1) / grid_cols, border = 2;
  Picture p;
  p.width = grid_cols * (w * zoom + border) + border;
  p.height = grid_rows * (h * zoom + border) + border;
  p.pixels.assign(static_cast<std::size_t>(p.width) * p.height, 255);
  for (int c = 0; c < count; ++c) {
    const float* img = columns + static_cast<std::size_t>(c) * h * w;
    float peak = 1e-30f;
    for (int e = 0; e < h * w; ++e) peak = std::max(peak, std::abs(img[e]));
    const int x0 = border + (c % grid_cols) * (w * zoom + border), y0 = border + (c / grid_cols) * (h * zoom + border);
    for (int y = 0; y < h * zoom; ++y)
      for (int x = 0; x < w * zoom; ++x) {
        const float v = img[(y / zoom) * w + x / zoom] / peak;  // in [-1, 1]
        p.pixels[static_cast<std::size_t>(y0 + y) * p.width + x0 + x] = static_cast<std::uint8_t>(std::lround(127.5f + 127.5f * v));
      }
  }
  return p;
}

namespace {
void put(Picture& p, int x, int y, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  if (x < 0 || y < 0 || x >= p.width || y >= p.height) return;
  std::uint8_t* q = &p.pixels[(static_cast<std::size_t>(y) * p.width + x) * 3];
  q[0] = r, q[1] = g, q[2] = b;
}
void line(Picture& p, int x0, int y0, int x1, int y1, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (;;) {  // Bresenham
    put(p, x0, y0, r, g, b);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}
}  // namespace

namespace {
/// A 5 x 7 bitmap font for the plot's labels (digits, '-', and the lower-case letters used).
struct Glyph {
  char c;
  std::uint8_t rows[7];
};
const Glyph kFont[] = {
    {'0', {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}},
    {'1', {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}},
    {'2', {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}},
    {'3', {0x1e, 0x01, 0x01, 0x0e, 0x01, 0x01, 0x1e}},
    {'4', {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}},
    {'5', {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}},
    {'6', {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}},
    {'7', {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}},
    {'9', {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}},
    {'-', {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}},
    {'e', {0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e}},
    {'a', {0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f}},
    {'c', {0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e}},
    {'d', {0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f}},
    {'g', {0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e}},
    {'i', {0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e}},
    {'l', {0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}},
    {'m', {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11}},
    {'n', {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11}},
    {'o', {0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e}},
    {'r', {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10}},
    {'s', {0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e}},
    {'t', {0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06}},
    {'u', {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d}},
    {'v', {0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04}},
    {'x', {0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11}},
    {'z', {0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f}},
};

void text(Picture& p, int x, int y, const char* s, int scale, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  for (; *s; ++s, x += 6 * scale) {
    for (const Glyph& gl : kFont) {
      if (gl.c != *s) continue;
      for (int row = 0; row < 7; ++row)
        for (int col = 0; col < 5; ++col)
          if (gl.rows[row] & (0x10 >> col))
            for (int a = 0; a < scale; ++a)
              for (int c = 0; c < scale; ++c) put(p, x + col * scale + c, y + row * scale + a, r, g, b);
    }
  }
}
}  // namespace

Picture log_plot(const std::vector<Series>& series, const std::string& title, int width, int height) {
  Picture p;
  p.width = width, p.height = height, p.channels = 3;
  p.pixels.assign(static_cast<std::size_t>(width) * height * 3, 255);
  std::size_t n = 1;
  double lo = 1e300, hi = 0;
  for (const auto& s : series) {
    n = std::max(n, s.y.size());
    for (double v : s.y)
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (hi <= 0) return p;
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi));
  const int left = 70, right = 20, top = 40, bottom = 40;
  auto px = [&](double i) { return left + static_cast<int>((width - left - right) * i / std::max<double>(n - 1, 1)); };
  auto py = [&](double v) {
    return top + static_cast<int>((height - top - bottom) * (l1 - std::log10(v)) / std::max(l1 - l0, 1.0));
  };
  for (double d = l0; d <= l1; d += 1) {  // a grid line and a label per decade
    line(p, left, py(std::pow(10.0, d)), width - right, py(std::pow(10.0, d)), 220, 220, 220);
    const std::string label = "1e" + std::to_string(static_cast<int>(d));
    text(p, 8, py(std::pow(10.0, d)) - 7, label.c_str(), 2, 0, 0, 0);
  }
  text(p, left, 10, title.c_str(), 2, 0, 0, 0);
  text(p, width - right - 6 * 2 * 5, height - bottom + 12, "index", 2, 0, 0, 0);
  text(p, left + 8, height - bottom + 12, "1", 2, 0, 0, 0);
  for (std::size_t s = 0; s < series.size(); ++s)
    text(p, width - right - 6 * 2 * 11, top + 10 + 20 * static_cast<int>(s), series[s].label.c_str(), 2, series[s].r,
         series[s].g, series[s].b);
  line(p, left, top, left, height - bottom, 0, 0, 0);
  line(p, left, height - bottom, width - right, height - bottom, 0, 0, 0);
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      if (s.y[i] <= 0) continue;
      const int x = px(static_cast<double>(i)), y = py(s.y[i]);
      if (s.dots) {
        for (int a = -2; a <= 2; ++a)
          for (int b = -2; b <= 2; ++b) put(p, x + a, y + b, s.r, s.g, s.b);
      } else if (i > 0 && s.y[i - 1] > 0) {
        line(p, px(static_cast<double>(i - 1)), py(s.y[i - 1]), x, y, s.r, s.g, s.b);
      }
    }
  return p;
}

}  // namespace cli
}  // namespace randnla
