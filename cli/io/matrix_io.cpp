#include "matrix_io.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
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

/// "60 x 40" (a matrix) or "20 x 15 x 10".
std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string t;
  for (std::size_t d = 0; d < dims.size(); ++d) t += (d ? " x " : "") + std::to_string(dims[d]);
  return dims.size() == 1 ? t + " x 1" : t;
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

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

/// A regular file's bytes as they are (st_size of them; more than that is refused).
std::string read_plain(const std::string& path, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) bad(path, std::string("cannot open: ") + std::strerror(errno));
  std::string out(size + 1, '\0');
  const std::size_t got = std::fread(&out[0], 1, out.size(), f);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) bad(path, std::string("read error: ") + std::strerror(errno));
  if (got > size) bad(path, "holds more than its size announced (is it being written?)");
  out.resize(got);
  return out;
}

}  // namespace

std::string gunzip(const std::string& compressed, const std::string& name, std::size_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, inflateEnd);
  // The trailer's size (mod 2^32) is a hint for the first allocation, never trusted past `limit`
  // nor past what deflate's largest ratio (1032:1) lets data of this size hold.
  std::size_t declared = 0;
  for (std::size_t b = 0; b < 4 && compressed.size() >= 4; ++b)
    declared |= std::size_t{static_cast<unsigned char>(compressed[compressed.size() - 4 + b])} << (8 * b);
  // One byte past the limit: reaching it proves the data holds more than `limit`.
  const std::size_t capacity = limit + 1;
  constexpr std::size_t kStep = std::size_t(1) << 24, kMostPerCall = std::size_t(1) << 30;  // zlib counts in uInt
  const double most = 1032.0 * static_cast<double>(compressed.size()) + 65536.0;
  std::string out(std::min({capacity, std::max<std::size_t>(declared, 1 << 16), static_cast<std::size_t>(std::min(most, 1e18))}), '\0');
  std::size_t fed = 0, used = 0;
  for (;;) {
    if (z.avail_in == 0 && fed < compressed.size()) {
      const std::size_t n = std::min(compressed.size() - fed, kMostPerCall);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    if (used == out.size()) {
      if (out.size() == capacity)
        bad(name, "decompresses to more than " + mib(static_cast<double>(limit)) +
                      ", more than a valid file of its size can hold or this machine's memory: refused (corrupt?)");
      out.resize(std::min(capacity, out.size() + std::max(out.size() / 2, kStep)));
    }
    const std::size_t room = std::min(out.size() - used, kMostPerCall);
    z.next_out = reinterpret_cast<Bytef*>(&out[used]);
    z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&z, Z_NO_FLUSH);
    used += room - z.avail_out;
    const bool input_left = z.avail_in > 0 || fed < compressed.size();
    if (rc == Z_STREAM_END) {
      if (!input_left) break;
      const std::size_t at = fed - z.avail_in;
      if (!is_gzip(compressed.substr(at, 2)))
        bad(name, "holds " + std::to_string(compressed.size() - at) + " bytes that are not gzip data after its gzip stream");
      inflateReset(&z);  // another member (concatenated gzip files decompress to their concatenation)
    } else if (rc == Z_MEM_ERROR) {
      throw std::bad_alloc();
    } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR) {
      bad(name, std::string("corrupt gzip data: ") + (z.msg ? z.msg : "invalid stream"));
    } else if (rc == Z_BUF_ERROR && !input_left) {
      bad(name, "truncated gzip data: the stream ends after " + std::to_string(used) + " decompressed bytes without its end");
    }
  }
  out.resize(used);
  return out;
}

