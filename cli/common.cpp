#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "commands.hpp"

namespace randnla {
namespace cli {

bool parse_command(Options& o, int argc, char** argv, const std::string& command, const std::string& summary,
                   const std::string& default_output) {
  o.option("backend", "auto", "host, cuda or auto (the GPU when there is one)")
      .option("device", "0", "CUDA device number")
      .option("seed", "42", "seed of the random sketch (Philox4x32-10)")
      .option("output", default_output, "output directory")
      .flag("force", "replace existing output files");
  o.parse(argc, argv, 2);
  if (!o.help_requested()) return true;
  std::printf("%s", o.usage(command, summary).c_str());
  return false;
}

std::unique_ptr<Backend> open_backend(const Options& o) {
  auto b = make_backend(parse_enum<BackendKind>(o.text("backend"), "--backend"), static_cast<int>(o.integer("device")));
  std::printf("backend: %s\n", b->description().c_str());
  return b;
}

io::DenseMatrix load_matrix(const std::string& path) {
  io::DenseMatrix m = io::read_matrix(path);
  std::int64_t bad = 0;
  for (float v : m.data) bad += !std::isfinite(v);
  if (bad) throw InvalidArgument("file", "'" + path + "'", "contains " + std::to_string(bad) + " NaN/Inf entries");
  std::printf("input: %s, %lld x %lld, %s\n", path.c_str(), static_cast<long long>(m.rows), static_cast<long long>(m.cols),
              m.source_type.c_str());
  return m;
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

void save_npy(Backend& b, MatrixView<const float> x, const std::string& path, bool force) {
  std::vector<float> host(static_cast<std::size_t>(x.size()));
  b.copy(x, MatrixView<float>(host.data(), x.rows(), x.cols(), x.rows() > 1 ? x.rows() : 1, MemorySpace::Host));
  io::write_file_atomically(path, io::npy_bytes(host.data(), x.rows(), x.cols()), force);
  std::printf("wrote %s (%lld x %lld)\n", path.c_str(), static_cast<long long>(x.rows()), static_cast<long long>(x.cols()));
}

void require_new_outputs(const std::string& dir, std::initializer_list<const char*> files, bool force) {
  for (const char* f : files) {
    const std::string path = dir + "/" + f;
    if (!force && access(path.c_str(), F_OK) == 0)
      throw InvalidArgument("output", "'" + path + "'", "exists; pass --force to replace it");
  }
}

void make_directory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw InvalidArgument("--output", dir, std::string("cannot be created: ") + std::strerror(errno));
}

double exact_relative_error(Backend& b, MatrixView<const float> a, MatrixView<const float> u,
                            MatrixView<const float> s, MatrixView<const float> v) {
  Matrix<float> e(b, a.rows(), a.cols(), "E"), us(b, u.rows(), u.cols(), "US");
  b.copy(a, e.view());
  b.copy(u, us.view());
  b.scale_columns(s, us.view());
  b.product(Op::N, Op::T, -1.0f, us, v, 1.0f, e, ProductPrecision::fp32());
  return b.frobenius_norm(e) / b.frobenius_norm(a);
}

void Progress::operator()(const std::string& phase, double ms) {
  if (elapsed_s() > 2.0) std::printf("  [%7.1f s] %s done (%.0f ms)\n", elapsed_s(), phase.c_str(), ms);
  std::fflush(stdout);
}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace cli
}  // namespace randnla
