# The build id (RANDNLA_BUILD_ID) and the build tree's include root (RANDNLA_INCLUDE_DIRS).
#
# The build id is compiled into the library and into the CUDA module, which the library loads only
# when they are equal (backends/cuda_module.cpp): "<version>+<commit>.<configuration hash>", the
# commit being the source tree's at configure time (with "-dirty" for uncommitted changes) and the
# hash that of what the module's ABI depends on (compilers, Kokkos, architectures, build type).
# It names no path, so that an install can be moved.
find_package(Git QUIET)
set(_randnla_commit "nogit")
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE _randnla_head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _randnla_head)
    set(_randnla_commit ${_randnla_head})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _randnla_changes ERROR_QUIET)
    if(_randnla_changes)
      string(APPEND _randnla_commit "-dirty")
    endif()
  endif()
endif()
string(SHA256 _randnla_config_hash "${CMAKE_CXX_COMPILER_ID};${CMAKE_CXX_COMPILER_VERSION};\
${CMAKE_CUDA_COMPILER_VERSION};${CMAKE_CUDA_ARCHITECTURES};${Kokkos_VERSION};${KokkosKernels_VERSION};\
${CMAKE_BUILD_TYPE};${BUILD_SHARED_LIBS};${RANDNLA_ENABLE_CUDA}")
string(SUBSTRING ${_randnla_config_hash} 0 8 _randnla_config_hash)
set(RANDNLA_BUILD_ID "${PROJECT_VERSION}+${_randnla_commit}.${_randnla_config_hash}")

# The include root of the build tree, as of the install, is randnla/: core/randnla/ (the vocabulary),
# include/randnla/ (links to the algorithms' folders and the transports', committed, so that no
# path of the build tree reaches the CUDA kernels' line tables) and the generated version.hpp.
set(RANDNLA_INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.hpp.in ${PROJECT_BINARY_DIR}/include/randnla/version.hpp @ONLY)
foreach(entry IN LISTS RANDNLA_ALGORITHMS)
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/include/randnla/${entry}/)
    message(FATAL_ERROR "include/randnla/${entry} is missing: link it to the algorithm's folder, "
                        "`ln -s ../../algorithms/${entry} include/randnla/${entry}`")
  endif()
endforeach()
