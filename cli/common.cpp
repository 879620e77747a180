#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "commands.hpp"

#include "randnla/initialize/initialize.hpp"
#include "randnla/version.hpp"

namespace randnla {
namespace cli {

nlohmann::json& report() {
  static nlohmann::json r = nlohmann::json::object();
  return r;
}

std::string& report_path() {
  static std::string path;
  return path;
}

void write_report(int status, const std::string& message) {
  if (report_path().empty()) return;
  nlohmann::json& r = report();
  r["status"] = status;
  r["ok"] = status == 0;
  if (!message.empty()) r["error"] = message;
  const std::string text = r.dump(2) + "\n";
  if (report_path() == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  const std::string tmp = report_path() + ".tmp-" + std::to_string(getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  const bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if ((f && std::fclose(f) != 0) || !ok || std::rename(tmp.c_str(), report_path().c_str()) != 0) {
    std::remove(tmp.c_str());
    std::fprintf(stderr, "randnla: cannot write the report '%s': %s\n", report_path().c_str(), std::strerror(errno));
  }
}

int parse_command(Options& o, int argc, char** argv, const std::string& default_output) {
  o.text("json", std::nullopt, "also write a machine-readable report (JSON) to this file, also after an error")
      .choice("backend", BackendKind::Auto, "where to run: auto is the GPU when there is one")
      .integer("device", 0, 0, 1023, "CUDA device number")
      .integer("seed", 42, 0, LLONG_MAX, "seed of the random sketch (Philox4x32-10)")
      .flag("kokkos-warnings", "let Kokkos print its start-up warnings (e.g. on OMP_PROC_BIND)");
  if (!default_output.empty())
    o.text("output,o", default_output, "output directory (created; its files are replaced as one set)")
        .flag("force,f", "replace the outputs of an earlier run in --output");
  const int status = o.parse(argc, argv);
  if (status >= 0) return status;
  if (o.has("json")) report_path() = o.text("json");
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [name, value] : o.values()) {
    if (name == "json") continue;
    if (const auto i = to_integer(value)) options[name] = *i;
    else if (const auto x = to_real(value)) options[name] = *x;
    else if (value == "true" || value == "false") options[name] = value == "true";
    else options[name] = value;
  }
  report()["version"] = RANDNLA_VERSION;
  report()["options"] = options;
  return -1;
}

Options& products_option(Options& o, ProductPrecision fallback, const std::string& help, bool rounds_once) {
  std::string list;
  for (const auto& e : names_of(ProductPrecision{}))
    if (rounds_once || !e.value.rounded_once) list += std::string(list.empty() ? "" : " | ") + e.name;
  return o.text("products", std::string(to_string(fallback)), help + " (" + list + ")", [rounds_once](const std::string& v) {
    const ProductPrecision p = parse_enum<ProductPrecision>(v, "--products");
    if (!rounds_once && p.rounded_once)
      throw UsageError("--products", v, "keeps A rounded to FP16 once, which only the lra command does");
  });
}

ProductPrecision products_of(const Options& o) { return parse_enum<ProductPrecision>(o.text("products"), "--products"); }

std::unique_ptr<Backend> open_backend(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  auto b = make_backend(parse_enum<BackendKind>(o.text("backend"), "--backend"), static_cast<int>(o.integer("device")));
  const double made_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("backend: %s\n", b->description().c_str());
  report()["backend"] = b->description();
  // The one-time set-up of a GPU backend (kernel loading, library initialisation) is paid here, so
  // that the phases the command reports are those of warm calls.
  const InitializeReport setup = initialize(*b);
  if (!setup.phases.phases().empty()) {
    std::printf("set-up: backend %.1f ms, %s\n", made_ms, setup.phases.to_string().c_str());
    report()["setup_ms"] = {{"backend", made_ms}, {"warm_up", setup.total_ms()}};
  }
  return b;
}

io::DenseMatrix load_matrix(const std::string& path, int max_dims) {
  io::DenseMatrix m = io::read_matrix(path, max_dims);
  std::int64_t bad = 0;
  for (float v : m.data) bad += !std::isfinite(v);
  if (bad) throw InvalidArgument("file", "'" + path + "'", "contains " + std::to_string(bad) + " NaN/Inf entries");
  report()["input"] = {{"path", path}, {"rows", m.rows}, {"cols", m.cols}, {"type", m.source_type}};
  std::string shape = std::to_string(m.rows) + " x " + std::to_string(m.cols);
  if (!m.extents.empty()) {
    report()["input"]["extents"] = m.extents;
    shape.clear();
    for (std::size_t d = 0; d < m.extents.size(); ++d) shape += (d ? " x " : "") + std::to_string(m.extents[d]);
  }
  std::printf("input: %s, %s, %s\n", path.c_str(), shape.c_str(), m.source_type.c_str());
  return m;
}

namespace {
/// Announces the input on stdout and in the report.
void announce_input(const std::string& path, const std::string& shape, const std::string& type,
                    const std::string& storage) {
  std::printf("input: %s, %s, %s%s\n", path.c_str(), shape.c_str(), type.c_str(), storage.c_str());
}

std::vector<float> host_copy(Backend& b, MatrixView<const float> x) {
  std::vector<float> h(static_cast<std::size_t>(x.size()));
  b.copy(x, MatrixView<float>(h.data(), x.rows(), x.cols(), std::max<index_t>(x.rows(), 1), MemorySpace::Host));
  return h;
}
}  // namespace

namespace {
/// Refuses values holding NaN/Inf, or all zero (every singular value 0, any U and V), naming the file.
template <class Values>
void require_finite_and_nonzero(const Values& values, const std::string& path) {
  std::int64_t bad = 0, nonzero = 0;
  for (const auto v : values) bad += !std::isfinite(v), nonzero += v != 0;
  if (bad) throw InvalidArgument("file", "'" + path + "'", "contains " + std::to_string(bad) + " NaN/Inf entries");
  if (nonzero == 0)
    throw InvalidArgument("file", "'" + path + "'",
                          "is all zero (every singular value 0, any U and V): there is nothing to approximate or factor");
}
}  // namespace

InputMatrix load_input(Backend& b, const std::string& path) {
  auto file = io::read_matrix_or_csr(path);
  InputMatrix in;
  if (auto* dense = std::get_if<io::DenseMatrix>(&file)) {
    io::DenseMatrix m = std::move(*dense);
    std::int64_t bad = 0;
    for (float v : m.data) bad += !std::isfinite(v);
    if (bad) throw InvalidArgument("file", "'" + path + "'", "contains " + std::to_string(bad) + " NaN/Inf entries");
    require_nonzero(m, path);
    report()["input"] = {{"path", path}, {"rows", m.rows}, {"cols", m.cols}, {"type", m.source_type}, {"storage", "dense"}};
    announce_input(path, std::to_string(m.rows) + " x " + std::to_string(m.cols), m.source_type, "");
    in.rows = m.rows, in.cols = m.cols, in.source_type = m.source_type;
    in.dense = to_backend(b, std::move(m));
    return in;
  }
  io::SparseMatrix& a = std::get<io::SparseMatrix>(file);
  require_finite_and_nonzero(a.values, path);
  const index_t nnz = static_cast<index_t>(a.values.size());
  report()["input"] = {{"path", path}, {"rows", a.rows}, {"cols", a.cols}, {"type", a.source_type},
                       {"storage", "CSR"}, {"nnz", nnz}};
  announce_input(path, std::to_string(a.rows) + " x " + std::to_string(a.cols), a.source_type,
                 ", kept sparse: CSR with " + std::to_string(nnz) + " entries");
  in.rows = a.rows, in.cols = a.cols, in.source_type = a.source_type;
  const CsrView host{a.rows, a.cols, nnz, a.row_ptr.data(), a.col_idx.data(), a.values.data(), MemorySpace::Host};
  in.csr = copy_csr(b, host);
  in.host_csr = std::move(a);
  return in;
}

Matrix<double> load_input_fp64(Backend& b, const std::string& path) {
  io::DenseMatrix64 m = io::read_matrix_fp64(path);
  require_finite_and_nonzero(m.data, path);
  report()["input"] = {{"path", path}, {"rows", m.rows}, {"cols", m.cols}, {"type", m.source_type}, {"storage", "dense FP64"}};
  announce_input(path, std::to_string(m.rows) + " x " + std::to_string(m.cols), m.source_type, ", kept in FP64");
  Matrix<double> a(b, m.rows, m.cols, "A");
  b.copy(MatrixView<const double>(m.data.data(), m.rows, m.cols, std::max<std::int64_t>(m.rows, 1), MemorySpace::Host),
         a.view());
  return a;
}

Matrix<float> to_backend(Backend& b, io::DenseMatrix m) {
  const index_t ld = m.rows > 1 ? m.rows : 1;
  if (b.memory_space() == MemorySpace::Host) {  // the loaded data itself, not a copy
    auto owner = std::make_shared<io::FloatBuffer>(std::move(m.data));
    return Matrix<float>(owner, MatrixView<float>(owner->data(), m.rows, m.cols, ld, MemorySpace::Host, "A"));
  }
  Matrix<float> out(b, m.rows, m.cols, "A");
  b.copy(MatrixView<const float>(m.data.data(), m.rows, m.cols, ld, MemorySpace::Host), out.view());
  return out;
}

namespace {

// What a signal handler removes: the temporary folder and the files that may be in it (plain
// arrays, since the handler may only call async-signal-safe functions).
constexpr int kMaxPending = 64;
char g_pending_dir[PATH_MAX];
char g_pending_files[kMaxPending][PATH_MAX];
volatile sig_atomic_t g_pending_count = 0;

extern "C" void remove_pending_and_die(int sig) {
  for (int i = 0; i < g_pending_count; ++i) unlink(g_pending_files[i]);
  if (g_pending_dir[0]) rmdir(g_pending_dir);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void copy_path(char* to, const std::string& from) {
  std::snprintf(to, PATH_MAX, "%s", from.c_str());
}

std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.emplace_back(e->d_name);
    closedir(d);
  }
  return names;
}

void write_all(const std::string& path, const std::string& bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      close(fd);
      throw Error("cannot write '" + path + "': " + std::strerror(w < 0 ? err : ENOSPC));
    }
    done += static_cast<std::size_t>(w);
  }
  if (fsync(fd) != 0 || close(fd) != 0) throw Error("cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace

OutputSet::OutputSet(const std::string& dir, std::vector<std::string> names, bool force,
                     std::function<bool(const std::string&)> also)
    : dir_(dir), names_(std::move(names)), also_(std::move(also)), force_(force) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (dir_.empty()) throw UsageError("--output", "''", "names no directory");
  struct stat link {};
  if (lstat(dir_.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {  // the set replaces the folder linked to
    char resolved[PATH_MAX];
    if (!realpath(dir_.c_str(), resolved)) throw UsageError("--output", dir_, "is a link that leads nowhere");
    dir_ = resolved;
  }
  const auto slash = dir_.rfind('/');
  parent_ = slash == std::string::npos ? "." : slash == 0 ? "/" : dir_.substr(0, slash);
  const std::string base = slash == std::string::npos ? dir_ : dir_.substr(slash + 1);
  if (base == "." || base == "..") throw UsageError("--output", dir_, "must name a directory of its own, not . or ..");
  struct stat st {};
  if (stat(parent_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError("--output", dir_, "cannot be created: '" + parent_ + "' is not a directory");
  if (access(parent_.c_str(), W_OK | X_OK) != 0)
    throw UsageError("--output", dir_, "cannot be created: '" + parent_ + "' is not writable");
  if (stat(dir_.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw UsageError("--output", dir_, "exists and is not a directory");
    for (const auto& e : entries_of(dir_)) {
      const bool ours = std::find(names_.begin(), names_.end(), e) != names_.end() || (also_ && also_(e));
      if (!ours)
        throw UsageError("--output", dir_, "holds '" + e + "', which is not an output of this command: give a new or empty directory");
      if (!force_) throw UsageError("output", "'" + dir_ + "/" + e + "'", "exists; pass --force to replace it");
    }
  }
}

OutputSet::~OutputSet() {
  if (!committed_) remove_tmp();
}

void OutputSet::remove_tmp() {
  if (tmp_.empty()) return;
  for (const auto& e : entries_of(tmp_)) unlink((tmp_ + "/" + e).c_str());
  rmdir(tmp_.c_str());
  g_pending_count = 0;
  g_pending_dir[0] = '\0';
  tmp_.clear();
}

void OutputSet::write(const std::string& name, const std::string& bytes) {
  const bool ours = std::find(names_.begin(), names_.end(), name) != names_.end() || (also_ && also_(name));
  if (!ours) throw Error("internal: '" + name + "' is not declared as an output");
  if (tmp_.empty()) {
    const auto slash = dir_.rfind('/');
    std::string pattern = parent_ + "/." + (slash == std::string::npos ? dir_ : dir_.substr(slash + 1)) + ".tmp-XXXXXX";
    if (!mkdtemp(&pattern[0])) throw Error("cannot create a folder in '" + parent_ + "': " + std::strerror(errno));
    tmp_ = pattern;
    copy_path(g_pending_dir, tmp_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_pending_and_die);
  }
  if (g_pending_count >= kMaxPending) throw Error("internal: too many output files");
  copy_path(g_pending_files[g_pending_count], tmp_ + "/" + name);
  g_pending_count = g_pending_count + 1;
  write_all(tmp_ + "/" + name, bytes);
  written_.push_back(name);
}

void OutputSet::commit() {
  if (tmp_.empty()) return;
  struct stat st {};
  const bool exists = stat(dir_.c_str(), &st) == 0;
  if (!exists || entries_of(dir_).empty()) {
    if (rename(tmp_.c_str(), dir_.c_str()) != 0)
      throw Error("cannot move the outputs into '" + dir_ + "': " + std::strerror(errno));
    chmod(dir_.c_str(), exists ? st.st_mode & 07777 : 0755);
  } else {
    // --force over an earlier set: swap the two folders in one step, then remove the old set.
    if (renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0)
      throw Error("cannot replace the outputs in '" + dir_ + "': " + std::strerror(errno));
    chmod(dir_.c_str(), st.st_mode & 07777);
    remove_tmp();  // now the old set
  }
  committed_ = true;
  g_pending_count = 0;
  g_pending_dir[0] = '\0';
  tmp_.clear();
  for (const auto& n : written_) std::printf("wrote %s/%s\n", dir_.c_str(), n.c_str());
  report()["output"] = {{"directory", dir_}, {"files", written_}};
}

namespace {

/// x copied to the host, refused where it holds NaN/Inf.
template <class T>
std::vector<T> finite_host_copy(Backend& b, MatrixView<const T> x, const std::string& name) {
  std::vector<T> host(static_cast<std::size_t>(x.size()));
  b.copy(x, MatrixView<T>(host.data(), x.rows(), x.cols(), x.rows() > 1 ? x.rows() : 1, MemorySpace::Host));
  for (T v : host)
    if (!std::isfinite(v)) throw NumericalBreakdown(name + " holds NaN/Inf: nothing written");
  return host;
}

void subtract_product(Backend& b, MatrixView<const float> us, MatrixView<const float> v, MatrixView<float> e) {
  b.product(Op::N, Op::T, -1.0f, us, v, 1.0f, e, ProductPrecision::fp32());
}
void subtract_product(Backend& b, MatrixView<const double> us, MatrixView<const double> v, MatrixView<double> e) {
  b.product(Op::N, Op::T, -1.0, us, v, 1.0, e);
}

/// ||A - U diag(S) V^T||_F / ||A||_F in T.
template <class T>
double relative_error_of(Backend& b, MatrixView<const T> a, MatrixView<const T> u, MatrixView<const T> s,
                         MatrixView<const T> v) {
  Matrix<T> e(b, a.rows(), a.cols(), "E"), us(b, u.rows(), u.cols(), "US");
  b.copy(a, e.view());
  b.copy(u, us.view());
  b.scale_columns(s, us.view());
  subtract_product(b, us, v, e);
  const double norm = b.frobenius_norm(a);
  return norm > 0 ? b.frobenius_norm(MatrixView<const T>(e.view())) / norm : 0.0;
}

}  // namespace

void save_npy(Backend& b, MatrixView<const float> x, OutputSet& out, const std::string& name) {
  out.write(name, io::npy_bytes(finite_host_copy(b, x, name).data(), x.rows(), x.cols()));
}

void save_npy(Backend& b, MatrixView<const double> x, OutputSet& out, const std::string& name) {
  out.write(name, io::npy_bytes(finite_host_copy(b, x, name).data(), x.rows(), x.cols()));
}

void save_npy_vector(Backend& b, MatrixView<const float> column, OutputSet& out, const std::string& name) {
  require_shape(column, column.rows(), 1, name);
  out.write(name, io::npy_vector_bytes(finite_host_copy(b, column, name).data(), column.rows()));
}

void require_nonzero(const io::DenseMatrix& a, const std::string& path) {
  for (float v : a.data)
    if (v != 0.0f) return;
  throw InvalidArgument("file", "'" + path + "'",
                        "is all zero (every singular value 0, any U and V): there is nothing to approximate or factor");
}

namespace {
template <class T>
void require_finite_entries(Backend& b, MatrixView<const T> x, const std::string& what) {
  std::vector<T> host(static_cast<std::size_t>(x.size()));
  b.copy(x, MatrixView<T>(host.data(), x.rows(), x.cols(), x.rows() > 1 ? x.rows() : 1, MemorySpace::Host));
  for (T v : host)
    if (!std::isfinite(v)) throw NumericalBreakdown(what + " holds NaN/Inf (the input may be rank deficient)");
}
}  // namespace

void require_finite(Backend& b, MatrixView<const float> x, const std::string& what) {
  require_finite_entries(b, x, what);
}
void require_finite(Backend& b, MatrixView<const double> x, const std::string& what) {
  require_finite_entries(b, x, what);
}

double exact_relative_error(Backend& b, MatrixView<const float> a, MatrixView<const float> u,
                            MatrixView<const float> s, MatrixView<const float> v) {
  return relative_error_of(b, a, u, s, v);
}

double exact_relative_error(Backend& b, MatrixView<const double> a, MatrixView<const double> u,
                            MatrixView<const double> s, MatrixView<const double> v) {
  return relative_error_of(b, a, u, s, v);
}

void Progress::operator()(const std::string& phase, double ms) {
  // stderr: the results on stdout (and a --json report there) stay free of it.
  if (elapsed_s() > 2.0) std::fprintf(stderr, "  [%7.1f s] %s done (%.0f ms)\n", elapsed_s(), phase.c_str(), ms);
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace cli
}  // namespace randnla
