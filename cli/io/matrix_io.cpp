#include "matrix_io.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "randnla/error.hpp"

namespace randnla {
namespace io {
namespace {

[[noreturn]] void bad(const std::string& name, const std::string& problem) {
  throw InvalidArgument("file", "'" + name + "'", problem);
}

std::int64_t checked_elements(std::int64_t rows, std::int64_t cols, const std::string& name) {
  if (rows < 0 || cols < 0) bad(name, "negative dimension");
  if (rows > kMaxElements || cols > kMaxElements) bad(name, "dimension too large");
  if (cols != 0 && rows > kMaxElements / cols) bad(name, "matrix too large (more than 2^32 elements)");
  return rows * cols;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- .npy ---------------------------------------------------------------------------------

std::string npy_field(const std::string& header, const std::string& key, const std::string& name) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) bad(name, "npy header has no '" + key + "'");
  auto v = header.find(':', k);
  if (v == std::string::npos) bad(name, "npy header is malformed");
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  if (v >= header.size()) bad(name, "npy header is malformed");
  if (header[v] == '\'') {
    const auto e = header.find('\'', v + 1);
    if (e == std::string::npos) bad(name, "npy header is malformed");
    return header.substr(v + 1, e - v - 1);
  }
  if (header[v] == '(') {
    const auto e = header.find(')', v);
    if (e == std::string::npos) bad(name, "npy header is malformed");
    return header.substr(v + 1, e - v - 1);
  }
  auto e = header.find_first_of(",}", v);
  if (e == std::string::npos) bad(name, "npy header is malformed");
  return header.substr(v, e - v);
}

std::vector<std::int64_t> npy_shape(const std::string& text, const std::string& name) {
  std::vector<std::int64_t> dims;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), [](unsigned char c) { return std::isspace(c); }), item.end());
    if (item.empty()) continue;
    if (item.size() > 12 || !std::all_of(item.begin(), item.end(), [](unsigned char c) { return std::isdigit(c); }))
      bad(name, "npy shape '" + text + "' is not a tuple of sizes");
    dims.push_back(std::stoll(item));
  }
  return dims;
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

/// The size of `path`'s contents: a gzip file's declared uncompressed size (its last 4 bytes, the
/// size mod 2^32), else the file's size; 0 where unknown.
std::size_t expected_size(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  unsigned char magic[2] = {0, 0}, tail[4] = {0, 0, 0, 0};
  const bool gzip = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::size_t size = 0;
  if (std::fseek(f, gzip ? -4 : 0, SEEK_END) == 0) {
    if (gzip && std::fread(tail, 1, 4, f) == 4)
      size = tail[0] | (std::size_t{tail[1]} << 8) | (std::size_t{tail[2]} << 16) | (std::size_t{tail[3]} << 24);
    else if (!gzip)
      size = static_cast<std::size_t>(std::max(0L, std::ftell(f)));
  }
  std::fclose(f);
  return size;
}

namespace {

std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MiB", bytes / (1 << 20));
  return b;
}

/// The machine's physical memory in bytes (0 where unknown).
double physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

}  // namespace

std::string read_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) bad(path, std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) bad(path, "is a directory, not a matrix file");
  if (!S_ISREG(st.st_mode))
    bad(path, std::string("is not a regular file (") +
                  (S_ISFIFO(st.st_mode) ? "a pipe" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket" : "special") +
                  "): give a file whose size is known");
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files unchanged
  if (!f) bad(path, std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(f, 1 << 20);
  const bool compressed = gzdirect(f) == 0;
  // A gzip file's trailer is not trusted for its size: deflate expands at most 1032:1, so that
  // bounds what a file of this size can hold; the machine's memory bounds it too.
  const double file_bytes = static_cast<double>(st.st_size);
  const double bound = compressed ? 1032.0 * file_bytes + 65536.0 : file_bytes;
  const double memory = physical_memory();
  const std::size_t declared = expected_size(path);
  const double wanted = compressed ? std::min(static_cast<double>(declared), bound) : file_bytes;
  if (memory > 0 && wanted > memory) {
    gzclose(f);
    bad(path, "needs " + mib(wanted) + " to read, more than this machine's memory (" + mib(memory) + ")");
  }
  // Read straight into the result, sized once from the (bounded) declared size; 16 MiB more at a
  // time where the file holds more than it declared, never past the bound.
  constexpr std::size_t kChunk = std::size_t(1) << 24, kMostPerRead = std::size_t(1) << 30;
  std::string out(static_cast<std::size_t>(wanted) + 1, '\0');
  std::size_t used = 0;
  int n;
  do {
    if (used == out.size()) {
      if (static_cast<double>(used) > bound || (memory > 0 && static_cast<double>(used + kChunk) > memory)) {
        gzclose(f);
        bad(path, compressed ? "decompresses to more than a valid gzip file of its size can hold (corrupt)"
                             : "holds more than its size announced");
      }
      out.resize(used + kChunk);
    }
    n = gzread(f, &out[used], static_cast<unsigned>(std::min(out.size() - used, kMostPerRead)));
    if (n > 0) used += static_cast<std::size_t>(n);
  } while (n > 0);
  out.resize(used);
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string text = msg ? msg : "unknown";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_BUF_ERROR)) bad(path, "read error: " + text);
  return out;
}

