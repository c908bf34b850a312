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
# The values become C string literals.
foreach(var KARMA_GIT_DESCRIBE KARMA_BUILD_TYPE KARMA_COMPILER KARMA_CXX_FLAGS KARMA_CUDA_FLAGS)
  string(REPLACE "\\" "\\\\" ${var} "${${var}}")
  string(REPLACE "\"" "\\\"" ${var} "${${var}}")
  string(STRIP "${${var}}" ${var})
endforeach()
configure_file("${INPUT}" "${OUTPUT}" @ONLY)