std::string read_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) bad(path, std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) bad(path, "is a directory, not a matrix file");
  if (!S_ISREG(st.st_mode))
    bad(path, std::string("is not a regular file (") +
                  (S_ISFIFO(st.st_mode) ? "a pipe" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : S_ISSOCK(st.st_mode) ? "a socket" : "special") +
                  "): give a file whose size is known");
  const double memory = physical_memory();
  const double file_bytes = static_cast<double>(st.st_size);
  if (memory > 0 && file_bytes > memory)
    bad(path, "needs " + mib(file_bytes) + " to read, more than this machine's memory (" + mib(memory) + ")");
  std::string bytes = read_plain(path, static_cast<std::size_t>(st.st_size));
  if (!is_gzip(bytes)) return bytes;
  // Deflate expands at most 1032:1, which bounds what a valid file of this size can hold; the
  // machine's memory bounds it too. The gzip trailer's size is not trusted.
  double limit = 1032.0 * file_bytes + 65536.0;
  if (memory > 0) limit = std::min(limit, memory - file_bytes);
  return gunzip(bytes, path, static_cast<std::size_t>(limit));
}

namespace {

/// A .npy file's header: its dtype, order and shape, and where its data start.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> dims;
  std::size_t data_at = 0;
};

NpyHeader parse_npy_header(const std::string& bytes, const std::string& name) {
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
  NpyHeader h;
  h.descr = npy_field(header, "descr", name);
  h.fortran_order = npy_field(header, "fortran_order", name).find("True") != std::string::npos;
  h.dims = npy_shape(npy_field(header, "shape", name), name);
  h.data_at = offset + header_len;
  return h;
}

/// parse_npy's array with elements of type T (float32 and float64 converted to it).
template <class T>
BasicDenseMatrix<T> parse_npy_as(const std::string& bytes, const std::string& name, int max_dims) {
  const NpyHeader h = parse_npy_header(bytes, name);
  const std::string& descr = h.descr;
  const auto& dims = h.dims;
  if (dims.empty() || static_cast<int>(dims.size()) > max_dims)
    bad(name, "is a " + std::to_string(dims.size()) + "-D array; expected " +
                  (max_dims == 2 ? std::string("a matrix (1-D or 2-D)") : "1-D to " + std::to_string(max_dims) + "-D"));
  std::size_t item;
  if (descr == "<f4") item = 4;
  else if (descr == "<f8") item = 8;
  else bad(name, "unsupported dtype '" + descr + "' (float32 or float64, little-endian)");
  const bool f_order = h.fortran_order;
  BasicDenseMatrix<T> m;
  m.rows = dims[0];
  m.cols = 1;
  for (std::size_t d = 1; d < dims.size(); ++d) m.cols = checked_elements(m.cols, dims[d], name);
  if (dims.size() > 2) m.extents = dims;
  const std::int64_t count = checked_elements(m.rows, m.cols, name);
  const std::size_t data_at = h.data_at;
  if ((bytes.size() - data_at) / item < static_cast<std::size_t>(count))
    bad(name, "truncated data: " + std::to_string(count) + " elements expected (shape " + shape_text(dims) + ", " + descr +
                  ": " + std::to_string(static_cast<double>(count) * item / (1 << 20)) + " MiB; the file holds " +
                  std::to_string(bytes.size() - data_at) + " bytes of data)");
  m.data.resize(static_cast<std::size_t>(count));
  const char* p = bytes.data() + data_at;
  // m.data holds the array first index fastest (a matrix column-major, a tensor as the library
  // keeps it): a Fortran-order file as it is; a C-order file (last index fastest) reordered, its
  // elements visited in file order with their place in m.data kept up to date.
  const std::size_t nd = dims.size();
  std::vector<std::int64_t> stride(nd, 1), index(nd, 0);
  for (std::size_t d = 1; d < nd; ++d) stride[d] = stride[d - 1] * dims[d - 1];
  std::int64_t at = 0;
  for (std::int64_t e = 0; e < count; ++e) {
    const T v = item == 4 ? static_cast<T>(load<float>(p + e * 4)) : static_cast<T>(load<double>(p + e * 8));
    m.data[static_cast<std::size_t>(f_order ? e : at)] = v;
    for (std::size_t d = nd; !f_order && d-- > 0;) {
      at += stride[d];
      if (++index[d] < dims[d]) break;
      at -= stride[d] * dims[d];
      index[d] = 0;
    }
  }
  m.source_type = std::string(item == 4 ? "float32" : "float64") + (f_order ? " (Fortran order)" : " (C order)");
  return m;
}

}  // namespace

