// GoogleTest main for tests that need Kokkos running.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstring>

int main(int argc, char* argv[]) {
  // Listing the tests (ctest's discovery) needs no Kokkos, and Kokkos' start-up
  // warnings on stdout would otherwise be read as test names.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gtest_list_tests") == 0) {
      ::testing::InitGoogleTest(&argc, argv);
      return RUN_ALL_TESTS();
    }
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
