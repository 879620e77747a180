// randnla: the library's algorithms on files. `randnla <command> --help` lists a command's options.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstring>

#include "commands.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

// One row per subcommand.
const Command kCommands[] = {
    {"pca", randnla::cli::run_pca, "principal components through RSVD (default input: Fashion-MNIST)"},
    {"rsvd", randnla::cli::run_rsvd, "randomized SVD of a matrix file, rank k or to a tolerance"},
    {"gemm", randnla::cli::run_gemm, "accuracy and speed of every GEMM variant on your matrices"},
    {"lra", randnla::cli::run_lra, "mixed-precision randomized LRA, every product variant, refined or not"},
    {"project", randnla::cli::run_project, "very sparse random projection of a dataset, with its distance distortion"},
    {"qr", randnla::cli::run_qr, "A = Q R of a matrix file by any orthonormaliser (TSQR by default), with its errors"},
    {"tucker", randnla::cli::run_tucker, "Tucker approximation (RP-HOSVD) of a dataset as a tensor, e.g. 60000 x 28 x 28"},
};

void usage() {
  std::printf("usage: randnla <command> [options]\n\ncommands:\n");
  for (const auto& c : kCommands) std::printf("  %-6s %s\n", c.name, c.summary);
  std::printf("\n'randnla <command> --help' lists the command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    int kokkos_argc = 1;
    Kokkos::ScopeGuard guard(kokkos_argc, argv);
    try {
      return c.run(argc, argv);
    } catch (const randnla::Error& e) {
      std::fprintf(stderr, "randnla %s: %s\n", c.name, e.what() + std::strlen("randnla: "));
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "randnla %s: %s\n", c.name, e.what());
      return 3;
    }
  }
  std::fprintf(stderr, "randnla: unknown command '%s'\n", argv[1]);
  usage();
  return 2;
}
