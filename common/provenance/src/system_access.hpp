// What provenance reads of the system: first lines of files (sysfs,
// powercap), the environment, and libraries loaded with dlopen (NVML, ROCm
// SMI), which the suite neither links nor needs.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace karma::detail {

inline std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// A non-negative number on a file's first line.
inline std::optional<double> number_in(const std::string& path) {
  const auto line = first_line(path);
  if (!line) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(*line, &used);
    if (used == 0 || v < 0) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// A library loaded for the life of the process; symbols looked up by name.
struct Library {
  void* handle = nullptr;
  template <class F>
  F symbol(const char* name, std::string& why) const {
    void* s = dlsym(handle, name);
    if (!s) why = std::string("no symbol ") + name;
    return reinterpret_cast<F>(s);
  }
};

inline std::optional<Library> load_library(const std::string& path, std::string& why) {
  dlerror();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    why = "cannot load " + path + (e ? std::string(": ") + e : std::string());
    return std::nullopt;
  }
  return Library{h};
}

}  // namespace karma::detail
