# karma_dependency(): a library the suite builds on, from the system when it is
# installed there, else built with the suite from a source the user gives or
# downloads.
#
# karma_dependency(<name> PACKAGE <find_package name> VERSION <min version>
#                  SOURCE_VERSION <pinned version> URL <release archive> SHA256 <hash>
#                  [OPTIONS <var>=<value>...])
#
# In order:
#   1. find_package(<PACKAGE> <VERSION>): an installed package always wins.
#   2. KARMA_<NAME>_SOURCE (a CMake variable, else the environment variable of
#      that name; <NAME> is <name> in capitals, '-' as '_'): a source
#      directory or a release archive of the pinned version, for machines
#      without internet.
#   3. The pinned release downloaded from URL, checked against SHA256.
# OPTIONS are set before the library's own CMakeLists.txt runs (its tests off,
# its install rules on where karma's exported targets need them).
# Sets KARMA_<NAME>_ORIGIN to "system", "source" or "download", and
# KARMA_<NAME>_VERSION to the version found or built.
include(FetchContent)
if(POLICY CMP0135)
  cmake_policy(SET CMP0135 NEW)  # extracted files get the time of extraction
endif()

function(karma_dependency name)
  cmake_parse_arguments(D "" "PACKAGE;VERSION;SOURCE_VERSION;URL;SHA256" "OPTIONS" ${ARGN})
  string(TOUPPER "${name}" upper)
  string(REPLACE "-" "_" upper "${upper}")
  set(source_var KARMA_${upper}_SOURCE)

  find_package(${D_PACKAGE} ${D_VERSION} QUIET)
  if(${D_PACKAGE}_FOUND)
    message(STATUS "karma: ${D_PACKAGE} ${${D_PACKAGE}_VERSION} from the system")
    set(KARMA_${upper}_ORIGIN system PARENT_SCOPE)
    set(KARMA_${upper}_VERSION "${${D_PACKAGE}_VERSION}" PARENT_SCOPE)
    return()
  endif()

  set(source "${${source_var}}")
  if(NOT source)
    set(source "$ENV{${source_var}}")
  endif()
  if(source)
    get_filename_component(source "${source}" ABSOLUTE)
    if(IS_DIRECTORY "${source}" AND EXISTS "${source}/CMakeLists.txt")
      FetchContent_Declare(${name} SOURCE_DIR "${source}")
    elseif(EXISTS "${source}" AND NOT IS_DIRECTORY "${source}")
      FetchContent_Declare(${name} URL "${source}")
    else()
      message(FATAL_ERROR "karma: ${source_var}=${source} is neither a source directory with a "
        "CMakeLists.txt nor an archive: give ${D_PACKAGE} ${D_SOURCE_VERSION}'s source there")
    endif()
    message(STATUS "karma: ${D_PACKAGE} not installed; building it from ${source}")
    set(origin source)
  else()
    message(STATUS "karma: ${D_PACKAGE} not installed; downloading ${D_SOURCE_VERSION} from "
      "${D_URL} (without internet, set ${source_var} to its source directory or archive)")
    FetchContent_Declare(${name} URL "${D_URL}" URL_HASH SHA256=${D_SHA256})
    set(origin download)
  endif()

  foreach(option IN LISTS D_OPTIONS)
    string(REGEX MATCH "^([^=]+)=(.*)$" _ "${option}")
    set(${CMAKE_MATCH_1} "${CMAKE_MATCH_2}" CACHE INTERNAL "set by karma_dependency(${name})")
  endforeach()
  # CMake 4 refuses the old minimum versions some of these releases declare
  # (yaml-cpp 0.8.0 says 3.4); this scope only, never karma's own.
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 4.0 AND NOT DEFINED CMAKE_POLICY_VERSION_MINIMUM)
    set(CMAKE_POLICY_VERSION_MINIMUM 3.5)
  endif()
  FetchContent_MakeAvailable(${name})
  set(KARMA_${upper}_ORIGIN ${origin} PARENT_SCOPE)
  set(KARMA_${upper}_VERSION "${D_SOURCE_VERSION}" PARENT_SCOPE)
endfunction()
