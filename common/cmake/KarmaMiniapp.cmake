# karma_add_miniapp(NAME source...): the executable karma-NAME on the core,
# built into KARMA_BIN_DIR (build/<preset>/bin) and installed into PREFIX/bin.
# Its main.cpp includes karma_code_table.hpp, the source hashes of its code
# (karma/code_version.hpp), made from the sources at every build.
function(karma_add_miniapp name)
  set(target karma-${name})
  add_executable(${target} ${ARGN})
  karma_code_table(${target} ${name})
  target_link_libraries(${target} PRIVATE karma::core karma_warnings)
  karma_kokkos_sources(${target})
  # $<1:...>: the folder itself, without a configuration's subfolder.
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "$<1:${KARMA_BIN_DIR}>")
  install(TARGETS ${target} EXPORT karmaTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

function(karma_code_table target name)
  set(python "${KARMA_TOOLS_BASE_PYTHON}")
  if(NOT python)
    find_package(Python3 REQUIRED COMPONENTS Interpreter)
    set(python "${Python3_EXECUTABLE}")
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/code_table")
  file(GLOB sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/miniapps/${name}/*.hpp"
    "${PROJECT_SOURCE_DIR}/miniapps/${name}/*.cpp"
    "${PROJECT_SOURCE_DIR}/common/*/include/karma/*.hpp" "${PROJECT_SOURCE_DIR}/common/*/src/*.cpp")
  set(tools "${PROJECT_SOURCE_DIR}/python/src")
  add_custom_command(OUTPUT "${dir}/karma_code_table.hpp"
    COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${tools}" "${python}" -B -m
      karma_tools.cli.codeversion "${PROJECT_SOURCE_DIR}" ${name} "${dir}/karma_code_table.hpp"
    DEPENDS ${sources} "${tools}/karma_tools/results/codeversion.py"
      "${tools}/karma_tools/cli/codeversion.py"
    COMMENT "Code versions of karma-${name}" VERBATIM)
  target_sources(${target} PRIVATE "${dir}/karma_code_table.hpp")
  target_include_directories(${target} PRIVATE "${dir}")
endfunction()

set(KARMA_RUN_TEST_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/run_test.cmake")

# This Kokkos' spelling of the host thread count, for tests: Kokkos 3.7
# renamed --kokkos-threads to --kokkos-num-threads and 4.3 dropped the old
# name. KARMA_KOKKOS_OTHER_THREADS_FLAG is the spelling this Kokkos does not
# read (empty from 3.7 to 4.2, which read both).
if(Kokkos_VERSION VERSION_LESS 3.7)
  set(KARMA_KOKKOS_THREADS_FLAG --kokkos-threads)
  set(KARMA_KOKKOS_OTHER_THREADS_FLAG --kokkos-num-threads)
else()
  set(KARMA_KOKKOS_THREADS_FLAG --kokkos-num-threads)
  set(KARMA_KOKKOS_OTHER_THREADS_FLAG "")
  if(Kokkos_VERSION VERSION_GREATER_EQUAL 4.3)
    set(KARMA_KOKKOS_OTHER_THREADS_FLAG --kokkos-threads)
  endif()
endif()

# The flag that loads a Kokkos Tools library (docs/running.md "Profiling with Kokkos
# Tools"): Kokkos 3.7 renamed --kokkos-tools-library to --kokkos-tools-libs
# (4.6 still reads the old name, with a deprecation warning).
if(Kokkos_VERSION VERSION_LESS 3.7)
  set(KARMA_KOKKOS_TOOLS_FLAG --kokkos-tools-library)
else()
  set(KARMA_KOKKOS_TOOLS_FLAG --kokkos-tools-libs)
endif()

# The backend this build's tests run on: cuda, hip or host.
function(karma_test_backend var)
  if(KARMA_HAVE_CUDA)
    set(${var} cuda PARENT_SCOPE)
  elseif(Kokkos_DEVICES MATCHES "HIP")
    set(${var} hip PARENT_SCOPE)
  else()
    set(${var} host PARENT_SCOPE)
  endif()
endfunction()

# karma_runs_here(VAR backend...): VAR is true where this build's backend is
# one of the backends named (host, gpu, cuda, hip). The one way a test says,
# where it is registered, that it runs on some backends only: a build never
# registers a test whose deck or device it refuses.
function(karma_runs_here var)
  karma_test_backend(here)
  set(names ${here})
  if(NOT here STREQUAL "host")
    list(APPEND names gpu)
  endif()
  set(${var} FALSE PARENT_SCOPE)
  foreach(backend IN LISTS ARGN)
    if(NOT backend MATCHES "^(host|gpu|cuda|hip)$")
      message(FATAL_ERROR "karma_runs_here: '${backend}' is not host, gpu, cuda or hip")
    endif()
    if(backend IN_LIST names)
      set(${var} TRUE PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

# karma_add_run_test(NAME n COMMAND exe args... [RANKS r] [EXIT code] [MATCH regex]
#                    [APP app] [NO_OUTPUT_FLAG] [ENERGY] [BACKENDS backend...])
# Runs a mini-app (under mpiexec when RANKS > 1), checks its exit code and
# output; on exit 0 or 1 checks the results JSON with karma-validate-results,
# on any other exit that no results file was written. A run that writes
# results measures no energy (--set run.energy=off): the windows would take
# over a second per kernel on a GPU and test nothing else; ENERGY keeps the
# deck's run.energy. BACKENDS: registered only there (karma_runs_here).
function(karma_add_run_test)
  cmake_parse_arguments(T "NO_OUTPUT_FLAG;ENERGY" "NAME;RANKS;EXIT;MATCH;APP" "COMMAND;BACKENDS"
    ${ARGN})
  if(T_BACKENDS)
    karma_runs_here(here ${T_BACKENDS})
    if(NOT here)
      return()
    endif()
  endif()
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
  set(energy_off OFF)
  if(NOT T_NO_OUTPUT_FLAG)
    set(output "${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}.json")
    if(NOT T_ENERGY)
      set(energy_off ON)
    endif()
  endif()
  add_test(NAME ${T_NAME}
    COMMAND ${CMAKE_COMMAND}
      "-DCOMMAND=${command}"
      "-DOUTPUT=${output}"
      "-DENERGY_OFF=${energy_off}"
      "-DEXPECT_EXIT=${T_EXIT}"
      "-DMATCH=${T_MATCH}"
      "-DAPP=${T_APP}"
      "-DRANKS=${T_RANKS}"
      "-DVALIDATOR=${KARMA_TOOLS_BIN}/karma-validate-results"
      -P "${KARMA_RUN_TEST_SCRIPT}")
  # Two OpenMP threads, so races can show on a 2-core machine; Open MPI may
  # run as root in containers and oversubscribe the 2 cores. Idle OpenMP
  # threads sleep instead of spinning: beside another test on those cores,
  # spinning made a sanitized contact run 1.4x slower.
  set_tests_properties(${T_NAME} PROPERTIES
    PROCESSORS ${T_RANKS}
    LABELS "run"
    ENVIRONMENT "OMP_NUM_THREADS=2;OMP_PROC_BIND=false;OMP_WAIT_POLICY=passive;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endfunction()

# karma_add_kokkos_tools_test(APP app CASES "args"...): the test <app>.kokkos_tools,
# runs of karma-<app> with each case's arguments (split as a shell would, one
# rank) under the Kokkos Tools library of common/tests (kokkos_tool_log.cpp),
# whose log kokkos_tools_test.py checks against the run's results: both
# layouts where the app has them, every variant of its deck. One thread: the
# log, not the speed, is under test. KARMA_KOKKOS_TOOLS_QUICK: run options
# that keep a case short. Nothing without python3 (common/tests warns).
set(KARMA_KOKKOS_TOOLS_QUICK "--set run.warmup=1 --set run.repetitions=2 --set run.energy=off")
function(karma_add_kokkos_tools_test)
  cmake_parse_arguments(K "" "APP" "CASES" ${ARGN})
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(NOT Python3_Interpreter_FOUND OR NOT TARGET karma-${K_APP})
    return()
  endif()
  set(cases "")
  foreach(case IN LISTS K_CASES)
    list(APPEND cases "--case=${case}")
  endforeach()
  add_test(NAME ${K_APP}.kokkos_tools
    COMMAND ${Python3_EXECUTABLE} "${PROJECT_SOURCE_DIR}/common/tests/kokkos_tools_test.py"
      --app ${K_APP} --tool $<TARGET_FILE:karma_kokkos_tool_log>
      --tools-flag=${KARMA_KOKKOS_TOOLS_FLAG} ${cases} $<TARGET_FILE:karma-${K_APP}>)
  set_tests_properties(${K_APP}.kokkos_tools PROPERTIES LABELS "run" TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false;PYTHONDONTWRITEBYTECODE=1")
endfunction()

# karma_add_unit_tests(TARGET t SOURCES s... [LIBRARIES l...] [LOCAL_HEADERS]):
# a GoogleTest executable on karma_test_main, compiled as Kokkos sources,
# registered as one test, unit.<t>, labelled `unit`, on two OpenMP threads:
# one process for all its tests, since on a GPU each process pays the
# device's start-up (about 3 s beside the other tests). Its output names each
# test; `unit.<t> --gtest_filter=...` runs some. LOCAL_HEADERS: the parent
# folder (a mini-app's headers) is on the include path. A test suite whose
# name ends in OnHost or OnGpu runs only on that kind of backend:
# karma_test_main leaves the other kind's out.
function(karma_add_unit_tests)
  cmake_parse_arguments(U "LOCAL_HEADERS" "TARGET" "SOURCES;LIBRARIES" ${ARGN})
  add_executable(${U_TARGET} ${U_SOURCES})
  if(U_LOCAL_HEADERS)
    target_include_directories(${U_TARGET} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/..)
  endif()
  target_link_libraries(${U_TARGET} PRIVATE karma_test_main ${U_LIBRARIES} karma_warnings)
  karma_kokkos_sources(${U_TARGET})
  add_test(NAME unit.${U_TARGET} COMMAND ${U_TARGET})
  set_tests_properties(unit.${U_TARGET} PROPERTIES LABELS unit TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
endfunction()
