// Checking y (matvec_kernels.hpp): the tolerance, the device reference from
// the closed form of A and x, and a host reference in long double; a run's
// check of every entry of y (FullCheck), the fault run.inject_fault y-entry
// plants, and what the results record of them.
#pragma once

#include "matvec_basics.hpp"

#include "karma/app.hpp"
#include "karma/comm.hpp"
#include "karma/deck.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace karma::matvec {

// ---------------------------------------------------------------------------
// Verification: every entry of y, against a reference computed on the
// device from the closed form of A and x.

// Rounding error of any order of summing `terms` products (the kernels'
// partial sums, mdrange's column blocks, the Allreduce of y = A^T x over
// ranks: all are summation trees of the same products) is at most
// gamma_terms * sum |b||x| ~ terms * u * sum |b||x| with u = eps / 2
// (Higham, Accuracy and Stability, 3.1). The reference below is within about
// u_double * sum |b||x| of the exact value. So (terms + 2) eps, eps of the
// element type, covers both with a factor 2 to spare; it grows with the row
// length because the bound does, and is not tuned to the kernels.
template <class T>
double tolerance_for(std::int64_t terms) {
  return static_cast<double>(terms + 2) * static_cast<double>(std::numeric_limits<T>::epsilon());
}

// A compensated sum (TwoSum at every step: Ogita, Rump and Oishi's Sum2)
// and sum |p| beside it. For exact terms p_k the result is within
// u |sum p| + gamma_{n-1}^2 sum |p| of the exact sum: for n = 2^30 terms the
// second part is below 1.3e-13 u sum |p|, so the result is the exact sum
// rounded, give or take an ulp. Partial sums merge with += (TwoSum of the
// sums, carries added), as Kokkos' reductions combine threads' values, with
// the same bound. No multiplications: a compiler contracting into FMAs
// cannot change it.
struct CompensatedSum {
  double sum, carry, size;
  KOKKOS_INLINE_FUNCTION CompensatedSum() : sum(0), carry(0), size(0) {}
  KOKKOS_INLINE_FUNCTION void add_exactly(const double p) {
    const double s = sum + p;
    const double bp = s - sum;
    carry += (sum - (s - bp)) + (p - bp);
    sum = s;
  }
  KOKKOS_INLINE_FUNCTION void add(const double p) {
    add_exactly(p);
    // fabs: `p < 0 ? -p : p` compiled to a branch, which mispredicted on
    // random signs and tripled the reference's time on a CPU.
    size += math::fabs(p);
  }
  KOKKOS_INLINE_FUNCTION CompensatedSum& operator+=(const CompensatedSum& o) {
    add_exactly(o.sum);
    carry += o.carry;
    size += o.size;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile CompensatedSum& o) volatile {
    CompensatedSum a, b;
    a.sum = sum;
    a.carry = carry;
    a.size = size;
    b.sum = o.sum;
    b.carry = o.carry;
    b.size = o.size;
    a += b;
    sum = a.sum;
    carry = a.carry;
    size = a.size;
  }
  KOKKOS_INLINE_FUNCTION double value() const { return sum + carry; }
};

}  // namespace karma::matvec

// The zero that Kokkos' sum reductions start a CompensatedSum from.
namespace Kokkos {
template <>
struct reduction_identity<karma::matvec::CompensatedSum> {
  KOKKOS_FORCEINLINE_FUNCTION static karma::matvec::CompensatedSum sum() {
    return karma::matvec::CompensatedSum();
  }
};
}  // namespace Kokkos