DenseMatrix parse_npy(const std::string& bytes, const std::string& name, int max_dims) {
  return parse_npy_as<float>(bytes, name, max_dims);
}

namespace {

// ---- Matrix Market ----------------------------------------------------------------------

/// A Matrix Market file's banner and size line (https://math.nist.gov/MatrixMarket/formats.html).
struct MtxHeader {
  std::string format, field, symmetry;
  std::int64_t rows = -1, cols = -1, nnz = -1;
  bool symmetric() const { return symmetry != "general"; }
  bool skew() const { return symmetry == "skew-symmetric"; }
  std::string type() const { return "Matrix Market " + format + " " + field + " " + symmetry; }
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// Reads the banner, the comments and the size line from `in`, checking each against the format.
MtxHeader read_mtx_header(std::istringstream& in, std::size_t bytes, const std::string& name) {
  std::string line;
  if (!std::getline(in, line)) bad(name, "empty file");
  std::istringstream banner(line);
  std::string tag, object;
  MtxHeader h;
  banner >> tag >> object >> h.format >> h.field >> h.symmetry;
  if (tag != "%%MatrixMarket" || lower(object) != "matrix") bad(name, "not a Matrix Market matrix (bad banner)");
  h.format = lower(h.format), h.field = lower(h.field), h.symmetry = lower(h.symmetry);
  if (h.format != "array" && h.format != "coordinate") bad(name, "unknown Matrix Market format '" + h.format + "'");
  if (h.field != "real" && h.field != "integer" && h.field != "double" && h.field != "pattern")
    bad(name, "unsupported Matrix Market field '" + h.field + "' (real, integer, pattern)");
  if (h.symmetry != "general" && h.symmetry != "symmetric" && h.symmetry != "skew-symmetric")
    bad(name, "unsupported Matrix Market symmetry '" + h.symmetry + "'");
  if (h.format == "array" && h.field == "pattern") bad(name, "pattern is only valid for coordinate format");
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  std::istringstream size_line(line);
  size_line >> h.rows >> h.cols;
  if (h.format == "coordinate") size_line >> h.nnz;
  if (size_line.fail() || h.rows < 0 || h.cols < 0 || (h.format == "coordinate" && h.nnz < 0))
    bad(name, "bad size line '" + line + "'");
  if (h.symmetric() && h.rows != h.cols) bad(name, "a symmetric matrix must be square");
  // Every entry takes at least two bytes ("0\n"): reject impossible sizes before allocating.
  const std::int64_t entries = h.format == "array" ? checked_elements(h.rows, h.cols, name) : h.nnz;
  if (entries > static_cast<std::int64_t>(bytes) / 2) bad(name, "truncated data: " + std::to_string(entries) + " entries announced");
  return h;
}

/// Calls add(i, j, v) (zero-based) for every entry the file stores, its mirror included where the
/// matrix is symmetric or skew-symmetric; checks each entry against the header (indices in range,
/// the lower triangle only where symmetric, a value of the field's type, the announced count).
template <class Add>
void for_each_mtx_entry(std::istringstream& in, const MtxHeader& h, const std::string& name, const Add& add) {
  const double mirror = h.skew() ? -1.0 : 1.0;
  auto store = [&](std::int64_t i, std::int64_t j, double v) {
    add(i, j, v);
    if (h.symmetric() && i != j) add(j, i, mirror * v);
  };
  auto value = [&](const std::string& token, const std::string& where) {
    char* end = nullptr;
    errno = 0;
    const double v = h.field == "integer" ? static_cast<double>(std::strtoll(token.c_str(), &end, 10)) : std::strtod(token.c_str(), &end);
    if (token.empty() || *end != '\0' || errno == ERANGE)
      bad(name, where + ": '" + token + "' is not " + (h.field == "integer" ? "an integer" : "a real number"));
    return v;
  };
  std::string line, token;
  if (h.format == "array") {
    const std::int64_t expected = !h.symmetric() ? h.rows * h.cols : h.skew() ? h.rows * (h.rows - 1) / 2 : h.rows * (h.rows + 1) / 2;
    std::int64_t read = 0;
    for (std::int64_t j = 0; j < h.cols; ++j)
      for (std::int64_t i = !h.symmetric() ? 0 : h.skew() ? j + 1 : j; i < h.rows; ++i) {
        if (!(in >> token)) bad(name, "truncated data: " + std::to_string(read) + " of " + std::to_string(expected) + " array entries");
        store(i, j, value(token, "array entry " + std::to_string(read + 1)));
        ++read;
      }
  } else {
    std::int64_t e = 0;
    while (e < h.nnz && std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '%') continue;
      std::istringstream entry(line);
      std::string ti, tj, tv, extra;
      entry >> ti >> tj;
      const bool has_value = static_cast<bool>(entry >> tv);
      const std::string where = "entry " + std::to_string(e + 1) + " of " + std::to_string(h.nnz);
      if (h.field == "pattern" ? has_value : !has_value || (entry >> extra))
        bad(name, where + ": '" + line + "' must hold " + (h.field == "pattern" ? "a row and a column only" : "a row, a column and one value"));
      const auto i = std::strtoll(ti.c_str(), nullptr, 10), j = std::strtoll(tj.c_str(), nullptr, 10);
      if (ti.find_first_not_of("0123456789") != std::string::npos || tj.find_first_not_of("0123456789") != std::string::npos ||
          i < 1 || i > h.rows || j < 1 || j > h.cols)
        bad(name, where + " index out of range");
      if (h.symmetric() && (h.skew() ? i <= j : i < j))
        bad(name, where + " lies above the diagonal (or on it, skew-symmetric): a " + h.symmetry + " file stores the lower triangle only");
      store(i - 1, j - 1, h.field == "pattern" ? 1.0 : value(tv, where));
      ++e;
    }
    if (e < h.nnz) bad(name, "truncated data: entry " + std::to_string(e + 1) + " of " + std::to_string(h.nnz) + " missing");
  }
  while (in >> token)
    if (token[0] != '%') bad(name, "holds more entries than its size line announces");
}

/// Triplets (i, j, v) into CSR: rows in order, each row's columns sorted, repeated positions summed.
void compress_rows(std::vector<std::int64_t>& ij, std::vector<double>& v, SparseMatrix& m) {
  const std::size_t count = v.size();
  std::vector<std::size_t> order(count);
  for (std::size_t e = 0; e < count; ++e) order[e] = e;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return ij[x] < ij[y]; });
  m.row_ptr.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  for (std::size_t t = 0; t < count;) {
    const std::int64_t key = ij[order[t]];
    double sum = 0;
    for (; t < count && ij[order[t]] == key; ++t) sum += v[order[t]];
    m.col_idx.push_back(static_cast<std::int32_t>(key % m.cols));
    m.values.push_back(static_cast<float>(sum));
    ++m.row_ptr[static_cast<std::size_t>(key / m.cols) + 1];
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(m.rows); ++i) m.row_ptr[i + 1] += m.row_ptr[i];
}

}  // namespace

