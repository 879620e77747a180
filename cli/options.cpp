#include "options.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "randnla/error.hpp"

#include "randnla/version.hpp"

namespace randnla {
namespace cli {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::optional<long long> to_integer(const std::string& t) {
  if (t.empty() || t.size() > 40) return std::nullopt;
  std::size_t i = (t[0] == '-' || t[0] == '+') ? 1 : 0;
  if (i == t.size()) return std::nullopt;
  for (std::size_t j = i; j < t.size(); ++j)
    if (t[j] < '0' || t[j] > '9') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> to_real(const std::string& t) {
  if (t.empty() || std::isspace(static_cast<unsigned char>(t[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || errno == ERANGE) return std::nullopt;
  return v;
}

namespace {

std::string flag_names(const std::string& names) {  // "rank,k" -> "--rank,-k"
  std::string out;
  for (const auto& n : split_list(names))
    out += (out.empty() ? "" : ",") + std::string(n[0] == '-' ? "" : n.size() == 1 ? "-" : "--") + n;
  return out;
}

std::string key_of(const std::string& names) {  // "rank,k" -> "rank"; "--m" -> "m"
  std::string name = names.substr(0, names.find(','));
  return name.substr(name.find_first_not_of('-'));
}

}  // namespace

struct Options::Impl {
  struct Entry {
    std::string value;
    std::optional<std::string> fallback;
    CLI::Option* option = nullptr;
    bool is_flag = false;
    bool set = false;
  };
  CLI::App app;
  std::string command;
  std::map<std::string, Entry> entries;

  Impl(const std::string& c, const std::string& summary) : app(summary, "randnla " + c), command(c) {}

  Entry& add(const std::string& names, const std::string& help, std::optional<std::string> fallback) {
    Entry& e = entries[key_of(names)];
    e.fallback = std::move(fallback);
    const std::string described = help + (e.fallback && !e.fallback->empty() ? " [default: " + *e.fallback + "]" : "");
    e.option = app.add_option(flag_names(names), e.value, described);
    return e;
  }
};

Options::Options(const std::string& command, const std::string& summary, const std::string& example)
    : impl_(std::make_unique<Impl>(command, summary)) {
  impl_->app.set_version_flag("--version", std::string("randnla ") + RANDNLA_VERSION);
  impl_->app.footer("example:\n  " + example +
                    "\n\nexit status: 0 success, 1 runtime or numerical error, 2 bad command line, 3 unusable input");
  impl_->app.get_formatter()->column_width(34);
}

Options::~Options() = default;

Options& Options::integer(const std::string& names, std::optional<long long> fallback, long long lo, long long hi,
                          const std::string& help) {
  auto& e = impl_->add(names, help, fallback ? std::optional<std::string>(std::to_string(*fallback)) : std::nullopt);
  const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  e.option->type_name("INT")->check(CLI::Validator(
      [lo, hi, range](std::string& v) -> std::string {
        const auto x = to_integer(v);
        return x && *x >= lo && *x <= hi ? std::string() : "'" + v + "' is not " + range;
      },
      "", "range"));
  return *this;
}

Options& Options::real(const std::string& names, std::optional<double> fallback, std::function<bool(double)> ok,
                       const std::string& range, const std::string& help) {
  std::optional<std::string> f;
  if (fallback) {
    std::ostringstream s;
    s << *fallback;
    f = s.str();
  }
  auto& e = impl_->add(names, help, f);
  e.option->type_name("REAL")->check(CLI::Validator(
      [ok, range](std::string& v) -> std::string {
        const auto x = to_real(v);
        return x && ok(*x) ? std::string() : "'" + v + "' is not a number " + range;
      },
      "", "range"));
  return *this;
}

Options& Options::text(const std::string& names, std::optional<std::string> fallback, const std::string& help,
                       std::function<void(const std::string&)> check) {
  auto& e = impl_->add(names, help, std::move(fallback));
  e.option->type_name("TEXT");
  if (check)
    e.option->check(CLI::Validator(
        [check](std::string& v) -> std::string {
          try {
            check(v);
          } catch (const Error& err) {
            std::string m = err.what();
            const std::string prefix = "randnla: ";
            return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
          }
          return {};
        },
        "", "check"));
  return *this;
}

Options& Options::flag(const std::string& names, const std::string& help) {
  auto& e = impl_->entries[key_of(names)];
  e.is_flag = true;
  e.option = impl_->app.add_flag(flag_names(names), help)->disable_flag_override();
  return *this;
}

Options& Options::required(const std::string& name) {
  impl_->entries.at(name).option->required();
  return *this;
}

int Options::parse(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)  // a flag never takes a value, not even an empty one
    for (const auto& [name, e] : impl_->entries)
      if (const std::string a = argv[i]; e.is_flag && a.rfind("--" + name + "=", 0) == 0) {
        std::fprintf(stderr, "randnla %s: --%s is a flag and takes no value ('%s')\n", impl_->command.c_str(),
                     name.c_str(), a.c_str());
        return kExitUsage;
      }
  try {
    impl_->app.parse(argc - 1, argv + 1);  // the command's name in the place of the program's
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", impl_->app.help().c_str());
    return kExitSuccess;
  } catch (const CLI::CallForVersion&) {
    std::printf("%s\n", impl_->app.version().c_str());
    return kExitSuccess;
  } catch (const CLI::ExtrasError&) {
    std::string list;
    for (const auto& a : impl_->app.remaining()) list += " " + a;
    std::fprintf(stderr, "randnla %s: not an option of this command, or a surplus argument:%s (see randnla %s --help)\n",
                 impl_->command.c_str(), list.c_str(), impl_->command.c_str());
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    std::string m = e.what();
    for (char& c : m)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "randnla %s: %s (see randnla %s --help)\n", impl_->command.c_str(), m.c_str(),
                 impl_->command.c_str());
    return kExitUsage;
  }
  for (auto& [name, e] : impl_->entries) e.set = e.option->count() > 0;
  return -1;
}

std::vector<std::pair<std::string, std::string>> Options::values() const {
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& [name, e] : impl_->entries) {
    if (e.is_flag) v.emplace_back(name, e.set ? "true" : "false");
    else if (e.set) v.emplace_back(name, e.value);
    else if (e.fallback) v.emplace_back(name, *e.fallback);
  }
  return v;
}

bool Options::has(const std::string& name) const { return impl_->entries.at(name).set; }

std::string Options::text(const std::string& name) const {
  const auto& e = impl_->entries.at(name);
  if (e.set) return e.value;
  if (!e.fallback) throw InvalidArgument("--" + name, "(missing)", "is required here");
  return *e.fallback;
}

long long Options::integer(const std::string& name) const {
  const auto v = to_integer(text(name));
  if (!v) throw InvalidArgument("--" + name, text(name), "must be an integer");
  return *v;
}

double Options::real(const std::string& name) const {
  const auto v = to_real(text(name));
  if (!v) throw InvalidArgument("--" + name, text(name), "must be a number");
  return *v;
}

}  // namespace cli
}  // namespace randnla
