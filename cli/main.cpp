// randnla: the library's algorithms on files. `randnla <command> --help` lists a command's options.
//
// Exit status (ExitCode in options.hpp; also printed by --help):
//   0  success
//   1  a runtime or numerical error (a breakdown, a non-finite result, the device, out of memory,
//      writing the outputs)
//   2  a bad command line: an unknown command or option, a missing, malformed or out-of-range value,
//      options that exclude each other, an output that exists without --force; found before any
//      input is read and before anything is written
//   3  an input that cannot be used: unreadable, malformed, too large, or a shape the options do not fit
// Any error prints one line on stderr, "randnla <command>: <what>", and leaves no output behind.
#include <cstdio>
#include <cstring>
#include <new>

#include "commands.hpp"
#include "randnla/kokkos_compat.hpp"

#include "randnla/version.hpp"

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

void usage(std::FILE* to) {
  std::fprintf(to, "usage: randnla <command> [options]\n       randnla --version\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(to, "  %-8s %s\n", c.name, c.summary);
  std::fprintf(to,
               "\n'randnla <command> --help' lists the command's options, their defaults and an example.\n"
               "\nexit status: 0 success, 1 runtime or numerical error, 2 bad command line, 3 unusable input\n");
}

const char* without_prefix(const char* what) {
  return std::strncmp(what, "randnla: ", 9) == 0 ? what + 9 : what;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace randnla::cli;
  if (argc < 2) {
    usage(stderr);
    return kExitUsage;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(stdout);
    return kExitSuccess;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("randnla %s\n", RANDNLA_VERSION);
    return kExitSuccess;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    bool kokkos_warnings = false;
    for (int i = 2; i < argc; ++i) kokkos_warnings |= !std::strcmp(argv[i], "--kokkos-warnings");
    Kokkos::ScopeGuard guard(randnla::compat::init_settings(kokkos_warnings));
    report()["command"] = c.name;
    int status = kExitRuntime;
    std::string message;
    try {
      status = c.run(argc, argv);
    } catch (const UsageError& e) {
      status = kExitUsage, message = without_prefix(e.what());
    } catch (const randnla::InvalidArgument& e) {
      status = kExitInput, message = without_prefix(e.what());
    } catch (const randnla::Error& e) {
      status = kExitRuntime, message = without_prefix(e.what());
    } catch (const std::bad_alloc&) {
      status = kExitRuntime, message = "out of memory";
    } catch (const std::exception& e) {
      status = kExitRuntime, message = without_prefix(e.what());
    }
    if (!message.empty()) std::fprintf(stderr, "randnla %s: %s\n", c.name, message.c_str());
    write_report(status, message);
    return status;
  }
  std::fprintf(stderr, "randnla: unknown command '%s' (see randnla --help)\n", argv[1]);
  return kExitUsage;
}
