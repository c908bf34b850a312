# Runs karma-microbench without --benchmark_out in an empty directory and
# checks that results/karma-microbench_*.json appears there with the suite's
# context and the benchmarks that ran.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(
  COMMAND "${EXE}" --sizes=tiny --benchmark_min_time=0 ${THREADS_FLAG}=2
    "--benchmark_filter=^MatVec/serial/"
  WORKING_DIRECTORY "${WORK_DIR}"
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "exit code ${code}, expected 0")
endif()
file(GLOB written "${WORK_DIR}/results/karma-microbench_*.json")
list(LENGTH written count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one results/karma-microbench_*.json, found: ${written}")
endif()
if(NOT out MATCHES "results: results/karma-microbench_[^\n]*\\.json")
  message(FATAL_ERROR "the output does not name the results file")
endif()
file(READ "${written}" json)
foreach(key "\"karma_git\"" "\"kokkos_version\"" "\"kokkos_backends\"" "\"kokkos_view\"" "\"compiler\""
    "\"cxx_flags\"" "\"MatVec/serial/left/dynamic/13x7/karma/real_time\"" "\"bytes_per_second\"")
  string(FIND "${json}" "${key}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${written} lacks ${key}")
  endif()
endforeach()
string(FIND "${json}" "\"Sum3D/" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the filter was not applied")
endif()
