// The randnla tool's command-line options, parsed by CLI11: each subcommand declares its options
// typed (integer, real, text with a check, choice of an enumeration, flag), with its range, its
// default and its help; parse() refuses a bad command line (unknown option, missing or surplus
// value, a value out of range or overflowing its type, a flag given a value, a required option
// missing) before anything else runs, with one line naming the option.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "randnla/enum_names.hpp"

namespace randnla {
namespace cli {

/// Exit statuses of the randnla tool (also listed by `randnla --help`).
enum ExitCode : int {
  kExitSuccess = 0,
  kExitRuntime = 1,  ///< a runtime or numerical error: breakdown, device, out of memory, writing the outputs
  kExitUsage = 2,    ///< a bad command line, found before any input is read
  kExitInput = 3,    ///< an input that cannot be used: unreadable, malformed, a shape the options do not fit
};

class Options {
 public:
  /// `example`: one complete command line shown at the end of the help.
  Options(const std::string& command, const std::string& summary, const std::string& example);
  ~Options();

  /// An integer option in [lo, hi]; values that overflow, are not decimal or leave the range are refused.
  /// `names`: "rank,k" gives --rank and -k. No fallback: absent unless given (see required()).
  Options& integer(const std::string& names, std::optional<long long> fallback, long long lo, long long hi,
                   const std::string& help);
  /// A real option; `ok` decides, `range` says in words what it accepts ("in (0, 1)").
  Options& real(const std::string& names, std::optional<double> fallback, std::function<bool(double)> ok,
                const std::string& range, const std::string& help);
  /// A text option; `check` (optional) throws randnla::Error for a value it refuses.
  Options& text(const std::string& names, std::optional<std::string> fallback, const std::string& help,
                std::function<void(const std::string&)> check = {});
  /// A choice among the names of enumeration E (its default: `fallback`); the help lists the names.
  template <class E>
  Options& choice(const std::string& names, E fallback, const std::string& help) {
    std::string list;
    for (const auto& e : names_of(E{}))
      if (e.parsed) list += std::string(list.empty() ? "" : " | ") + e.name;
    std::string option = names.substr(0, names.find(','));
    option = "--" + option.substr(option.find_first_not_of('-'));
    return text(names, std::string(to_string(fallback)), help + " (" + list + ")",
                [option](const std::string& v) { parse_enum<E>(v, option); });
  }
  Options& flag(const std::string& names, const std::string& help);
  /// Marks --name as required.
  Options& required(const std::string& name);

  /// Parses argv[2..]. Returns -1 to go on, or the exit status: 0 after --help or --version (printed),
  /// kExitUsage after a bad command line (one line on stderr naming the option).
  int parse(int argc, char** argv);

  /// Every option's value as the command runs with it (given or default; flags as "true"/"false").
  std::vector<std::pair<std::string, std::string>> values() const;
  bool has(const std::string& name) const;  ///< given on the command line (or a flag set)
  std::string text(const std::string& name) const;
  long long integer(const std::string& name) const;
  double real(const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// "a,b,c" split at commas (empty items kept, so that they can be refused).
std::vector<std::string> split_list(const std::string& text);
/// A strict decimal integer: digits with an optional sign, no overflow; nullopt otherwise.
std::optional<long long> to_integer(const std::string& text);
/// A strict real: the whole text a finite number; nullopt otherwise.
std::optional<double> to_real(const std::string& text);

}  // namespace cli
}  // namespace randnla
