# randnla_find_nccl(): RandNLA::nccl_library, an imported target for NCCL found beside the CUDA
# toolkit (find_package(CUDAToolkit) first), both by the build and by the installed package at the
# consumer's configure time, so that the exported RandNLA::randnla_nccl names the target, never a
# path. Sets no variable in the caller's scope (the cache entries of find_path and find_library apart).
include_guard(GLOBAL)
function(randnla_find_nccl)
  if(TARGET RandNLA::nccl_library)
    return()
  endif()
  find_path(RANDNLA_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(RANDNLA_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
  if(RANDNLA_NCCL_INCLUDE_DIR AND RANDNLA_NCCL_LIBRARY)
    add_library(RandNLA::nccl_library UNKNOWN IMPORTED)
    set_target_properties(RandNLA::nccl_library PROPERTIES IMPORTED_LOCATION ${RANDNLA_NCCL_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${RANDNLA_NCCL_INCLUDE_DIR})
  endif()
endfunction()
