#include "options.hpp"

#include <cstdlib>
#include <sstream>

#include "randnla/error.hpp"

namespace randnla {
namespace cli {

Options& Options::option(const std::string& name, const std::string& fallback, const std::string& help) {
  specs_[name] = Spec{fallback, help, false};
  order_.push_back(name);
  return *this;
}

Options& Options::flag(const std::string& name, const std::string& help) {
  specs_[name] = Spec{"", help, true};
  order_.push_back(name);
  return *this;
}

void Options::parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) throw InvalidArgument("argument", arg, "options start with -- (see --help)");
    std::string name = arg.substr(2), value;
    const auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const auto spec = specs_.find(name);
    if (spec == specs_.end()) throw InvalidArgument("option", "--" + name, "is not an option of this command (see --help)");
    if (spec->second.is_flag) {
      given_[name] = "1";
      continue;
    }
    if (eq == std::string::npos) {
      if (i + 1 >= argc) throw InvalidArgument("--" + name, "(missing)", "needs a value");
      value = argv[++i];
    }
    given_[name] = value;
  }
}

bool Options::has(const std::string& name) const { return given_.count(name) != 0; }

std::string Options::text(const std::string& name) const {
  const auto g = given_.find(name);
  return g != given_.end() ? g->second : specs_.at(name).fallback;
}

long long Options::integer(const std::string& name) const {
  const std::string t = text(name);
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || *end != '\0') throw InvalidArgument("--" + name, t, "must be an integer");
  return v;
}

double Options::real(const std::string& name) const {
  const std::string t = text(name);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0') throw InvalidArgument("--" + name, t, "must be a number");
  return v;
}

std::string Options::usage(const std::string& command, const std::string& summary) const {
  std::ostringstream s;
  s << "usage: randnla " << command << " [options]\n" << summary << "\n\noptions:\n";
  for (const auto& name : order_) {
    const Spec& sp = specs_.at(name);
    std::string left = "  --" + name + (sp.is_flag ? "" : " VALUE");
    left.resize(std::max<std::size_t>(left.size() + 1, 30), ' ');
    s << left << sp.help;
    if (!sp.is_flag && !sp.fallback.empty()) s << " (default: " << sp.fallback << ")";
    s << "\n";
  }
  return s.str();
}

}  // namespace cli
}  // namespace randnla
