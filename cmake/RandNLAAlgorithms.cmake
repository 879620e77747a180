# From RANDNLA_ALGORITHMS: the algorithms' sources (RANDNLA_ALGORITHM_SOURCES), their CUDA kernels
# (RANDNLA_ALGORITHM_CUDA_SOURCES, and RANDNLA_ALGORITHM_SM90_SOURCES for the *_sm90.cu files that
# exist only as sm_90a code), in RANDNLA_GENERATED_DIR each backend's provide_algorithm_ops: the
# one place that hands a backend the operations of every listed algorithm that has any there; and
# the public header randnla/algorithms.hpp, which includes every listed algorithm's Kokkos entry
# points (algorithms/<name>/kokkos_api.hpp, where it has them) for randnla/randnla.hpp.
set(RANDNLA_GENERATED_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated)
set(RANDNLA_ALGORITHM_SOURCES)
set(RANDNLA_ALGORITHM_CUDA_SOURCES)
set(RANDNLA_ALGORITHM_SM90_SOURCES)
set(_portable_includes "")
set(_portable_calls "")
set(_cuda_declarations "")
set(_cuda_calls "")
set(_kokkos_entries "")
foreach(alg IN LISTS RANDNLA_ALGORITHMS)
  if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/algorithms/${alg})
    message(FATAL_ERROR "RANDNLA_ALGORITHMS: algorithms/${alg}/ does not exist")
  endif()
  if(EXISTS ${PROJECT_SOURCE_DIR}/algorithms/${alg}/kokkos_api.hpp)
    string(APPEND _kokkos_entries "#include \"randnla/${alg}/kokkos_api.hpp\"\n")
  endif()
  file(GLOB _sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/algorithms/${alg}/*.cpp)
  list(APPEND RANDNLA_ALGORITHM_SOURCES ${_sources})
  if(EXISTS ${PROJECT_SOURCE_DIR}/backends/portable/${alg}/provide_ops.hpp)
    string(APPEND _portable_includes "#include \"portable/${alg}/provide_ops.hpp\"\n")
    string(APPEND _portable_calls "  provide_${alg}_ops(exec, b);\n")
  endif()
  file(GLOB _cuda CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/backends/cuda/${alg}/*.cu)
  foreach(file IN LISTS _cuda)
    if(file MATCHES "_sm90\\.cu$")
      list(APPEND RANDNLA_ALGORITHM_SM90_SOURCES ${file})
    else()
      list(APPEND RANDNLA_ALGORITHM_CUDA_SOURCES ${file})
    endif()
  endforeach()
  if(EXISTS ${PROJECT_SOURCE_DIR}/backends/cuda/${alg}/provide_ops.cu)
    string(APPEND _cuda_declarations "void provide_${alg}_ops(const Resources& r, DeviceContext& c);\n")
    string(APPEND _cuda_calls "  provide_${alg}_ops(r, c);\n")
  endif()
endforeach()

file(CONFIGURE OUTPUT ${RANDNLA_GENERATED_DIR}/portable_algorithm_ops.hpp CONTENT
"// Generated from RANDNLA_ALGORITHMS by cmake/RandNLAAlgorithms.cmake: do not edit.
#pragma once

#include \"randnla/backend.hpp\"
${_portable_includes}
namespace randnla {
namespace portable {

/// Provides every listed algorithm's operations on the portable backend `b` running on `exec`.
template <class Exec>
void provide_algorithm_ops([[maybe_unused]] const Exec& exec, [[maybe_unused]] Backend& b) {
${_portable_calls}}

}  // namespace portable
}  // namespace randnla
")

# A header, included by backends/cuda/cuda_backend.cu, not a generated .cu: a compiled file of the
# build tree would put the build's path into the module (the device code's file names).
file(CONFIGURE OUTPUT ${RANDNLA_GENERATED_DIR}/cuda_algorithm_ops.cuh CONTENT
"// Generated from RANDNLA_ALGORITHMS by cmake/RandNLAAlgorithms.cmake: do not edit.
#pragma once

#include \"cuda/context/resources.cuh\"

namespace randnla {
namespace cuda {

${_cuda_declarations}
/// Provides every listed algorithm's operations on the CUDA backend's context `c`.
inline void provide_algorithm_ops([[maybe_unused]] const Resources& r, [[maybe_unused]] DeviceContext& c) {
${_cuda_calls}}

}  // namespace cuda
}  // namespace randnla
")

file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/include/randnla/algorithms.hpp CONTENT
"// Generated from RANDNLA_ALGORITHMS by cmake/RandNLAAlgorithms.cmake: do not edit. The Kokkos
// entry points of every algorithm that has its own (algorithms/<name>/kokkos_api.hpp); include
// <randnla/randnla.hpp>, which includes this.
#pragma once

${_kokkos_entries}")