bool is_mtx_coordinate(const std::string& bytes) {
  std::istringstream banner(bytes.substr(0, bytes.find('\n')));
  std::string tag, object, format;
  banner >> tag >> object >> format;
  return tag == "%%MatrixMarket" && lower(format) == "coordinate";
}

DenseMatrix parse_mtx(const std::string& bytes, const std::string& name) {
  std::istringstream in(bytes);
  const MtxHeader h = read_mtx_header(in, bytes.size(), name);
  DenseMatrix m;
  m.rows = h.rows;
  m.cols = h.cols;
  m.data.assign(static_cast<std::size_t>(checked_elements(h.rows, h.cols, name)), 0.0f);
  // Coordinate entries that repeat a position are summed (the format's convention).
  for_each_mtx_entry(in, h, name, [&](std::int64_t i, std::int64_t j, double v) {
    m.data[static_cast<std::size_t>(i + j * h.rows)] += static_cast<float>(v);
  });
  m.source_type = h.type();
  return m;
}

SparseMatrix parse_mtx_sparse(const std::string& bytes, const std::string& name) {
  std::istringstream in(bytes);
  const MtxHeader h = read_mtx_header(in, bytes.size(), name);
  if (h.format != "coordinate") bad(name, "is a Matrix Market array (dense) file, not a coordinate (sparse) one");
  // row_ptr takes rows + 1 offsets whatever nnz is: a short file must not ask for gigabytes.
  if (h.rows > kMaxElements || h.cols > kMaxElements) bad(name, "dimension too large");
  constexpr std::int64_t kMaxIndex = 2147483647;  // CSR with 32-bit offsets and column indices
  const std::int64_t stored = h.symmetric() ? 2 * h.nnz : h.nnz;
  if (h.rows > kMaxIndex || h.cols > kMaxIndex || stored > kMaxIndex)
    bad(name, h.type() + " of " + std::to_string(h.rows) + " x " + std::to_string(h.cols) + " with " +
                  std::to_string(stored) + " entries (mirrors included) exceeds the 2^31 - 1 rows, columns and "
                  "entries of 32-bit CSR");
  SparseMatrix m;
  m.rows = h.rows;
  m.cols = h.cols;
  std::vector<std::int64_t> ij;
  std::vector<double> v;
  ij.reserve(static_cast<std::size_t>(stored));
  v.reserve(static_cast<std::size_t>(stored));
  for_each_mtx_entry(in, h, name, [&](std::int64_t i, std::int64_t j, double x) {
    ij.push_back(i * h.cols + j);
    v.push_back(x);
  });
  compress_rows(ij, v, m);
  m.source_type = h.type();
  return m;
}

