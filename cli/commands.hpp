// The randnla tool's subcommands. Adding one: write `int run_x(int argc, char** argv)` and add a
// row to the table in main.cpp.
#pragma once

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>

#include "randnla/backends.hpp"
#include "io/matrix_io.hpp"
#include "options.hpp"
#include "randnla/backend.hpp"

namespace randnla {
namespace cli {

/// The default dataset of the commands that take samples (Debian's Fashion-MNIST training images).
constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";

int run_rsvd(int argc, char** argv);
int run_pca(int argc, char** argv);
int run_gemm(int argc, char** argv);
int run_lra(int argc, char** argv);
int run_project(int argc, char** argv);
int run_tucker(int argc, char** argv);
int run_qr(int argc, char** argv);

/// Adds the options every subcommand has (--backend, --device, --seed, --force, --output) and
/// parses the command line; with --help prints the usage and returns false (nothing to run).
bool parse_command(Options& o, int argc, char** argv, const std::string& command, const std::string& summary,
                   const std::string& default_output);
/// The backend --backend names, announced on stdout ("backend: NVIDIA H100 ..." or "backend: host ...").
std::unique_ptr<Backend> open_backend(const Options& o);

/// Reads a matrix file, rejecting NaN/Inf with a message naming the file; announces its shape.
io::DenseMatrix load_matrix(const std::string& path);
/// The loaded matrix in the backend's memory: moved into a Matrix where that is host memory,
/// copied to the device otherwise.
Matrix<float> to_backend(Backend& b, io::DenseMatrix m);
/// Writes a backend matrix as FP32 .npy (atomically; --force to replace).
void save_npy(Backend& b, MatrixView<const float> x, const std::string& path, bool force);
/// Throws before any work when one of `files` already exists in dir and --force was not given.
void require_new_outputs(const std::string& dir, std::initializer_list<const char*> files, bool force);
/// Creates the output directory if needed.
void make_directory(const std::string& dir);

/// ||A - U diag(S) V^T||_F / ||A||_F computed on the backend (needs an m x n buffer).
double exact_relative_error(Backend& b, MatrixView<const float> a, MatrixView<const float> u,
                            MatrixView<const float> s, MatrixView<const float> v);

/// Prints a progress line for a phase once the run has lasted longer than two seconds.
class Progress {
 public:
  void operator()(const std::string& phase, double ms);
  double elapsed_s() const;

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace cli
}  // namespace randnla