namespace karma::matvec {

// The exact entries of y (rounded once to double) and the scale of each,
// sum_k |a_k x_k|, that rounding errors are bounded by.
template <class Memory>
struct ExactEntries {
  Kokkos::View<double*, Memory> value, scale;
  std::int64_t first = 0;  // value(i) is entry first + i of y
  std::int64_t count() const { return static_cast<std::int64_t>(value.extent(0)); }
};

template <class Memory>
ExactEntries<Memory> allocate_exact(std::int64_t first, std::int64_t count) {
  ExactEntries<Memory> e;
  e.value = Kokkos::View<double*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::exact"), count);
  e.scale = Kokkos::View<double*, Memory>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::exact_scale"), count);
  e.first = first;
  return e;
}

// Entries first .. first + count - 1 of y = A x (rows of A from row0, `terms`
// columns) or of y = A^T x (columns of A, `terms` rows from 0), for the
// seeded A and x(k) = vector_entry(seed, k), every a regenerated from its
// hash (nothing stored is read, none of the measured kernels' code runs).
// x and, for A^T, the rows' keys are computed once, so an entry of A costs
// one hash. Products of two 24-bit values are exact in double, so the sums
// are the only rounding.
template <class Exec = Kokkos::DefaultExecutionSpace>
ExactEntries<typename Exec::memory_space> dense_exact(std::uint64_t seed, bool transpose,
                                                      std::int64_t row0, std::int64_t first,
                                                      std::int64_t count, std::int64_t terms) {
  using Memory = typename Exec::memory_space;
  using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  auto e = allocate_exact<Memory>(first, count);
  const auto value = e.value;
  const auto scale = e.scale;
  const Kokkos::View<double*, Memory> xs(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::verify::x"), terms);
  const Kokkos::View<std::uint64_t*, Memory> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::verify::row_keys"),
      transpose ? terms : 0);
  Kokkos::parallel_for(
      "matvec::verify::x", Range(0, terms), KOKKOS_LAMBDA(const std::int64_t k) {
        xs(k) = vector_entry(seed, k);
        if (transpose) keys(k) = row_key(seed, k);
      });
  // A team an entry, its threads over the terms (one thread on a CPU): a
  // GPU stays busy with few long rows (64 x 2^22) as with many. Leagues of
  // at most 2^30 teams (a league size is an int).
  using Team = Kokkos::TeamPolicy<Exec>;
  constexpr std::int64_t most = std::int64_t{1} << 30;
  for (std::int64_t base = 0; base < count; base += most) {
    const int league = static_cast<int>(count - base < most ? count - base : most);
    Kokkos::parallel_for(
        "matvec::verify::dense_exact", Team(league, Kokkos::AUTO),
        KOKKOS_LAMBDA(const typename Team::member_type& team) {
          const std::int64_t i = base + team.league_rank();
          const std::int64_t r = first + i;
          const std::uint64_t key = transpose ? 0 : row_key(seed, row0 + r);
          CompensatedSum total;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, terms),
              [&](const std::int64_t k, CompensatedSum& part) {
                const double a = transpose ? keyed_entry(keys(k), r) : keyed_entry(key, k);
                part.add(a * xs(k));
              },
              total);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            value(i) = total.value();
            scale(i) = total.size;
          });
        });
  }
  return e;
}

// max over the entries of |y - exact| / scale (a zero scale counts as 1);
// infinity when an entry of y is NaN or infinite, so a kernel that never
// wrote y fails. `y` holds all of y (entry first + i for exact's i).
template <class HostExact, class HostVector>
double worst_scaled_error(const HostExact& exact, const HostVector& y) {
  double worst = 0;
  for (std::int64_t i = 0; i < exact.count(); ++i) {
    const double computed = static_cast<double>(y(exact.first + i));
    if (!std::isfinite(computed)) return std::numeric_limits<double>::infinity();
    const double scale = exact.scale(i) > 0 ? exact.scale(i) : 1.0;
    const double e = std::fabs(computed - exact.value(i)) / scale;
    if (!(e == e)) return std::numeric_limits<double>::infinity();
    if (e > worst) worst = e;
  }
  return worst;
}

template <class Memory>
ExactEntries<Kokkos::HostSpace> to_host(const ExactEntries<Memory>& e) {
  ExactEntries<Kokkos::HostSpace> h;
  h.value = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, e.value);
  h.scale = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, e.scale);
  h.first = e.first;
  return h;
}

// ---------------------------------------------------------------------------
// A host reference in long double: the unit tests' oracle for the checker
// above (the mini-app itself uses dense_exact and csr_exact).

// Exact y values of chosen rows, and sum |b||x| for each.
struct Reference {
  std::vector<std::int64_t> rows;
  std::vector<long double> exact;
  std::vector<long double> scale;
};

// Adds row `row` with y(row) = sum_{k < terms} entry(k) * xval(k).
template <class Entry, class XValue>
void add_reference_row(Reference& ref, std::int64_t row, std::int64_t terms, Entry&& entry,
                       XValue&& xval) {
  long double exact = 0, scale = 0;
  for (std::int64_t k = 0; k < terms; ++k) {
    const long double p = static_cast<long double>(entry(k)) * static_cast<long double>(xval(k));
    exact += p;
    scale += std::fabs(p);
  }
  ref.rows.push_back(row);
  ref.exact.push_back(exact);
  ref.scale.push_back(scale);
}

