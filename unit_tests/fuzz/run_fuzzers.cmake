# Builds each reader's libFuzzer target with clang (ASan + UBSan) and runs it for SECONDS on its
# seed corpus, from a fixed random seed; any crash, leak, sanitizer report, hang (> 5 s per input)
# or memory past 2 GiB fails the test. gzip: the decompressor, then every reader on its output.
# Longer runs: the same command with -DSECONDS=3600 (see README).
set(fuzzers npy mtx idx gzip npz)
find_program(CLANGXX NAMES clang++-14 clang++ REQUIRED)
file(MAKE_DIRECTORY "${WORK_DIR}")
foreach(f IN LISTS fuzzers)
  execute_process(COMMAND ${CLANGXX} -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
                          -DRANDNLA_IO_MAX_ELEMENTS=16777216
                          -I${SOURCE_DIR}/cli -I${SOURCE_DIR}/core ${SOURCE_DIR}/unit_tests/fuzz/fuzz_${f}.cpp
                          ${SOURCE_DIR}/cli/io/matrix_io.cpp -lz -lzip -o ${WORK_DIR}/fuzz_${f}
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building fuzz_${f} failed")
  endif()
  file(REMOVE_RECURSE "${WORK_DIR}/corpus_${f}")
  file(COPY "${SOURCE_DIR}/unit_tests/fuzz/seeds/${f}/" DESTINATION "${WORK_DIR}/corpus_${f}")
  execute_process(COMMAND ${WORK_DIR}/fuzz_${f} -max_total_time=${SECONDS} -seed=1 -timeout=5 -rss_limit_mb=2048
                          -max_len=4096 ${WORK_DIR}/corpus_${f}
                  WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCH "Done [0-9]+ runs" done "${err}")
  message(STATUS "fuzz_${f}: ${done} in ${SECONDS} s")
  if(rc)
    message(FATAL_ERROR "fuzz_${f} failed:\n${err}")
  endif()
endforeach()