namespace {

// ---- scipy.sparse .npz ------------------------------------------------------------------

/// A zip archive in memory (libzip), closed when it goes.
class ZipArchive {
 public:
  ZipArchive(const std::string& bytes, const std::string& name) : name_(name) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
    if (source) archive_ = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (!archive_) {
      if (source) zip_source_free(source);
      const std::string why = zip_error_strerror(&error);
      zip_error_fini(&error);
      bad(name, "is not a readable zip archive (.npz): " + why);
    }
    zip_error_fini(&error);
  }
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;
  ~ZipArchive() { zip_discard(archive_); }

  /// The member `member`, decompressed (its CRC-32 checked), at most `limit` bytes.
  std::string read(const std::string& member, std::size_t limit) const {
    const zip_int64_t index = zip_name_locate(archive_, member.c_str(), 0);
    if (index < 0) bad(name_, "holds no " + member + ": not a scipy.sparse.save_npz file");
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive_, static_cast<zip_uint64_t>(index), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
      bad(name_, member + ": " + zip_strerror(archive_));
    if (st.size > limit)
      bad(name_, member + " decompresses to " + std::to_string(st.size) + " bytes, more than the " + std::to_string(limit) +
                     " its matrix can need");
    zip_file_t* file = zip_fopen_index(archive_, static_cast<zip_uint64_t>(index), 0);
    if (!file) bad(name_, member + ": " + zip_strerror(archive_));
    std::string out(static_cast<std::size_t>(st.size), '\0');
    const zip_int64_t got = zip_fread(file, &out[0], st.size);
    char past = 0;  // reading on to the end is what makes libzip check the CRC-32
    const zip_int64_t more = got < 0 ? -1 : zip_fread(file, &past, 1);
    const std::string why = more < 0 ? zip_file_strerror(file) : "";
    zip_fclose(file);
    if (more < 0) bad(name_, member + ": " + why);
    if (more > 0) bad(name_, member + ": longer than the " + std::to_string(st.size) + " bytes its entry declares");
    if (static_cast<zip_uint64_t>(got) != st.size)
      bad(name_, member + ": truncated, " + std::to_string(got) + " of " + std::to_string(st.size) + " bytes");
    return out;
  }

