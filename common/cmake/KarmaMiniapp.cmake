# karma_add_miniapp(NAME source...): the executable karma-NAME on the core.
function(karma_add_miniapp name)
  set(target karma-${name})
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE karma::core karma_warnings)
  karma_kokkos_sources(${target})
  install(TARGETS ${target} EXPORT karmaTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

set(KARMA_RUN_TEST_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/run_test.cmake")

# karma_add_run_test(NAME n COMMAND exe args... [RANKS r] [EXIT code] [MATCH regex]
#                    [APP app] [NO_OUTPUT_FLAG])
# Runs a mini-app (under mpiexec when RANKS > 1), checks its exit code and
# output; on exit 0 or 1 checks the results JSON with karma-validate-results,
# on any other exit that no results file was written.
function(karma_add_run_test)
  cmake_parse_arguments(T "NO_OUTPUT_FLAG" "NAME;RANKS;EXIT;MATCH;APP" "COMMAND" ${ARGN})
  if(NOT T_RANKS)
    set(T_RANKS 1)
  endif()
  if(NOT DEFINED T_EXIT)
    set(T_EXIT 0)
  endif()
  set(launcher "")
  if(T_RANKS GREATER 1)
    if(NOT KARMA_ENABLE_MPI)
      return()
    endif()
    set(launcher ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${MPIEXEC_PREFLAGS})
  endif()
  string(JOIN "@@" command ${launcher} ${T_COMMAND})
  set(output "")
  if(NOT T_NO_OUTPUT_FLAG)
    set(output "${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}.json")
  endif()
  add_test(NAME ${T_NAME}
    COMMAND ${CMAKE_COMMAND}
      "-DCOMMAND=${command}"
      "-DOUTPUT=${output}"
      "-DEXPECT_EXIT=${T_EXIT}"
      "-DMATCH=${T_MATCH}"
      "-DAPP=${T_APP}"
      "-DRANKS=${T_RANKS}"
      "-DVALIDATOR=$<TARGET_FILE:karma-validate-results>"
      -P "${KARMA_RUN_TEST_SCRIPT}")
  # Two OpenMP threads, so races can show on a 2-core machine; Open MPI may
  # run as root in containers and oversubscribe the 2 cores.
  set_tests_properties(${T_NAME} PROPERTIES
    PROCESSORS ${T_RANKS}
    LABELS "run"
    ENVIRONMENT "OMP_NUM_THREADS=2;OMP_PROC_BIND=false;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endfunction()
