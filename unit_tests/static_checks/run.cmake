# Builds one target per case of entry_calls.cpp (static_check_<case>, not built by default) in the
# build tree, with the flags of the library's consumers: VALID must compile; every other case must
# fail, and the first line of the build's output that says "error:" must be the library's
# static_assert ("static assertion failed: randnla: ..."), not a cascade from inside the entry (a "no
# matching function" naming randnla::MatrixView<double> does not count).
# Arguments: BUILD_DIR, CASES (;-separated, VALID first).
set(failed "")
foreach(case ${CASES})
  string(TOLOWER "${case}" target)
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${BUILD_DIR}" --target static_check_${target}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(text "${out}\n${err}")
  if(case STREQUAL "VALID")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the valid calls do not compile (the check itself is broken):\n${text}")
    endif()
    continue()
  endif()
  string(REGEX MATCH "[^\n]*error:[^\n]*" first "${text}")
  if(rc EQUAL 0)
    list(APPEND failed "${case}: compiled")
  elseif(NOT first MATCHES "static.assert[^\n]*randnla: ")
    list(APPEND failed "${case}: the first error is not the library's: ${first}")
  else()
    message(STATUS "${case}: ${first}")
  endif()
endforeach()
if(failed)
  string(REPLACE ";" "\n" failed "${failed}")
  message(FATAL_ERROR "${failed}")
endif()
