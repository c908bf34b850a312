// GoogleTest main for tests that need Kokkos running.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstring>
#include <string>
#include <type_traits>

namespace {

// A suite named ...OnGpu or ...OnHost runs only on that kind of backend: the
// other kind's builds leave it out.
void leave_out_the_other_backend() {
  constexpr bool gpu =
      !std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;
#ifdef GTEST_FLAG_GET
  std::string filter = GTEST_FLAG_GET(filter);
#else
  std::string filter = ::testing::GTEST_FLAG(filter);
#endif
  filter += filter.find('-') == std::string::npos ? "-" : ":";
  filter += gpu ? "*OnHost.*" : "*OnGpu.*";
#ifdef GTEST_FLAG_SET
  GTEST_FLAG_SET(filter, filter);
#else
  ::testing::GTEST_FLAG(filter) = filter;
#endif
}

}  // namespace

int main(int argc, char* argv[]) {
  // Listing the tests needs no Kokkos, and Kokkos' start-up warnings on
  // stdout would otherwise read as test names.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gtest_list_tests") == 0) {
      ::testing::InitGoogleTest(&argc, argv);
      leave_out_the_other_backend();
      return RUN_ALL_TESTS();
    }
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  leave_out_the_other_backend();
  return RUN_ALL_TESTS();
}