DenseMatrix parse_npy(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) bad(name, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len, offset;
  if (major == 1) {
    header_len = load<std::uint16_t>(bytes.data() + 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad(name, "truncated .npy header");
    header_len = load<std::uint32_t>(bytes.data() + 8);
    offset = 12;
  } else {
    bad(name, "unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < offset + header_len) bad(name, "truncated .npy header");
  const std::string header = bytes.substr(offset, header_len);
  const std::string descr = npy_field(header, "descr", name);
  const std::string fortran = npy_field(header, "fortran_order", name);
  const auto dims = npy_shape(npy_field(header, "shape", name), name);
  if (dims.empty() || dims.size() > 2) bad(name, "expected a 1-D or 2-D array, got " + std::to_string(dims.size()) + "-D");
  std::size_t item;
  if (descr == "<f4") item = 4;
  else if (descr == "<f8") item = 8;
  else bad(name, "unsupported dtype '" + descr + "' (float32 or float64, little-endian)");
  const bool f_order = fortran.find("True") != std::string::npos;
  DenseMatrix m;
  m.rows = dims[0];
  m.cols = dims.size() == 2 ? dims[1] : 1;
  const std::int64_t count = checked_elements(m.rows, m.cols, name);
  const std::size_t data_at = offset + header_len;
  if ((bytes.size() - data_at) / item < static_cast<std::size_t>(count))
    bad(name, "truncated data: " + std::to_string(count) + " elements expected (shape " + std::to_string(m.rows) + " x " +
                  std::to_string(m.cols) + ", " + descr + ": " + std::to_string(static_cast<double>(count) * item / (1 << 20)) +
                  " MiB; the file holds " + std::to_string(bytes.size() - data_at) + " bytes of data)");
  m.data.resize(static_cast<std::size_t>(count));
  const char* p = bytes.data() + data_at;
  for (std::int64_t e = 0; e < count; ++e) {
    // Source element e in file order; (i, j) in the matrix.
    const std::int64_t i = f_order ? e % std::max<std::int64_t>(m.rows, 1) : e / std::max<std::int64_t>(m.cols, 1);
    const std::int64_t j = f_order ? e / std::max<std::int64_t>(m.rows, 1) : e % std::max<std::int64_t>(m.cols, 1);
    const float v = item == 4 ? load<float>(p + e * 4) : static_cast<float>(load<double>(p + e * 8));
    m.data[static_cast<std::size_t>(i + j * m.rows)] = v;
  }
  m.source_type = std::string(item == 4 ? "float32" : "float64") + (f_order ? " (Fortran order)" : " (C order)");
  return m;
}

DenseMatrix parse_mtx(const std::string& bytes, const std::string& name) {
  std::istringstream in(bytes);
  std::string line;
  if (!std::getline(in, line)) bad(name, "empty file");
  std::istringstream banner(line);
  std::string tag, object, format, field, symmetry;
  banner >> tag >> object >> format >> field >> symmetry;
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  if (tag != "%%MatrixMarket" || lower(object) != "matrix") bad(name, "not a Matrix Market matrix (bad banner)");
  format = lower(format), field = lower(field), symmetry = lower(symmetry);
  if (format != "array" && format != "coordinate") bad(name, "unknown Matrix Market format '" + format + "'");
  if (field != "real" && field != "integer" && field != "double" && field != "pattern")
    bad(name, "unsupported Matrix Market field '" + field + "' (real, integer, pattern)");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    bad(name, "unsupported Matrix Market symmetry '" + symmetry + "'");
  if (format == "array" && field == "pattern") bad(name, "pattern is only valid for coordinate format");
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  std::istringstream size_line(line);
  std::int64_t rows = -1, cols = -1, nnz = -1;
  size_line >> rows >> cols;
  if (format == "coordinate") size_line >> nnz;
  if (size_line.fail() || rows < 0 || cols < 0 || (format == "coordinate" && nnz < 0)) bad(name, "bad size line '" + line + "'");
  DenseMatrix m;
  m.rows = rows;
  m.cols = cols;
  const std::int64_t count = checked_elements(rows, cols, name);
  // Every entry takes at least two bytes ("0\n"): reject impossible sizes before allocating.
  const std::int64_t entries = format == "array" ? count : nnz;
  if (entries > static_cast<std::int64_t>(bytes.size()) / 2) bad(name, "truncated data: " + std::to_string(entries) + " entries announced");
  m.data.assign(static_cast<std::size_t>(count), 0.0f);
  const bool sym = symmetry != "general";
  const float mirror = symmetry == "skew-symmetric" ? -1.0f : 1.0f;
  const bool skew = symmetry == "skew-symmetric";
  if (sym && rows != cols) bad(name, "a symmetric matrix must be square");
  // Coordinate entries that repeat a position are summed (the format's convention); an integer
  // field holds integers; a pattern field holds no values.
  auto add = [&](std::int64_t i, std::int64_t j, double v) {
    m.data[static_cast<std::size_t>(i + j * rows)] += static_cast<float>(v);
    if (sym && i != j) m.data[static_cast<std::size_t>(j + i * rows)] += mirror * static_cast<float>(v);
  };
  auto value = [&](const std::string& token, const std::string& where) {
    char* end = nullptr;
    errno = 0;
    const double v = field == "integer" ? static_cast<double>(std::strtoll(token.c_str(), &end, 10)) : std::strtod(token.c_str(), &end);
    if (token.empty() || *end != '\0' || errno == ERANGE)
      bad(name, where + ": '" + token + "' is not " + (field == "integer" ? "an integer" : "a real number"));
    return v;
  };
  std::int64_t read = 0;
  std::string token;
  if (format == "array") {
    const std::int64_t expected = !sym ? count : skew ? rows * (rows - 1) / 2 : rows * (rows + 1) / 2;
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = !sym ? 0 : skew ? j + 1 : j; i < rows; ++i) {
        if (!(in >> token)) bad(name, "truncated data: " + std::to_string(read) + " of " + std::to_string(expected) + " array entries");
        add(i, j, value(token, "array entry " + std::to_string(read + 1)));
        ++read;
      }
  } else {
    std::int64_t e = 0;
    while (e < nnz && std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '%') continue;
      std::istringstream entry(line);
      std::string ti, tj, tv, extra;
      entry >> ti >> tj;
      const bool has_value = static_cast<bool>(entry >> tv);
      const std::string where = "entry " + std::to_string(e + 1) + " of " + std::to_string(nnz);
      if (field == "pattern" ? has_value : !has_value || (entry >> extra))
        bad(name, where + ": '" + line + "' must hold " + (field == "pattern" ? "a row and a column only" : "a row, a column and one value"));
      const auto i = std::strtoll(ti.c_str(), nullptr, 10), j = std::strtoll(tj.c_str(), nullptr, 10);
      if (ti.find_first_not_of("0123456789") != std::string::npos || tj.find_first_not_of("0123456789") != std::string::npos ||
          i < 1 || i > rows || j < 1 || j > cols)
        bad(name, where + " index out of range");
      if (sym && (skew ? i <= j : i < j))
        bad(name, where + " lies above the diagonal (or on it, skew-symmetric): a " + symmetry + " file stores the lower triangle only");
      add(i - 1, j - 1, field == "pattern" ? 1.0 : value(tv, where));
      ++e;
    }
    if (e < nnz) bad(name, "truncated data: entry " + std::to_string(e + 1) + " of " + std::to_string(nnz) + " missing");
  }
  while (in >> token)
    if (token[0] != '%') bad(name, "holds more entries than its size line announces");
  m.source_type = "Matrix Market " + format + " " + field + " " + symmetry;
  return m;
}

namespace {
/// m.data (column-major) := the row-major elements value(e), transposed in blocks of rows that stay in cache.
template <class Value>
void transpose_into(DenseMatrix& m, const Value& value) {
  constexpr std::int64_t kRowBlock = 64;
  for (std::int64_t i0 = 0; i0 < m.rows; i0 += kRowBlock)
    for (std::int64_t j = 0; j < m.cols; ++j)
      for (std::int64_t i = i0; i < std::min(i0 + kRowBlock, m.rows); ++i)
        m.data[static_cast<std::size_t>(i + j * m.rows)] = value(i * m.cols + j);
}
}  // namespace

DenseMatrix parse_idx(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0) bad(name, "not an IDX file (bad magic)");
  const unsigned type = static_cast<unsigned char>(bytes[2]);
  const unsigned ndim = static_cast<unsigned char>(bytes[3]);
  std::size_t item;
  switch (type) {
    case 0x08: case 0x09: item = 1; break;
    case 0x0B: item = 2; break;
    case 0x0C: case 0x0D: item = 4; break;
    case 0x0E: item = 8; break;
    default: bad(name, "unknown IDX element type 0x" + [&] { char b[8]; std::snprintf(b, sizeof b, "%02x", type); return std::string(b); }());
  }
  if (ndim == 0) bad(name, "IDX file with no dimensions");
  if (bytes.size() < 4 + 4 * static_cast<std::size_t>(ndim)) bad(name, "truncated IDX header");
  std::vector<std::int64_t> dims(ndim);
  for (unsigned d = 0; d < ndim; ++d) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + 4 + 4 * d);
    dims[d] = (std::int64_t(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
  }
  DenseMatrix m;
  m.rows = dims[0];
  m.cols = 1;
  for (unsigned d = 1; d < ndim; ++d) m.cols = checked_elements(m.cols, dims[d], name);
  const std::int64_t count = checked_elements(m.rows, m.cols, name);
  const std::size_t data_at = 4 + 4 * static_cast<std::size_t>(ndim);
  if ((bytes.size() - data_at) / item < static_cast<std::size_t>(count))
    bad(name, "truncated data: " + std::to_string(count) + " elements expected");
  m.data.resize(static_cast<std::size_t>(count));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + data_at);
  const auto big_endian = [&](std::int64_t e) {
    const unsigned char* q = p + e * static_cast<std::int64_t>(item);
    std::uint64_t be = 0;
    for (std::size_t b = 0; b < item; ++b) be = (be << 8) | q[b];
    return be;
  };
  switch (type) {  // the element type decided once, outside the loops
    case 0x08: transpose_into(m, [&](std::int64_t e) { return static_cast<float>(p[e]); }); break;
    case 0x09: transpose_into(m, [&](std::int64_t e) { return static_cast<float>(static_cast<std::int8_t>(p[e])); }); break;
    case 0x0B: transpose_into(m, [&](std::int64_t e) { return static_cast<float>(static_cast<std::int16_t>(big_endian(e))); }); break;
    case 0x0C: transpose_into(m, [&](std::int64_t e) { return static_cast<float>(static_cast<std::int32_t>(big_endian(e))); }); break;
    case 0x0D:
      transpose_into(m, [&](std::int64_t e) {
        const std::uint32_t u = static_cast<std::uint32_t>(big_endian(e));
        float f;
        std::memcpy(&f, &u, 4);
        return f;
      });
      break;
    default:
      transpose_into(m, [&](std::int64_t e) {
        const std::uint64_t u = big_endian(e);
        double d;
        std::memcpy(&d, &u, 8);
        return static_cast<float>(d);
      });
  }
  m.source_type = "IDX type 0x" + [&] { char b[8]; std::snprintf(b, sizeof b, "%02x", type); return std::string(b); }();
  return m;
}

