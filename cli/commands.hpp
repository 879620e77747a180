// The randnla tool's subcommands. Adding one: write `int run_x(int argc, char** argv)` and add a
// row to the table in main.cpp.
#pragma once

#include <chrono>
#include <functional>
#include <vector>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "randnla/backends.hpp"
#include "io/matrix_io.hpp"
#include "options.hpp"
#include "randnla/backend.hpp"
#include "randnla/sparse/sparse_rsvd.hpp"

#include <nlohmann/json.hpp>

namespace randnla {
namespace cli {

/// The largest rank, oversampling or dimension an option takes (k + p cannot overflow), and the
/// largest power-iteration count.
constexpr long long kMaxRank = 1LL << 31;
constexpr long long kMaxPowerIterations = 1000;

/// The default dataset of the commands that take samples (Debian's Fashion-MNIST training images).
constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";

/// A command line that parsed but does not make sense (options that exclude each other, an output
/// that would be replaced without --force): exit status kExitUsage.
class UsageError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

int run_rsvd(int argc, char** argv);
int run_pca(int argc, char** argv);
int run_gemm(int argc, char** argv);
int run_lra(int argc, char** argv);
int run_project(int argc, char** argv);
int run_tucker(int argc, char** argv);
int run_qr(int argc, char** argv);

/// Adds the options every subcommand has (--backend, --device, --seed, --kokkos-warnings and, where
/// `default_output` is not empty, --output and --force) and parses the command line. Returns -1 to
/// run the command, else the exit status (0 after --help or --version, kExitUsage on a bad line).
int parse_command(Options& o, int argc, char** argv, const std::string& default_output);
/// The machine-readable report --json FILE asks for: the command fills it (options, backend, input,
/// results, outputs); main adds the status and writes it, also after an error.
nlohmann::json& report();
/// The file --json names ("" if none).
std::string& report_path();
/// Writes the report to report_path() (through a temporary file and a rename), if one was given.
void write_report(int status, const std::string& message);

/// --products, the products' precision: one of ProductPrecision's presets, the same names in every
/// command (default `fallback`); fp16-once and fp16-all, which keep A rounded to FP16, only where
/// `rounds_once` (lra). Checked when the command line is parsed.
Options& products_option(Options& o, ProductPrecision fallback, const std::string& help, bool rounds_once = false);
/// The precision --products names.
ProductPrecision products_of(const Options& o);

/// The backend --backend names, announced on stdout ("backend: NVIDIA H100 ..." or "backend: host ...").
std::unique_ptr<Backend> open_backend(const Options& o);

/// Reads a matrix file (a .npy of up to `max_dims` dimensions), rejecting NaN/Inf with a message
/// naming the file; announces its shape.
io::DenseMatrix load_matrix(const std::string& path, int max_dims = 2);
/// The loaded matrix in the backend's memory: moved into a Matrix where that is host memory,
/// copied to the device otherwise.
Matrix<float> to_backend(Backend& b, io::DenseMatrix m);

/// The input of a command that reads sparse matrices (rsvd, pca) in the backend's memory: CSR where
/// the file is a coordinate Matrix Market file (kept sparse), dense otherwise.
struct InputMatrix {
  index_t rows = 0, cols = 0;
  std::string source_type;            ///< as the reader names it, e.g. "IDX type 0x08"
  Matrix<float> dense;                ///< a dense input
  std::optional<io::SparseMatrix> host_csr;  ///< a sparse input, on the host
  std::optional<CsrArrays> csr;              ///< its arrays in the backend's memory
  bool sparse() const { return csr.has_value(); }
};
/// Reads the input of a command that reads sparse matrices, refusing NaN/Inf and an all-zero matrix
/// with a message naming the file; announces shape and storage (report()["input"]["storage"]).
InputMatrix load_input(Backend& b, const std::string& path);
/// The same for --precision double: a dense matrix in FP64 in the backend's memory (a float64 .npy
/// exactly; io::read_matrix_fp64), refusing a sparse file, NaN/Inf and an all-zero matrix.
Matrix<double> load_input_fp64(Backend& b, const std::string& path);
/// A command's outputs as one set: checked before any work (refused when the directory holds one of
/// them and --force was not given, or holds files that are not the command's), written into a
/// temporary folder beside the directory and moved into place by one rename at commit(). Until
/// then the directory is untouched; an error, or SIGINT/SIGTERM/SIGHUP, removes the temporary folder.
class OutputSet {
 public:
  /// `names`: every file the command may write there; `also` accepts further names (e.g. Q7.npy).
  OutputSet(const std::string& dir, std::vector<std::string> names, bool force,
            std::function<bool(const std::string&)> also = {});
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  /// Writes `name` (one of the names) into the temporary folder, created at the first call.
  void write(const std::string& name, const std::string& bytes);
  /// Moves the set into place: the directory then holds exactly the files written.
  void commit();
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, parent_, tmp_;
  std::vector<std::string> names_, written_;
  std::function<bool(const std::string&)> also_;
  bool force_, committed_ = false;
  void remove_tmp();
};

/// Writes a backend matrix as FP32 .npy into the set.
void save_npy(Backend& b, MatrixView<const float> x, OutputSet& out, const std::string& name);
/// Writes a backend matrix as FP64 .npy into the set.
void save_npy(Backend& b, MatrixView<const double> x, OutputSet& out, const std::string& name);
/// Writes a backend column (size x 1) as a 1-D FP32 .npy into the set.
void save_npy_vector(Backend& b, MatrixView<const float> column, OutputSet& out, const std::string& name);
/// Refuses an input that is all zero (its SVD is S = 0 with any U, V: nothing to approximate).
void require_nonzero(const io::DenseMatrix& a, const std::string& path);
/// Throws NumericalBreakdown when a result holds NaN/Inf (instead of printing or writing it).
void require_finite(Backend& b, MatrixView<const float> x, const std::string& what);
void require_finite(Backend& b, MatrixView<const double> x, const std::string& what);

/// ||A - U diag(S) V^T||_F / ||A||_F computed on the backend (needs an m x n buffer).
double exact_relative_error(Backend& b, MatrixView<const float> a, MatrixView<const float> u,
                            MatrixView<const float> s, MatrixView<const float> v);
/// The same in FP64.
double exact_relative_error(Backend& b, MatrixView<const double> a, MatrixView<const double> u,
                            MatrixView<const double> s, MatrixView<const double> v);

/// Prints a progress line for a phase on stderr once the run has lasted longer than two seconds.
class Progress {
 public:
  void operator()(const std::string& phase, double ms);
  double elapsed_s() const;

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace cli
}  // namespace randnla
