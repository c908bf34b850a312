# Runs at every build (cmake -P), so the git description in the binaries is
# the one of the sources they were built from. configure_file rewrites the
# output only when it changes, so an unchanged tree recompiles nothing.
execute_process(
  COMMAND git describe --always --dirty --tags
  WORKING_DIRECTORY "${SOURCE_DIR}"
  OUTPUT_VARIABLE KARMA_GIT_DESCRIBE
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET
  RESULT_VARIABLE git_result)
if(NOT git_result EQUAL 0 OR KARMA_GIT_DESCRIBE STREQUAL "")
  set(KARMA_GIT_DESCRIBE "unknown")
endif()
if(KARMA_GIT_DESCRIBE MATCHES "-dirty$")
  set(KARMA_GIT_DIRTY true)
else()
  set(KARMA_GIT_DIRTY false)
endif()
# The run rules' class decks (inputs/<app>/<class>.yaml), by their sha256:
# a run of one of them, as written, is a run of that class.
set(KARMA_CLASS_DECKS "")
file(GLOB _apps RELATIVE "${SOURCE_DIR}/inputs" "${SOURCE_DIR}/inputs/*")
list(SORT _apps)
foreach(_app IN LISTS _apps)
  foreach(_class small medium large strong)
    set(_deck "${SOURCE_DIR}/inputs/${_app}/${_class}.yaml")
    if(EXISTS "${_deck}")
      file(SHA256 "${_deck}" _sha)
      string(APPEND KARMA_CLASS_DECKS "    {\"${_app}\", \"${_class}\", \"${_sha}\"},\n")
    endif()
  endforeach()
endforeach()
# The oldest Kokkos a reportable run may use: the one the set-up pins.
file(STRINGS "${SOURCE_DIR}/scripts/bootstrap.sh" _pinned REGEX "^KOKKOS_PINNED=")
string(REGEX REPLACE "^KOKKOS_PINNED=" "" KARMA_KOKKOS_PINNED "${_pinned}")
if(NOT KARMA_KOKKOS_PINNED MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR "karma: no KOKKOS_PINNED=X.Y.Z in scripts/bootstrap.sh")
endif()
# The values become C string literals.
foreach(var KARMA_GIT_DESCRIBE KARMA_BUILD_TYPE KARMA_COMPILER KARMA_CXX_FLAGS KARMA_CUDA_FLAGS)
  string(REPLACE "\\" "\\\\" ${var} "${${var}}")
  string(REPLACE "\"" "\\\"" ${var} "${${var}}")
  string(STRIP "${${var}}" ${var})
endforeach()
configure_file("${INPUT}" "${OUTPUT}" @ONLY)
