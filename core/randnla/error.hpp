// randnla::Error hierarchy: every failure the library reports is one of these.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace randnla {

/// Base of every exception thrown by randnla.
class Error : public std::runtime_error {
 public:
  /// The message is "randnla: " followed by `what`.
  explicit Error(const std::string& what) : std::runtime_error("randnla: " + what) {}
};

/// A parameter has a value the function does not accept; the message names both.
class InvalidArgument : public Error {
 public:
  /// The message: "randnla: invalid argument <parameter> = <value>: <requirement>", e.g.
  /// "randnla: invalid argument A.ld = 3: must be >= max(1, rows) = 5".
  InvalidArgument(const std::string& parameter, const std::string& value, const std::string& requirement)
      : Error("invalid argument " + parameter + " = " + value + ": " + requirement),
        parameter_(parameter) {}
  /// The name of the parameter that was refused, e.g. "A.ld" or "k".
  const std::string& parameter() const noexcept { return parameter_; }

 private:
  std::string parameter_;
};

/// A factorization met a value that makes it meaningless (e.g. a non-positive Cholesky pivot).
class NumericalBreakdown : public Error {
 public:
  /// The message is "randnla: numerical breakdown: " followed by `what`.
  explicit NumericalBreakdown(const std::string& what) : Error("numerical breakdown: " + what) {}
};

/// The request is well formed but this build or device cannot serve it.
class UnsupportedConfiguration : public Error {
 public:
  /// The message is "randnla: unsupported configuration: " followed by `what`.
  explicit UnsupportedConfiguration(const std::string& what) : Error("unsupported configuration: " + what) {}
};

/// A CUDA, cuBLAS or cuSOLVER call failed; the message carries the library's status text.
class DeviceError : public Error {
 public:
  /// The message is "randnla: device error: " followed by `what` (the failing call and its status text).
  explicit DeviceError(const std::string& what) : Error("device error: " + what) {}
};

namespace detail {
template <class T>
std::string to_text(const T& value) {
  std::ostringstream s;
  s << value;
  return s.str();
}
}  // namespace detail

/// Throws InvalidArgument(parameter, value, requirement) unless `ok`.
template <class T>
void require(bool ok, const std::string& parameter, const T& value, const std::string& requirement) {
  if (!ok) throw InvalidArgument(parameter, detail::to_text(value), requirement);
}

}  // namespace randnla
