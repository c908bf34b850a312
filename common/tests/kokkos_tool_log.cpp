// A Kokkos Tools library for the tests (ctest <app>.kokkos_tools): it writes
// every region, kernel launch and metadata entry of a run, in order, to the
// file named by KARMA_KOKKOS_TOOL_LOG, one tab-separated event a line:
//
//   init      <interface version>
//   metadata  <key> <value>
//   push      <region>
//   pop
//   for|reduce|scan  <label> <the C++ type the label names, or empty>
//   finalize  <kernels begun> <kernels ended>
//
// Kokkos names an unlabelled kernel after its functor's type (typeid's name,
// and "/" and the work tag's); the last field says whether every "/"-separated
// part of the label demangles as a type, so the checker can refuse such a
// label. Tabs, newlines and backslashes in text are escaped as \t, \n, \\.
// Only the callbacks' C interface: no Kokkos header, so one build serves
// Kokkos 3.x and 4.x.
#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::FILE* log_file = nullptr;
std::uint64_t next_kernel = 0, kernels_ended = 0;

std::string escaped(const char* text) {
  std::string out;
  for (const char* c = text ? text : ""; *c; ++c) {
    if (*c == '\t')
      out += "\\t";
    else if (*c == '\n')
      out += "\\n";
    else if (*c == '\\')
      out += "\\\\";
    else
      out += *c;
  }
  return out;
}

// The demangled type, when every part of `label` is one; else empty.
std::string type_named_by(const std::string& label) {
  std::string types;
  std::size_t start = 0;
  while (start <= label.size()) {
    const std::size_t slash = std::min(label.find('/', start), label.size());
    const std::string part = label.substr(start, slash - start);
    int status = -1;
    char* type =
        part.empty() ? nullptr : abi::__cxa_demangle(part.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !type) {
      std::free(type);
      return "";
    }
    types += (types.empty() ? "" : "/") + std::string(type);
    std::free(type);
    start = slash + 1;
  }
  return types;
}

void write_line(const std::string& line) {
  if (log_file) std::fputs((line + "\n").c_str(), log_file);
}

void begin_kernel(const char* kind, const char* label, std::uint64_t* id) {
  *id = next_kernel++;
  const std::string name = label ? label : "";
  write_line(std::string(kind) + "\t" + escaped(label) + "\t" +
             escaped(type_named_by(name).c_str()));
}

}  // namespace

extern "C" {

void kokkosp_init_library(const int, const std::uint64_t interface_version, const std::uint32_t,
                          void*) {
  const char* path = std::getenv("KARMA_KOKKOS_TOOL_LOG");
  if (!path || !*path) {
    std::fprintf(stderr, "karma test tool: KARMA_KOKKOS_TOOL_LOG names no file; nothing logged\n");
    return;
  }
  log_file = std::fopen(path, "w");
  if (!log_file) std::fprintf(stderr, "karma test tool: cannot write '%s'\n", path);
  write_line("init\t" + std::to_string(interface_version));
}

void kokkosp_finalize_library() {
  write_line("finalize\t" + std::to_string(next_kernel) + "\t" + std::to_string(kernels_ended));
  if (log_file) std::fclose(log_file);
  log_file = nullptr;
}

void kokkosp_declare_metadata(const char* key, const char* value) {
  write_line("metadata\t" + escaped(key) + "\t" + escaped(value));
}

void kokkosp_push_profile_region(const char* name) { write_line("push\t" + escaped(name)); }
void kokkosp_pop_profile_region() { write_line("pop"); }

void kokkosp_begin_parallel_for(const char* label, const std::uint32_t, std::uint64_t* id) {
  begin_kernel("for", label, id);
}
void kokkosp_begin_parallel_reduce(const char* label, const std::uint32_t, std::uint64_t* id) {
  begin_kernel("reduce", label, id);
}
void kokkosp_begin_parallel_scan(const char* label, const std::uint32_t, std::uint64_t* id) {
  begin_kernel("scan", label, id);
}
void kokkosp_end_parallel_for(const std::uint64_t) { ++kernels_ended; }
void kokkosp_end_parallel_reduce(const std::uint64_t) { ++kernels_ended; }
void kokkosp_end_parallel_scan(const std::uint64_t) { ++kernels_ended; }

}  // extern "C"
