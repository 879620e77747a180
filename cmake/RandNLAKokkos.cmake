# Finds Kokkos and Kokkos Kernels and repairs Debian's Trilinos packaging (3.4.01), so the rest
# of the build sees two targets, Kokkos::kokkos and Kokkos::kokkoskernels, whatever the source:
#  - Debian's Kokkos::kokkos points its include directory at <prefix>/lib/include;
#  - Debian exports no Kokkos::kokkoskernels, only trilinos_kokkoskernels and variables;
#  - Debian ships no KokkosKernels version file, so find_package(KokkosKernels 3.4) fails: the
#    version is taken from Kokkos, with which Trilinos releases it.
# A Kokkos 4.x install (e.g. from Spack) already has all of this and passes through untouched.
include_guard(GLOBAL)
include(CMakeFindDependencyMacro)

if(NOT TARGET Kokkos::kokkos)
  find_dependency(Kokkos)
endif()
if(NOT TARGET Kokkos::kokkoskernels)
  find_dependency(KokkosKernels)
endif()

get_target_property(_randnla_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
if(_randnla_kokkos_inc)
  set(_randnla_fixed_inc "")
  foreach(_dir IN LISTS _randnla_kokkos_inc)
    if(_dir MATCHES "^\\$<" OR EXISTS "${_dir}")
      list(APPEND _randnla_fixed_inc "${_dir}")
    endif()
  endforeach()
  if(DEFINED Kokkos_INCLUDE_DIRS)
    foreach(_dir IN LISTS Kokkos_INCLUDE_DIRS)
      get_filename_component(_dir "${_dir}" REALPATH)
      list(APPEND _randnla_fixed_inc "${_dir}")
    endforeach()
  endif()
  list(REMOVE_DUPLICATES _randnla_fixed_inc)
  set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_randnla_fixed_inc}")
endif()

if(NOT TARGET Kokkos::kokkoskernels)
  if(NOT TARGET trilinos_kokkoskernels)
    message(FATAL_ERROR "randnla: Kokkos Kernels was found but exports neither Kokkos::kokkoskernels nor trilinos_kokkoskernels")
  endif()
  add_library(Kokkos::kokkoskernels INTERFACE IMPORTED)
  set(_randnla_kk_inc "")
  foreach(_dir IN LISTS KokkosKernels_INCLUDE_DIRS)
    get_filename_component(_dir "${_dir}" REALPATH)
    list(APPEND _randnla_kk_inc "${_dir}")
  endforeach()
  set_target_properties(Kokkos::kokkoskernels PROPERTIES
    INTERFACE_LINK_LIBRARIES "trilinos_kokkoskernels;Kokkos::kokkos"
    INTERFACE_INCLUDE_DIRECTORIES "${_randnla_kk_inc}")
endif()
if(NOT KokkosKernels_VERSION)
  set(KokkosKernels_VERSION "${Kokkos_VERSION}")
endif()
if(KokkosKernels_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR "randnla needs Kokkos Kernels >= 3.4, found ${KokkosKernels_VERSION}")
endif()
