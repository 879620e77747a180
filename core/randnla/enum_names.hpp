// One mechanism for the names of enumerations: each enumeration declares its table beside it,
//   inline const EnumNames<E>& names_of(E) { static const EnumNames<E> t{{E::A, "a"}, ...}; return t; }
// and to_string / parse_enum find the table by argument-dependent lookup.
#pragma once

#include <string>
#include <vector>

#include "randnla/error.hpp"

namespace randnla {

template <class E>
struct EnumName {
  E value;
  const char* name;
  bool parsed = true;  ///< false: a value that is only reported, never asked for
};

template <class E>
using EnumNames = std::vector<EnumName<E>>;

template <class E, class = decltype(names_of(E{}))>
const char* to_string(E value) {
  for (const auto& entry : names_of(value))
    if (entry.value == value) return entry.name;
  return "(unnamed)";
}

/// The value named `text`; throws InvalidArgument naming `parameter` and listing the names it takes.
template <class E>
E parse_enum(const std::string& text, const std::string& parameter) {
  std::vector<const char*> accepted;
  for (const auto& entry : names_of(E{}))
    if (entry.parsed) {
      if (text == entry.name) return entry.value;
      accepted.push_back(entry.name);
    }
  std::string list;
  for (std::size_t i = 0; i < accepted.size(); ++i)
    list += std::string(i == 0 ? "" : i + 1 == accepted.size() ? " or " : ", ") + accepted[i];
  throw InvalidArgument(parameter, text, "must be " + list);
}

}  // namespace randnla
