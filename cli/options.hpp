// A small command-line parser for the randnla tool: each subcommand declares its options with
// help text and defaults; unknown options and missing values are errors naming the option.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace randnla {
namespace cli {

class Options {
 public:
  /// Declares --name with a default ("" = none) and help text; flags take no value.
  Options& option(const std::string& name, const std::string& fallback, const std::string& help);
  Options& flag(const std::string& name, const std::string& help);
  /// Parses argv[first..]; throws InvalidArgument for unknown options or missing values.
  void parse(int argc, char** argv, int first);

  bool has(const std::string& name) const;  ///< given on the command line (or a flag set)
  std::string text(const std::string& name) const;
  long long integer(const std::string& name) const;  ///< throws InvalidArgument if not an integer
  double real(const std::string& name) const;
  bool help_requested() const { return help_; }
  std::string usage(const std::string& command, const std::string& summary) const;

 private:
  struct Spec {
    std::string fallback, help;
    bool is_flag;
  };
  std::map<std::string, Spec> specs_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> given_;
  bool help_ = false;
};

}  // namespace cli
}  // namespace randnla