 private:
  std::string name_;
  zip_t* archive_ = nullptr;
};

/// A 1-D .npy array of integers (<i4, <i8) or floats (<f4, <f8) as doubles, exactly for integers
/// up to 2^53 (indices and shapes of 32-bit CSR are far below).
std::vector<double> npy_vector(const std::string& bytes, const std::string& name) {
  const NpyHeader h = parse_npy_header(bytes, name);
  if (h.dims.size() != 1) bad(name, "is a " + std::to_string(h.dims.size()) + "-D array; expected 1-D");
  const std::size_t item = h.descr == "<i4" || h.descr == "<f4" ? 4 : h.descr == "<i8" || h.descr == "<f8" ? 8 : 0;
  if (item == 0) bad(name, "unsupported dtype '" + h.descr + "' (int32, int64, float32 or float64, little-endian)");
  const std::size_t count = static_cast<std::size_t>(h.dims[0]);
  if ((bytes.size() - h.data_at) / item < count)
    bad(name, "truncated data: " + std::to_string(count) + " elements expected");
  std::vector<double> v(count);
  const char* p = bytes.data() + h.data_at;
  for (std::size_t e = 0; e < count; ++e) {
    const char* x = p + e * item;
    if (h.descr == "<i4") v[e] = load<std::int32_t>(x);
    else if (h.descr == "<i8") v[e] = static_cast<double>(load<std::int64_t>(x));
    else if (h.descr == "<f4") v[e] = load<float>(x);
    else v[e] = load<double>(x);
  }
  return v;
}

/// The string a 0-d .npy array of dtype <U (UTF-32) or |S (bytes) holds, ASCII only.
std::string npy_string(const std::string& bytes, const std::string& name) {
  const NpyHeader h = parse_npy_header(bytes, name);
  const bool wide = h.descr.rfind("<U", 0) == 0, narrow = h.descr.rfind("|S", 0) == 0;
  if (!h.dims.empty() || !(wide || narrow)) bad(name, "is not a string (dtype '" + h.descr + "')");
  const std::size_t chars = static_cast<std::size_t>(std::strtoul(h.descr.c_str() + 2, nullptr, 10));
  if (chars > 16 || (bytes.size() - h.data_at) < chars * (wide ? 4 : 1)) bad(name, "holds no short string");
  std::string out;
  for (std::size_t c = 0; c < chars; ++c) {
    const std::uint32_t code = wide ? load<std::uint32_t>(bytes.data() + h.data_at + 4 * c)
                                    : static_cast<unsigned char>(bytes[h.data_at + c]);
    if (code == 0) break;
    out.push_back(code < 128 ? static_cast<char>(code) : '?');
  }
  return out;
}

/// An index array's entries, each an integer in 0 .. limit - 1.
void require_indices(const std::vector<double>& v, double limit, const std::string& what, const std::string& name) {
  for (std::size_t e = 0; e < v.size(); ++e)
    if (!(v[e] >= 0 && v[e] < limit && v[e] == std::floor(v[e])))
      bad(name, what + "[" + std::to_string(e) + "] = " + std::to_string(v[e]) + " is not an index in 0 .. " +
                    std::to_string(static_cast<std::int64_t>(limit) - 1));
}

}  // namespace

