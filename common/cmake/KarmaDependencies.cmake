# Finds what the suite builds on. Kokkos: a Kokkos the user names with
# Kokkos_ROOT (or Kokkos_DIR) wins; otherwise the threaded Kokkos that
# scripts/bootstrap.sh builds into the user's cache is found as a hint.
set(_karma_cache "$ENV{KARMA_CACHE_DIR}")
if(NOT _karma_cache)
  if(DEFINED ENV{XDG_CACHE_HOME})
    set(_karma_cache "$ENV{XDG_CACHE_HOME}/karma")
  else()
    set(_karma_cache "$ENV{HOME}/.cache/karma")
  endif()
endif()
find_package(Kokkos 3.4 REQUIRED
  HINTS "${_karma_cache}/kokkos-4.6.01-openmp" "${_karma_cache}/kokkos-3.4.01-openmp"
        "${_karma_cache}/kokkos-3.4.01-serial-debian")
message(STATUS "karma: Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}")

# A Kokkos built with its CUDA backend as a CMake language compiles every
# source that includes Kokkos as CUDA (see karma_kokkos_sources).
set(KARMA_KOKKOS_LANGUAGE CXX)
if(Kokkos_COMPILE_LANGUAGE STREQUAL "CUDA")
  if(NOT CMAKE_CUDA_ARCHITECTURES AND Kokkos_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "${Kokkos_CUDA_ARCHITECTURES}")
  endif()
  enable_language(CUDA)
  set(KARMA_KOKKOS_LANGUAGE CUDA)
endif()
# Hand-written CUDA and vendor-library variants of the mini-apps exist only in
# a build whose Kokkos has the CUDA backend (sources test KOKKOS_ENABLE_CUDA).
set(KARMA_HAVE_CUDA OFF)
if(Kokkos_DEVICES MATCHES "CUDA" OR KARMA_KOKKOS_LANGUAGE STREQUAL "CUDA")
  set(KARMA_HAVE_CUDA ON)
  find_package(CUDAToolkit REQUIRED)
endif()