// max over the reference rows of |y(row) - exact| / sum |b||x|; infinity for
// a NaN or infinite y.
template <class HostVector>
double max_scaled_error(const Reference& ref, const HostVector& y) {
  double worst = 0;
  for (std::size_t s = 0; s < ref.rows.size(); ++s) {
    const long double computed = static_cast<long double>(y(ref.rows[s]));
    const long double scale = ref.scale[s] > 0 ? ref.scale[s] : 1.0L;
    double e = static_cast<double>(std::fabs(computed - ref.exact[s]) / scale);
    if (!(e == e) || !std::isfinite(static_cast<double>(computed)))
      e = std::numeric_limits<double>::infinity();
    if (e > worst) worst = e;
  }
  return worst;
}

// ---------------------------------------------------------------------------
// A run's check.

// The check of every entry of y (matvec_kernels.hpp): the exact entries this
// rank checks, computed once on the device from the closed form of A and x
// before the timed runs and compared on the host with each implementation's
// y, and the fault that run.inject_fault y-entry injects. Cost: one hash and a TwoSum
// an entry of A: at 16384^2 doubles on the 2-core VM 0.55 s, 7-9x one timed
// product (16-29x in float; README), recorded as `seconds`; the comparison
// is one pass over y per implementation.
template <class T>
struct FullCheck {
  matvec::ExactEntries<Kokkos::HostSpace> exact;
  double seconds = 0;               // computing the reference, slowest rank
  bool corrupt = false;             // run.inject_fault: y-entry
  std::int64_t corrupt_index = -1;  // the entry of y this rank corrupts; -1: none
  T corrupt_by = 0;
  std::int64_t corrupt_rank = -1;  // where, for the JSON: the rank and its row
  std::int64_t corrupt_row = -1;   // (y = A x) or the entry of y (y = A^T x)
};

template <class T, class Compute>
FullCheck<T> prepare_check(const RunSettings& run, double tolerance, std::int64_t global_offset,
                           Compute&& compute) {
  FullCheck<T> c;
  c.corrupt = run.inject_fault == "y-entry";
  Kokkos::fence();
  Kokkos::Timer timer;
  const auto exact = compute();
  Kokkos::fence();
  c.seconds = comm::max(timer.seconds());
  c.exact = matvec::to_host(exact);
  if (c.corrupt) {
    // The last rank that checks any entry (not rank 0 when there are
    // several), the middle of its entries: where a sample of evenly spread
    // rows would most likely not look. 4 tolerances: just past what the
    // check must accept.
    const std::int64_t mine = c.exact.count() > 0 ? comm::rank() : -1;
    c.corrupt_rank = comm::max(mine);
    if (c.corrupt_rank == comm::rank()) {
      const std::int64_t i = c.exact.count() / 2;
      c.corrupt_index = c.exact.first + i;
      const double scale = c.exact.scale(i) > 0 ? c.exact.scale(i) : 1.0;
      c.corrupt_by = static_cast<T>(4 * tolerance * scale);
    }
    c.corrupt_row =
        comm::max(c.corrupt_index < 0 ? std::int64_t{-1} : global_offset + c.corrupt_index);
  }
  return c;
}

// Adds the fault to y in device memory, after the runs (before the
// Allreduce of y = A^T x, so every rank's copy carries it).
template <class Vector, class T>
void corrupt(const Vector& y, std::int64_t index, T by) {
  if (index < 0) return;
  Kokkos::parallel_for(
      "matvec::corrupt", Kokkos::RangePolicy<DefaultSpace, Kokkos::IndexType<std::int64_t>>(0, 1),
      KOKKOS_LAMBDA(const std::int64_t) { y(index) += by; });
  Kokkos::fence();
}

template <class T>
nlohmann::json verification_json(const FullCheck<T>& check) {
  return {{"entries_checked", "all: every entry of y, on every rank, for every implementation"},
          {"entries_checked_per_rank", allgather_json(check.exact.count())},
          {"reference",
           "compensated double sums of the closed form of A and x (nothing stored is read), on "
           "the device: dense a team an entry, its threads over the terms; CSR a thread a row"},
          {"reference_seconds", check.seconds},
          {"corrupt", check.corrupt},
          {"corrupted", check.corrupt ? nlohmann::json{{"rank", check.corrupt_rank},
                                                       {"entry_of_y", check.corrupt_row}}
                                      : nlohmann::json(nullptr)}};
}

}  // namespace karma::matvec