SparseMatrix parse_npz_sparse(const std::string& bytes, const std::string& name) {
  const ZipArchive zip(bytes, name);
  const std::string format = npy_string(zip.read("format.npy", 4096), name + ": format.npy");
  if (format != "csr" && format != "csc")
    bad(name, "holds a scipy.sparse '" + format + "' matrix; csr and csc are read (convert with .tocsr())");
  const std::vector<double> shape = npy_vector(zip.read("shape.npy", 4096), name + ": shape.npy");
  constexpr double kMaxIndex = 2147483647;  // CSR with 32-bit offsets and column indices
  if (shape.size() != 2 || !(shape[0] >= 0 && shape[1] >= 0 && shape[0] <= kMaxIndex && shape[1] <= kMaxIndex))
    bad(name, "shape.npy is not two sizes within 32-bit CSR's 2^31 - 1");
  const bool csr = format == "csr";
  const double outer = csr ? shape[0] : shape[1], inner = csr ? shape[1] : shape[0];
  // A member holds at most 8-byte entries of 32-bit CSR, and inflates at most 1032-fold (deflate's largest ratio).
  const std::size_t limit = static_cast<std::size_t>(
      std::min<double>(8 * std::min<double>(kMaxIndex, kMaxElements), 1032.0 * static_cast<double>(bytes.size())) + 4096);
  const std::vector<double> indptr = npy_vector(zip.read("indptr.npy", limit), name + ": indptr.npy");
  const std::vector<double> indices = npy_vector(zip.read("indices.npy", limit), name + ": indices.npy");
  std::vector<double> data = npy_vector(zip.read("data.npy", limit), name + ": data.npy");
  if (indptr.size() != static_cast<std::size_t>(outer) + 1 || indptr.front() != 0 || indptr.back() != indices.size())
    bad(name, "indptr.npy is not " + std::to_string(static_cast<std::int64_t>(outer) + 1) +
                  " offsets from 0 to the " + std::to_string(indices.size()) + " indices");
  if (data.size() != indices.size())
    bad(name, "data.npy holds " + std::to_string(data.size()) + " values for " + std::to_string(indices.size()) + " indices");
  if (indices.size() > kMaxIndex) bad(name, "holds more than 32-bit CSR's 2^31 - 1 entries");
  require_indices(indices, inner, "indices.npy", name);
  SparseMatrix m;
  m.rows = static_cast<std::int64_t>(shape[0]);
  m.cols = static_cast<std::int64_t>(shape[1]);
  // Triplets in any order, so that unsorted indices and duplicates (which scipy allows) come out
  // as CSR's sorted, summed rows; a csc file's column j gives entries (indices[e], j).
  std::vector<std::int64_t> ij(indices.size());
  for (std::size_t o = 0; o < static_cast<std::size_t>(outer); ++o) {
    if (!(indptr[o + 1] >= indptr[o] && indptr[o + 1] == std::floor(indptr[o + 1])))
      bad(name, "indptr.npy[" + std::to_string(o + 1) + "] = " + std::to_string(indptr[o + 1]) +
                    " is not an offset at or after the one before it");
    for (auto e = static_cast<std::size_t>(indptr[o]); e < static_cast<std::size_t>(indptr[o + 1]); ++e) {
      const auto a = static_cast<std::int64_t>(o), b = static_cast<std::int64_t>(indices[e]);
      ij[e] = csr ? a * m.cols + b : b * m.cols + a;
    }
  }
  compress_rows(ij, data, m);
  m.source_type = "scipy.sparse " + format + " (.npz), " + std::to_string(indices.size()) + " stored entries";
  return m;
}