# NCCL moves device data between ranks (run.comm: nccl) where CUDA and MPI
# are on: from NCCL_ROOT, the CUDA toolkit, or the folders of the Python
# package nvidia-nccl-cu* (as pip installs it beside PyTorch). Without it
# the suite builds and runs as before, over MPI.
set(KARMA_HAVE_NCCL OFF)
option(KARMA_ENABLE_NCCL "Use NCCL for device data between ranks where it is found" ON)
if(KARMA_HAVE_CUDA AND KARMA_ENABLE_MPI AND KARMA_ENABLE_NCCL)
  set(_karma_nccl_hints "${NCCL_ROOT}" "$ENV{NCCL_ROOT}" "$ENV{NCCL_HOME}"
    "${CUDAToolkit_LIBRARY_ROOT}" "${CUDAToolkit_TARGET_DIR}")
  find_program(_karma_nccl_python NAMES python3)
  if(_karma_nccl_python)
    execute_process(COMMAND "${_karma_nccl_python}" -c
        "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _karma_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    list(APPEND _karma_nccl_hints "${_karma_nccl_wheel}")
  endif()
  file(GLOB _karma_nccl_globbed /usr/local/lib/python3*/dist-packages/nvidia/nccl
    /usr/lib/python3/dist-packages/nvidia/nccl)
  list(APPEND _karma_nccl_hints ${_karma_nccl_globbed})
  find_path(KARMA_NCCL_INCLUDE_DIR nccl.h HINTS ${_karma_nccl_hints} PATH_SUFFIXES include)
  # NAMES_PER_DIR: the library beside the header found (the Python package
  # ships only libnccl.so.2), not another NCCL of the system's first.
  get_filename_component(_karma_nccl_home "${KARMA_NCCL_INCLUDE_DIR}" DIRECTORY)
  find_library(KARMA_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
    HINTS "${_karma_nccl_home}" ${_karma_nccl_hints} PATH_SUFFIXES lib lib64)
  if(KARMA_NCCL_INCLUDE_DIR AND KARMA_NCCL_LIBRARY)
    set(KARMA_HAVE_NCCL ON)
    message(STATUS "karma: NCCL ${KARMA_NCCL_LIBRARY} (run.comm: nccl)")
  else()
    message(STATUS "karma: no NCCL found (NCCL_ROOT, the CUDA toolkit, the Python package "
                   "nvidia-nccl-cu*): device data between ranks goes over MPI")
  endif()
endif()

# karma_link_cublas(target): links cuBLAS where CUDA is on and defines
# KARMA_HAVE_CUBLAS for the sources; a no-op elsewhere.
function(karma_link_cublas target)
  if(KARMA_HAVE_CUDA)
    target_link_libraries(${target} PRIVATE CUDA::cublas)
    target_compile_definitions(${target} PRIVATE KARMA_HAVE_CUBLAS=1)
  endif()
endfunction()

# Marks sources that include Kokkos to be compiled the way Kokkos needs
# (all of the target's .cpp files when none are named).
function(karma_kokkos_sources target)
  if(KARMA_KOKKOS_LANGUAGE STREQUAL "CUDA")
    set(_sources ${ARGN})
    if(NOT _sources)
      get_target_property(_sources ${target} SOURCES)
    endif()
    foreach(_s IN LISTS _sources)
      if(_s MATCHES "\\.cpp$")
        set_source_files_properties(${_s} PROPERTIES LANGUAGE CUDA)
      endif()
    endforeach()
    if(Kokkos_CUDA_ARCHITECTURES)
      set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${Kokkos_CUDA_ARCHITECTURES}")
    endif()
  endif()
endfunction()

# The libraries: installed ones win; otherwise built from KARMA_<NAME>_SOURCE
# or a download of the pinned release (KarmaFetch.cmake). The versions and
# hashes are those of the projects' release archives.
include(KarmaFetch)
karma_dependency(yaml-cpp PACKAGE yaml-cpp SOURCE_VERSION 0.8.0
  URL https://github.com/jbeder/yaml-cpp/archive/refs/tags/0.8.0.tar.gz
  SHA256 fbe74bbdcee21d656715688706da3c8becfd946d92cd44705cc6098bb23b3a16
  OPTIONS YAML_CPP_BUILD_TESTS=OFF YAML_CPP_BUILD_TOOLS=OFF YAML_CPP_BUILD_CONTRIB=OFF
          YAML_CPP_INSTALL=ON)
karma_dependency(nlohmann-json PACKAGE nlohmann_json VERSION 3.10 SOURCE_VERSION 3.11.3
  URL https://github.com/nlohmann/json/archive/refs/tags/v3.11.3.tar.gz
  SHA256 0d8ef5af7f9794e3263480193c491549b2ba6cc74bb018906202ada498a79406
  OPTIONS JSON_BuildTests=OFF JSON_Install=ON)
if(TARGET yaml-cpp::yaml-cpp)
  set(KARMA_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(KARMA_YAML_TARGET yaml-cpp)  # yaml-cpp 0.7 exports an unnamespaced target
endif()

# Google Benchmark: karma-microbench measures with it (its runner, its
# flags) and writes its results through a reporter of the suite's.
karma_dependency(benchmark PACKAGE benchmark VERSION 1.7 SOURCE_VERSION 1.7.1
  URL https://github.com/google/benchmark/archive/refs/tags/v1.7.1.tar.gz
  SHA256 6430e4092653380d9dc4ccb45a1e2dc9259d581f4866dc0759713126056bc1d7
  OPTIONS BENCHMARK_ENABLE_TESTING=OFF BENCHMARK_ENABLE_GTEST_TESTS=OFF
          BENCHMARK_ENABLE_WERROR=OFF BENCHMARK_ENABLE_INSTALL=ON BENCHMARK_INSTALL_DOCS=OFF)

if(KARMA_ENABLE_MPI)
  # The C API only: the deprecated C++ bindings (libmpi_cxx) are not needed.
  find_package(MPI REQUIRED COMPONENTS C)
endif()

if(KARMA_ENABLE_TESTS)
  karma_dependency(googletest PACKAGE GTest SOURCE_VERSION 1.14.0
    URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz
    SHA256 8ad598c73ad796e0d8280b082cebd82a630d73e73cd3c70057938a6501bba5d7
    OPTIONS INSTALL_GTEST=OFF BUILD_GMOCK=OFF)
endif()

# Warnings for the suite's own targets, whichever compiler drives them.
add_library(karma_warnings INTERFACE)
target_compile_options(karma_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
if(KARMA_ENABLE_WARNINGS_AS_ERRORS)
  target_compile_options(karma_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror>)
endif()

if(KARMA_ENABLE_SANITIZERS)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>)
  add_link_options(-fsanitize=address,undefined)
endif()

include(KarmaMiniapp)
