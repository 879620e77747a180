# The install is relocatable and its CMake package clean (issue #54): installs the build to P1,
# moves P1 to P2, then, against P2 only,
#  1. checks that no installed file names the build tree or P1;
#  2. configures a consumer asking a component this build lacks, which must fail saying so;
#  3. builds and runs unit_tests/install_consumer asking no component, with MPI and the CUDA
#     toolkit hidden and C++14 asked for (the package's cxx_std_17 must win), compiling every
#     installed header: it checks the package sets no variable and only <P2>/include as include
#     path, runs an RSVD, and checks the CUDA module (with CUDA) loaded from P2 with the build id;
#  4. the same consumer asking every component this build has (cuda: the module it names);
#  5. examples/ built as a project of its own with -std=c++17, and every example run.
# Needs no GPU: loading the module needs the CUDA libraries only.
# Usage: cmake -DSOURCE_DIR= -DBUILD_DIR= -DWORK_DIR= -DCXX= [-DLAUNCHER=] -DCOMPONENTS="mpi;cuda" [-DKOKKOS_NEEDS_CUDA=ON]
#              -P install_relocation.cmake
cmake_minimum_required(VERSION 3.20)
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(p1 "${WORK_DIR}/p1")
set(p2 "${WORK_DIR}/moved/p2")
run("install to P1" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${p1}")
file(MAKE_DIRECTORY "${WORK_DIR}/moved")
file(RENAME "${p1}" "${p2}")

# 1. Nothing installed names the build tree or the first prefix. "<build>/../core" is the source
#    tree (the CUDA kernels' line tables, where ccache makes include paths relative to the build).
function(occurrences text result)
  execute_process(COMMAND grep -raohF "${text}" "${p2}" OUTPUT_VARIABLE hits)
  string(REGEX MATCHALL "\n" lines "${hits}")
  list(LENGTH lines n)
  set(${result} ${n} PARENT_SCOPE)
endfunction()
foreach(path "${BUILD_DIR}" "${p1}")
  occurrences("${path}" all)
  occurrences("${path}/../" outside)
  if(NOT all EQUAL outside)
    execute_process(COMMAND grep -rlF "${path}" "${p2}" OUTPUT_VARIABLE hits)
    message(FATAL_ERROR "the install names ${path} in:\n${hits}")
  endif()
endforeach()
execute_process(COMMAND grep -rlE "/cuda[^/]*/lib|libnccl\\.so" "${p2}/lib/cmake" OUTPUT_VARIABLE hits)
if(hits)
  message(FATAL_ERROR "the CMake package names a toolkit path in:\n${hits}")
endif()

set(common -DCMAKE_PREFIX_PATH=${p2} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
set(consumer "${SOURCE_DIR}/unit_tests/install_consumer")

# 2. A component this build lacks fails with the reason.
set(missing cuda)
if(cuda IN_LIST COMPONENTS)
  set(missing fortran)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${consumer}" -B "${WORK_DIR}/missing" ${common} "-DCOMPONENTS=${missing}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc OR NOT out MATCHES "(built without its|has no component) ${missing}")
  message(FATAL_ERROR "asking for the component ${missing} did not fail with the reason (${rc}):\n${out}")
endif()
message(STATUS "component ${missing} refused: ok")

# 3. Host only, nothing else found (the CUDA toolkit only where Kokkos itself does not need it).
set(build "${WORK_DIR}/host_only")
set(hidden -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON)
if(NOT KOKKOS_NEEDS_CUDA)
  list(APPEND hidden -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
endif()
run("configure the host-only consumer" ${CMAKE_COMMAND} -S "${consumer}" -B "${build}" ${common} -DCHECK_HEADERS=ON
    -DCMAKE_CXX_STANDARD=14 ${hidden})
run("build the host-only consumer" ${CMAKE_COMMAND} --build "${build}")
run("run the host-only consumer" ${CMAKE_COMMAND} -E env --unset=RANDNLA_CUDA_MODULE "${build}/consumer")

# 4. Every component this build has.
set(build "${WORK_DIR}/components")
run("configure the consumer of ${COMPONENTS}" ${CMAKE_COMMAND} -S "${consumer}" -B "${build}" ${common} "-DCOMPONENTS=${COMPONENTS}")
run("build the consumer of ${COMPONENTS}" ${CMAKE_COMMAND} --build "${build}")
run("run the consumer of ${COMPONENTS}" ${CMAKE_COMMAND} -E env --unset=RANDNLA_CUDA_MODULE "${build}/consumer")

# 5. The examples, a project of their own, in C++17, each run (the MPI one on 2 ranks).
set(build "${WORK_DIR}/examples")
set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run("configure the examples in C++17" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples" -B "${build}" ${common} ${launcher}
    -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_STANDARD_REQUIRED=ON -DCMAKE_CXX_EXTENSIONS=OFF)
run("build the examples" ${CMAKE_COMMAND} --build "${build}" -j2)
execute_process(COMMAND grep -rq -- "-std=c++17" "${build}/CMakeFiles/example_rsvd_quickstart.dir/flags.make" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the examples were not compiled with -std=c++17")
endif()
run("run the examples" ${CMAKE_COMMAND} -E env --unset=RANDNLA_CUDA_MODULE ${CMAKE_CTEST_COMMAND} --test-dir "${build}" --output-on-failure)