namespace {
/// The CSR matrix as a dense one (column-major), within the readers' element cap.
DenseMatrix densified(const SparseMatrix& s, const std::string& name) {
  DenseMatrix m;
  m.rows = s.rows;
  m.cols = s.cols;
  m.data.assign(static_cast<std::size_t>(checked_elements(s.rows, s.cols, name)), 0.0f);
  for (std::int64_t i = 0; i < s.rows; ++i)
    for (std::int32_t e = s.row_ptr[static_cast<std::size_t>(i)]; e < s.row_ptr[static_cast<std::size_t>(i) + 1]; ++e)
      m.data[static_cast<std::size_t>(i + s.col_idx[static_cast<std::size_t>(e)] * s.rows)] = s.values[static_cast<std::size_t>(e)];
  m.source_type = s.source_type;
  return m;
}

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

namespace {
/// The file's name without a trailing .gz.
std::string uncompressed_name(const std::string& path) {
  return ends_with(path, ".gz") ? path.substr(0, path.size() - 3) : path;
}

DenseMatrix parse_by_name(const std::string& bytes, const std::string& path, int max_dims) {
  const std::string base = uncompressed_name(path);
  if (ends_with(base, ".npy")) return parse_npy(bytes, path, max_dims);
  if (ends_with(base, ".mtx")) return parse_mtx(bytes, path);
  if (ends_with(base, ".npz")) return densified(parse_npz_sparse(bytes, path), path);
  if (ends_with(base, ".idx") || ends_with(base, "-ubyte") || base.find("idx") != std::string::npos)
    return parse_idx(bytes, path);
  bad(path, "unknown format (use .npy, .npz, .mtx or .idx / -ubyte, optionally .gz)");
}
}  // namespace

DenseMatrix read_matrix(const std::string& path, int max_dims) { return parse_by_name(read_file(path), path, max_dims); }

DenseMatrix64 read_matrix_fp64(const std::string& path) {
  const std::string bytes = read_file(path);
  const std::string base = uncompressed_name(path);
  if (ends_with(base, ".npy")) return parse_npy_as<double>(bytes, path, 2);
  if ((ends_with(base, ".mtx") && is_mtx_coordinate(bytes)) || ends_with(base, ".npz"))
    bad(path, "is a sparse matrix, which is read in FP32 (CSR): FP64 input is a dense file");
  DenseMatrix m = parse_by_name(bytes, path, 2);
  DenseMatrix64 wide;
  wide.rows = m.rows, wide.cols = m.cols, wide.source_type = m.source_type;
  wide.data.assign(m.data.begin(), m.data.end());
  return wide;
}

std::variant<DenseMatrix, SparseMatrix> read_matrix_or_csr(const std::string& path) {
  const std::string bytes = read_file(path);
  if (ends_with(uncompressed_name(path), ".mtx") && is_mtx_coordinate(bytes)) return parse_mtx_sparse(bytes, path);
  if (ends_with(uncompressed_name(path), ".npz")) return parse_npz_sparse(bytes, path);
  return parse_by_name(bytes, path, 2);
}

namespace {

/// .npy version 1.0 bytes of `count` float32 or float64 elements in the order `shape` (e.g.
/// "(3, 4)") and fortran_order say.
template <class T>
std::string npy_with_shape(const T* data, std::int64_t count, const std::string& shape) {
  const char* descr = sizeof(T) == 4 ? "<f4" : "<f8";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': True, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  out.append(reinterpret_cast<const char*>(&len), 2);
  out += header;
  out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(count) * sizeof(T));
  return out;
}

}  // namespace

std::string npy_bytes(const float* data, std::int64_t rows, std::int64_t cols) {
  return npy_with_shape(data, rows * cols, "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
}

std::string npy_bytes(const double* data, std::int64_t rows, std::int64_t cols) {
  return npy_with_shape(data, rows * cols, "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
}

std::string npy_vector_bytes(const float* data, std::int64_t size) {
  return npy_with_shape(data, size, "(" + std::to_string(size) + ",)");
}

std::string npy_vector_bytes(const double* data, std::int64_t size) {
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