DenseMatrix read_matrix(const std::string& path) {
  std::string base = path;
  if (ends_with(base, ".gz")) base.resize(base.size() - 3);
  const std::string bytes = read_file(path);
  if (ends_with(base, ".npy")) return parse_npy(bytes, path);
  if (ends_with(base, ".mtx")) return parse_mtx(bytes, path);
  if (ends_with(base, ".idx") || ends_with(base, "-ubyte") || base.find("idx") != std::string::npos)
    return parse_idx(bytes, path);
  bad(path, "unknown format (use .npy, .mtx or .idx / -ubyte, optionally .gz)");
}

namespace {

/// .npy version 1.0 bytes of `count` float32 elements in the order `shape` (e.g. "(3, 4)") and
/// fortran_order say.
std::string npy_with_shape(const float* data, std::int64_t count, const std::string& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  out.append(reinterpret_cast<const char*>(&len), 2);
  out += header;
  out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(count) * sizeof(float));
  return out;
}

}  // namespace

std::string npy_bytes(const float* data, std::int64_t rows, std::int64_t cols) {
  return npy_with_shape(data, rows * cols, "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
}

std::string npy_vector_bytes(const float* data, std::int64_t size) {
  return npy_with_shape(data, size, "(" + std::to_string(size) + ",)");
}

void write_file_atomically(const std::string& path, const std::string& bytes, bool force) {
  if (!force && access(path.c_str(), F_OK) == 0)
    throw InvalidArgument("output", "'" + path + "'", "exists; pass --force to replace it");
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw InvalidArgument("output", "'" + path + "'", std::string("cannot be written: ") + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InvalidArgument("output", "'" + path + "'", std::string("write failed: ") + std::strerror(errno));
  }
}

}  // namespace io
}  // namespace randnla
