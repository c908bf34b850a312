// Facts fixed when the suite was built; the results record them.
#pragma once

#include <cstddef>

namespace karma::build_info {

extern const char* const version;       // the project's version
extern const char* const git_describe;  // `git describe --always --dirty`, "unknown" outside git
extern const bool git_dirty;
extern const char* const build_type;
extern const char* const compiler;    // id and version
extern const char* const cxx_flags;   // CMAKE_CXX_FLAGS plus the build type's flags
extern const char* const cuda_flags;  // empty without the CUDA language
extern const bool mpi_enabled;
extern const char* const kokkos_pinned;  // scripts/bootstrap.sh's KOKKOS_PINNED

// The run rules' class decks as the sources held them (docs/run-rules.md).
struct ClassDeck {
  const char* app;
  const char* problem_class;  // small, medium, large, strong
  const char* sha256;         // of the deck file
};
extern const ClassDeck class_decks[];
extern const std::size_t class_deck_count;

}  // namespace karma::build_info
