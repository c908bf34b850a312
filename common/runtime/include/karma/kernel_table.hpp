// A mini-app's kernel table: every kernel it can measure, declared once in
// the mini-app, beside where it registers its variants. The tools read it
// from --help=json and from every results document (docs/results-format.md,
// kernel_table) instead of knowing the mini-apps by heart, and run_main
// refuses a measured kernel the table does not declare, so the two cannot
// drift apart.
//
// A name, variant, implementation or work may hold `{field}`: it stands for
// each value of the table's field of that name, the same value wherever it
// appears in one entry (contact's "{storage}.build", variant "{storage}").
//
//   KernelTable t;
//   t.fields["scheme"] = {"row-per-thread", "team-per-row"};
//   t.kernels.push_back({"csr-{scheme}", {"kokkos"}, "{scheme}", "product", "GB/s", "bytes"});
//
// An entry's count, repetitions and figures are expressions the tools
// derive a result's figures again from (karma-bundle check: a forged figure
// disagrees with its inputs), over a tiny grammar: numbers, 'strings',
// + - * /, comparisons, `a if test else b`, max() and min(); a dotted name
// reads the results document (problem.elements_global), `kernel.` the
// kernel checked, `kernels['name'].` another kernel of the result. What a
// result does not record makes the expression, and its check, void.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace karma {

struct KernelEntry {
  KernelEntry(std::string name, std::vector<std::string> implementations, std::string variant,
              std::string work, std::string units, std::string per, std::string count = "",
              std::string time = "best")
      : name(std::move(name)),
        implementations(std::move(implementations)),
        variant(std::move(variant)),
        work(std::move(work)),
        units(std::move(units)),
        per(std::move(per)),
        count(std::move(count)),
        time(std::move(time)) {}

  std::string name;
  std::vector<std::string> implementations;
  std::string variant;
  // Kernels of one work are alternatives (variants, storages, libraries): a
  // tier's figure for the work is the best of those it allows.
  std::string work;
  std::string units;  // of the figure of merit
  // What the figure divides by time: "bytes", "flops", or a count of items
  // ("elements", "pairs"): kernels[].fom.count from the table on, else
  // `count`, an expression over the document (results written before it).
  std::string per;
  std::string count;
  // FigureOfMerit::Time (karma/harness.hpp): "best", one execution's work
  // over the minimum time; "mean", all the work over all the time.
  std::string time = "best";
  // time_s.count, an expression: empty, deck.resolved.run.repetitions.
  std::string repetitions;
  // The kernel's figures beside its figure of merit and the harness's rates
  // (a dotted path in the kernel: "rows_per_s", "elements_per_second.best"),
  // each with the expression that gives it.
  std::map<std::string, std::string> figures;
  bool higher_is_better = true;
  bool scored = true;  // whether the procurement score may count it
};

// One entry with its fields' values put in: a kernel the app can measure.
struct DeclaredKernel {
  std::string name, variant, work;
  std::vector<std::string> implementations;
  const KernelEntry* entry = nullptr;
};

struct KernelTable {
  std::map<std::string, std::vector<std::string>> fields;
  std::vector<KernelEntry> kernels;

  // Every kernel the table declares, each entry's fields expanded.
  std::vector<DeclaredKernel> expand() const;
  // {"fields": {...}, "kernels": [{name, implementation, variant, work,
  // units, per, count, time, repetitions, figures, higher_is_better,
  // scored}]}: count, repetitions and figures only where declared.
  nlohmann::json json() const;
};

// Why a measured kernel disagrees with the declared kernels (a table's
// expand(): no entry of its name, another implementation, variant, units or
// direction); empty: it agrees.
std::string disagreement(const std::vector<DeclaredKernel>& declared, const std::string& name,
                         const std::string& implementation, const std::string& variant,
                         const std::string& units, bool higher_is_better);

// Throws std::logic_error, a programming error, naming the first measured
// kernel (a KernelResult, karma/app.hpp) the table does not declare as it
// ran: a table that drifted from the code fails every run of it, so the
// tests find it. A template: app.hpp includes this header.
template <class Measured>
void require_declared(const std::string& app, const KernelTable& table,
                      const std::vector<Measured>& measured) {
  const std::vector<DeclaredKernel> declared = table.expand();  // once, not per kernel
  for (const auto& k : measured)
    if (const std::string why = disagreement(declared, k.name, k.implementation, k.variant,
                                             k.fom_units, k.higher_is_better);
        !why.empty())
      throw std::logic_error("karma-" + app + " measured kernel '" + k.name +
                             "' against its kernel table: " + why);
}

}  // namespace karma
