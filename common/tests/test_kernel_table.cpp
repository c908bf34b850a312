// A mini-app's kernel table (karma/kernel_table.hpp): its fields expand, its
// JSON is what the tools read, and a measured kernel it does not declare as
// it ran is refused.
#include "karma/app.hpp"
#include "karma/kernel_table.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using karma::KernelResult;
using karma::KernelTable;

KernelTable contact_like() {
  KernelTable t;
  t.fields["storage"] = {"linked-list", "csr"};
  t.fields["t"] = {"s", "d"};
  t.kernels = {
      {"{storage}.build", {"kokkos"}, "{storage}", "build", "pairs/s", "pairs", "", "mean"},
      {"blas-{t}gemv", {"cblas", "cublas"}, "{t}gemv", "product", "GB/s", "bytes"}};
  return t;
}

KernelResult measured(const std::string& name, const std::string& implementation,
                      const std::string& variant, const std::string& units) {
  KernelResult k;
  k.name = name;
  k.implementation = implementation;
  k.variant = variant;
  k.fom_units = units;
  return k;
}

std::string disagreement(const KernelTable& t, const KernelResult& k) {
  return karma::disagreement(t.expand(), k.name, k.implementation, k.variant, k.fom_units,
                             k.higher_is_better);
}

TEST(KernelTable, ExpandsEveryValueOfItsFields) {
  const auto all = contact_like().expand();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].name, "linked-list.build");
  EXPECT_EQ(all[0].variant, "linked-list");
  EXPECT_EQ(all[0].work, "build");
  EXPECT_EQ(all[1].name, "csr.build");
  EXPECT_EQ(all[3].name, "blas-dgemv");
  EXPECT_EQ(all[3].variant, "dgemv");
  EXPECT_EQ(all[3].implementations, (std::vector<std::string>{"cblas", "cublas"}));
}

TEST(KernelTable, AcceptsWhatItDeclares) {
  const KernelTable t = contact_like();
  EXPECT_EQ(disagreement(t, measured("csr.build", "kokkos", "csr", "pairs/s")), "");
  EXPECT_EQ(disagreement(t, measured("blas-sgemv", "cublas", "sgemv", "GB/s")), "");
  EXPECT_NO_THROW(
      karma::require_declared("toy", t,
                              std::vector<KernelResult>{measured("linked-list.build", "kokkos",
                                                                 "linked-list", "pairs/s")}));
}

TEST(KernelTable, RefusesAKernelThatDriftedFromIt) {
  const KernelTable t = contact_like();
  EXPECT_EQ(disagreement(t, measured("csr.sweep", "kokkos", "csr", "GB/s")),
            "no entry of its name");
  EXPECT_NE(
      disagreement(t, measured("csr.build", "arborx", "csr", "pairs/s")).find("implementation"),
      std::string::npos);
  EXPECT_NE(disagreement(t, measured("csr.build", "kokkos", "csr", "GB/s")).find("units"),
            std::string::npos);
  EXPECT_NE(disagreement(t, measured("csr.build", "kokkos", "ragged", "pairs/s")).find("variant"),
            std::string::npos);
  EXPECT_THROW(karma::require_declared(
                   "toy", t, std::vector<KernelResult>{measured("x", "kokkos", "x", "GB/s")}),
               std::logic_error);
}

TEST(KernelTable, RefusesAFieldItDoesNotHave) {
  KernelTable t;
  t.kernels = {{"{nowhere}.build", {"kokkos"}, "x", "build", "GB/s", "bytes"}};
  EXPECT_THROW(t.expand(), std::logic_error);
}

TEST(KernelTable, WritesTheJsonTheToolsRead) {
  const nlohmann::json j = contact_like().json();
  EXPECT_EQ(j["fields"]["storage"], (nlohmann::json{"linked-list", "csr"}));
  const nlohmann::json& e = j["kernels"][0];
  EXPECT_EQ(e["name"], "{storage}.build");
  EXPECT_EQ(e["implementation"], (nlohmann::json{"kokkos"}));
  EXPECT_EQ(e["work"], "build");
  EXPECT_EQ(e["per"], "pairs");
  EXPECT_EQ(e["time"], "mean");
  EXPECT_EQ(e["higher_is_better"], true);
  EXPECT_EQ(e["scored"], true);
  EXPECT_FALSE(e.contains("count"));
  EXPECT_FALSE(e.contains("repetitions"));
  EXPECT_FALSE(e.contains("figures"));
}

TEST(KernelTable, WritesTheExpressionsItDeclares) {
  KernelTable t = contact_like();
  t.kernels[0].count = "problem.pairs / max(deck.resolved.contact.steps, 1)";
  t.kernels[0].repetitions = "max(deck.resolved.contact.steps, 1)";
  t.kernels[0].figures["rebuild_s_mean"] = "kernel.time_s.mean";
  const nlohmann::json e = t.json()["kernels"][0];
  EXPECT_EQ(e["count"], "problem.pairs / max(deck.resolved.contact.steps, 1)");
  EXPECT_EQ(e["repetitions"], "max(deck.resolved.contact.steps, 1)");
  EXPECT_EQ(e["figures"], (nlohmann::json{{"rebuild_s_mean", "kernel.time_s.mean"}}));
}

}  // namespace
