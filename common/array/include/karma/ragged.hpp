// Ragged arrays: rows (or columns) of different lengths, on any Kokkos
// memory space, usable inside device kernels.
//
//   Ragged<T, Layout>      compressed lists: offsets (N + 1, 64-bit) and values,
//                          a list contiguous. Layout picks what a list is:
//   RaggedRight<T>         Ragged<T, Kokkos::LayoutRight>, compressed rows:
//                          r(i, j) is entry j of row i.
//   RaggedDown<T>          Ragged<T, Kokkos::LayoutLeft>, compressed columns:
//                          d(i, j) is entry i of column j.
//   DynamicRaggedRight<T>  N rows of fixed capacity plus a count per row;
//                          push_back(i, v) is safe from many threads at once.
//   DynamicRaggedDown<T>   its column-major twin: (i, j) is entry i of column j.
//                          (A dynamic array's Layout is that of its storage.)
//
// All are handles with the copy semantics of Kokkos::View: copying one
// (into a lambda, say) shares the data; kernels capture them by value.
//
// Building compressed arrays: from list sizes in a View (a device scan) or
// a std::vector (host), from rows or columns of values (host), by count /
// scan / fill kernels (build_ragged_right), from a dynamic array
// (to_compressed), or by adopting offsets and values one already has.
// sizes_to_offsets is the scan alone. Host copies: create_mirror,
// deep_copy, create_mirror_view_and_copy, to_host.
//
// Offsets and counts are std::int64_t, so a ragged array may hold more than
// 2^31 entries. A dynamic row never writes outside its capacity: a push past
// it stores nothing but still counts, so after the kernel the caller learns
// the largest requested count (max_count) and can grow to it and refill
// (fill_growing does both). Nothing is ever lost silently or written into
// another row.
#pragma once

#include "karma/error.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace karma {

namespace ragged_detail {

template <class MemorySpace>
using exec_of = typename MemorySpace::execution_space;

template <class MemorySpace>
using offsets_view = Kokkos::View<std::int64_t*, MemorySpace>;

// The running sum of a scan and how many sizes were negative, carried
// together (+= and a zero default are all Kokkos needs of a scan value), so
// that the check needs no counter in device memory: on a GPU its allocation,
// copy back and free cost more than the scan.
struct SumAndNegatives {
  std::int64_t sum = 0;
  std::int64_t negatives = 0;
  KOKKOS_INLINE_FUNCTION SumAndNegatives& operator+=(const SumAndNegatives& o) {
    sum += o.sum;
    negatives += o.negatives;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile SumAndNegatives& o) volatile {
    sum += o.sum;
    negatives += o.negatives;
  }
};

// offsets(i) = sizes(0) + ... + sizes(i - 1) for i = 0..n; returns offsets(n).
// A negative size is an error: it could only come from a bug upstream, and
// it would make rows overlap.
template <class SizesView, class OffsetsView>
std::int64_t exclusive_scan(const std::string& label, const SizesView& sizes,
                            const OffsetsView& offsets) {
  using MemorySpace = typename OffsetsView::memory_space;
  using Exec = exec_of<MemorySpace>;
  const std::int64_t n = static_cast<std::int64_t>(sizes.extent(0));
  SumAndNegatives total;
  Kokkos::parallel_scan(
      label, Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n + 1),
      KOKKOS_LAMBDA(const std::int64_t i, SumAndNegatives& v, const bool final) {
        const std::int64_t s = i < n ? static_cast<std::int64_t>(sizes(i)) : 0;
        if (final) offsets(i) = v.sum;
        if (s < 0)
          v.negatives += 1;
        else
          v.sum += s;
      },
      total);
  if (total.negatives > 0)
    throw Error(exit_runtime_error,
                label + ": " + std::to_string(total.negatives) + " negative row size(s)");
  return total.sum;
}

template <class MemorySpace>
std::int64_t last_offset(const offsets_view<MemorySpace>& offsets) {
  std::int64_t last = 0;
  if (offsets.extent(0) > 0)
    Kokkos::deep_copy(last, Kokkos::subview(offsets, offsets.extent(0) - 1));
  return last;
}

}  // namespace ragged_detail

// offsets(i) = sizes(0) + ... + sizes(i - 1) for i = 0 .. N (a parallel scan
// in the offsets' memory space); returns the total, offsets(N). offsets has
// N + 1 entries; sizes may be any integer type. Throws on a negative size.
template <class SizesView, class OffsetsView>
std::int64_t sizes_to_offsets(const std::string& label, const SizesView& sizes,
                              const OffsetsView& offsets) {
  if (offsets.extent(0) != sizes.extent(0) + 1)
    throw Error(exit_runtime_error, label + ": offsets need " +
                                        std::to_string(sizes.extent(0) + 1) + " entries, not " +
                                        std::to_string(offsets.extent(0)));
  return ragged_detail::exclusive_scan(label, sizes, offsets);
}

namespace ragged_detail {

// Offsets and values: the storage both compressed arrays share.
template <class T, class MemorySpace>
struct Compressed {
  offsets_view<MemorySpace> offsets;
  Kokkos::View<T*, MemorySpace> values;
};

template <class T, class MemorySpace, class SizesView>
Compressed<T, MemorySpace> from_sizes(const std::string& label, const SizesView& sizes,
                                      bool zero_fill) {
  static_assert(std::is_integral<typename SizesView::non_const_value_type>::value,
                "row sizes are integers");
  Compressed<T, MemorySpace> c;
  c.offsets = offsets_view<MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::offsets"), sizes.extent(0) + 1);
  const std::int64_t total = exclusive_scan(label + "::scan", sizes, c.offsets);
  if (zero_fill)
    c.values = Kokkos::View<T*, MemorySpace>(label + "::values", total);
  else
    c.values = Kokkos::View<T*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::values"), total);
  return c;
}

template <class T, class MemorySpace>
Compressed<T, MemorySpace> from_sizes(const std::string& label,
                                      const std::vector<std::int64_t>& sizes) {
  Compressed<T, MemorySpace> c;
  c.offsets = offsets_view<MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::offsets"), sizes.size() + 1);
  auto host = Kokkos::create_mirror_view(c.offsets);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0)
      throw Error(exit_runtime_error, label + ": row " + std::to_string(i) + " has negative size " +
                                          std::to_string(sizes[i]));
    host(i) = sum;
    sum += sizes[i];
  }
  host(sizes.size()) = sum;
  Kokkos::deep_copy(c.offsets, host);
  c.values = Kokkos::View<T*, MemorySpace>(label + "::values", sum);
  return c;
}

template <class T, class MemorySpace>
Compressed<T, MemorySpace> from_lists(const std::string& label,
                                      const std::vector<std::vector<T>>& lists) {
  std::vector<std::int64_t> sizes(lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i)
    sizes[i] = static_cast<std::int64_t>(lists[i].size());
  auto c = from_sizes<T, MemorySpace>(label, sizes);
  auto host = Kokkos::create_mirror_view(c.values);
  std::size_t k = 0;
  for (const auto& list : lists)
    for (const auto& v : list) host(k++) = v;
  Kokkos::deep_copy(c.values, host);
  return c;
}

template <class T, class MemorySpace>
void check_adopted(const Compressed<T, MemorySpace>& c) {
  if (c.offsets.extent(0) == 0)
    throw Error(exit_runtime_error, "ragged array: offsets need at least one entry (N + 1)");
  const std::int64_t last = last_offset<MemorySpace>(c.offsets);
  if (last != static_cast<std::int64_t>(c.values.extent(0)))
    throw Error(exit_runtime_error, "ragged array: the last offset (" + std::to_string(last) +
                                        ") is not the number of values (" +
                                        std::to_string(c.values.extent(0)) + ")");
}

}  // namespace ragged_detail

// Compressed lists: offsets (N + 1) and values; list k is values
// offsets(k) .. offsets(k + 1) - 1. Layout says, as for a View, which index
// is contiguous: LayoutRight the right one, compressed rows (r(i, j) is
// entry j of row i); LayoutLeft the left one, compressed columns with the
// ragged index first as in Fortran (d(i, j) is entry i of column j).
// values().extent(0) == offsets(N) always holds.
template <class T, class Layout = Kokkos::LayoutRight,
          class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class Ragged {
  static constexpr bool by_rows = std::is_same<Layout, Kokkos::LayoutRight>::value;
  static_assert(by_rows || std::is_same<Layout, Kokkos::LayoutLeft>::value,
                "a ragged array's layout is LayoutRight (rows) or LayoutLeft (columns)");

 public:
  using value_type = T;
  using array_layout = Layout;
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;
  using offsets_type = Kokkos::View<std::int64_t*, MemorySpace>;
  using values_type = Kokkos::View<T*, MemorySpace>;
  using HostMirror = Ragged<T, Layout, Kokkos::HostSpace>;

  Ragged() = default;
  // Adopts existing views (a values view may be a subview of a larger
  // buffer). Checks on the host that offsets has N + 1 entries and that
  // its last entry is values.extent(0).
  Ragged(const offsets_type& offsets, const values_type& values) : c_{offsets, values} {
    ragged_detail::check_adopted(c_);
  }

  // Lists of the given sizes (a View of any integer type in MemorySpace):
  // the offsets come from a parallel scan on the device. Values are zero
  // unless zero_fill is false (then uninitialised: for a fill that writes
  // every entry).
  template <class SizesView>
  static Ragged from_sizes(const std::string& label, const SizesView& sizes,
                           bool zero_fill = true) {
    static_assert(std::is_same<typename SizesView::memory_space, MemorySpace>::value,
                  "the sizes must live in the ragged array's memory space");
    return Ragged(ragged_detail::from_sizes<T, MemorySpace>(label, sizes, zero_fill));
  }
  // The same from sizes on the host; values are zero.
  static Ragged from_sizes(const std::string& label, const std::vector<std::int64_t>& sizes) {
    return Ragged(ragged_detail::from_sizes<T, MemorySpace>(label, sizes));
  }
  // Rows (columns) with their values, from the host.
  static Ragged from_rows(const std::string& label, const std::vector<std::vector<T>>& rows) {
    layout_is<true>();
    return Ragged(ragged_detail::from_lists<T, MemorySpace>(label, rows));
  }
  static Ragged from_columns(const std::string& label, const std::vector<std::vector<T>>& columns) {
    layout_is<false>();
    return Ragged(ragged_detail::from_lists<T, MemorySpace>(label, columns));
  }

  KOKKOS_INLINE_FUNCTION std::int64_t num_rows() const {
    layout_is<true>();
    return num_lists();
  }
  KOKKOS_INLINE_FUNCTION std::int64_t num_cols() const {
    layout_is<false>();
    return num_lists();
  }
  KOKKOS_INLINE_FUNCTION std::int64_t num_entries() const {
    return static_cast<std::int64_t>(c_.values.extent(0));
  }
  // Where list k starts and ends in values().
  KOKKOS_INLINE_FUNCTION std::int64_t begin(std::int64_t k) const { return c_.offsets(k); }
  KOKKOS_INLINE_FUNCTION std::int64_t end(std::int64_t k) const { return c_.offsets(k + 1); }
  KOKKOS_INLINE_FUNCTION std::int64_t row_size(std::int64_t i) const {
    layout_is<true>();
    return c_.offsets(i + 1) - c_.offsets(i);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t col_size(std::int64_t j) const {
    layout_is<false>();
    return c_.offsets(j + 1) - c_.offsets(j);
  }
  // Entry j of row i, or entry i of column j; staying inside the list is
  // the caller's duty, as for a View.
  KOKKOS_INLINE_FUNCTION T& operator()(std::int64_t i, std::int64_t j) const {
    if constexpr (by_rows)
      return c_.values(c_.offsets(i) + j);
    else
      return c_.values(c_.offsets(j) + i);
  }
  KOKKOS_INLINE_FUNCTION const offsets_type& offsets() const { return c_.offsets; }
  KOKKOS_INLINE_FUNCTION const values_type& values() const { return c_.values; }
  // Bytes of offsets and values.
  std::int64_t footprint_bytes() const {
    return static_cast<std::int64_t>(c_.offsets.span() * sizeof(std::int64_t) +
                                     c_.values.span() * sizeof(T));
  }

 private:
  // A member of the other layout (num_rows on columns, say) does not compile.
  template <bool Rows>
  KOKKOS_INLINE_FUNCTION static void layout_is() {
    static_assert(Rows == by_rows,
                  "rows (RaggedRight, LayoutRight) have num_rows, row_size and from_rows; "
                  "columns (RaggedDown, LayoutLeft) num_cols, col_size and from_columns");
  }
  KOKKOS_INLINE_FUNCTION std::int64_t num_lists() const {
    return c_.offsets.extent(0) > 0 ? static_cast<std::int64_t>(c_.offsets.extent(0)) - 1 : 0;
  }
  explicit Ragged(ragged_detail::Compressed<T, MemorySpace> c) : c_(std::move(c)) {}
  ragged_detail::Compressed<T, MemorySpace> c_;
};

// Its two layouts by the names the mini-apps use.
template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using RaggedRight = Ragged<T, Kokkos::LayoutRight, MemorySpace>;
template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
using RaggedDown = Ragged<T, Kokkos::LayoutLeft, MemorySpace>;

// --- mirrors and copies -----------------------------------------------------

// A host array of the same shape: offsets copied (they are the shape),
// values allocated but not copied, as Kokkos::create_mirror.
template <class T, class L, class M>
Ragged<T, L, Kokkos::HostSpace> create_mirror(const Ragged<T, L, M>& r) {
  auto offsets = Kokkos::create_mirror(r.offsets());
  Kokkos::deep_copy(offsets, r.offsets());
  return Ragged<T, L, Kokkos::HostSpace>(offsets, Kokkos::create_mirror(r.values()));
}

// Offsets and values, between any two memory spaces; the shapes must match.
template <class T, class L, class M1, class M2>
void deep_copy(const Ragged<T, L, M1>& dst, const Ragged<T, L, M2>& src) {
  if (dst.offsets().extent(0) != src.offsets().extent(0) ||
      dst.values().extent(0) != src.values().extent(0))
    throw Error(exit_runtime_error, "ragged deep_copy: the arrays differ in shape (" +
                                        std::to_string(src.offsets().extent(0)) + " offsets, " +
                                        std::to_string(src.values().extent(0)) + " values into " +
                                        std::to_string(dst.offsets().extent(0)) + " and " +
                                        std::to_string(dst.values().extent(0)) + ")");
  Kokkos::deep_copy(dst.offsets(), src.offsets());
  Kokkos::deep_copy(dst.values(), src.values());
}

// The array itself when it already lives in Space's memory, else a copy there.
template <class Space, class T, class L, class M>
Ragged<T, L, typename Space::memory_space> create_mirror_view_and_copy(const Space&,
                                                                       const Ragged<T, L, M>& r) {
  using Target = typename Space::memory_space;
  if constexpr (std::is_same<Target, M>::value) {
    return r;
  } else {
    auto offsets = Kokkos::create_mirror_view_and_copy(Target{}, r.offsets());
    auto values = Kokkos::create_mirror_view_and_copy(Target{}, r.values());
    return Ragged<T, L, Target>(offsets, values);
  }
}

template <class T, class L, class M>
Ragged<T, L, Kokkos::HostSpace> to_host(const Ragged<T, L, M>& r) {
  return create_mirror_view_and_copy(Kokkos::HostSpace{}, r);
}

// Count, scan, fill: count(i) returns the size of row i on the device, then
// fill(i, r) writes r(i, 0 .. size - 1). Both run as parallel_for over rows.
template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space, class CountFn,
          class FillFn>
RaggedRight<T, MemorySpace> build_ragged_right(const std::string& label, std::int64_t num_rows,
                                               const CountFn& count, const FillFn& fill) {
  using Exec = typename MemorySpace::execution_space;
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  Kokkos::View<std::int64_t*, MemorySpace> sizes(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "::sizes"), num_rows);
  Kokkos::parallel_for(
      label + "::count", Policy(0, num_rows),
      KOKKOS_LAMBDA(const std::int64_t i) { sizes(i) = count(i); });
  const auto r = RaggedRight<T, MemorySpace>::from_sizes(label, sizes, /*zero_fill=*/false);
  Kokkos::parallel_for(
      label + "::fill", Policy(0, num_rows), KOKKOS_LAMBDA(const std::int64_t i) { fill(i, r); });
  return r;
}

// --- dynamic ragged arrays ----------------------------------------------------

// N rows of `capacity` slots each and a count per row. Layout is the layout
// of the N x capacity storage: LayoutRight keeps a row contiguous (CPUs);
// LayoutLeft keeps slot k of neighbouring rows contiguous, so a GPU thread
// per row reads coalesced.
template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class Layout = Kokkos::LayoutRight>
class DynamicRaggedRight {
 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;
  using array_layout = Layout;
  using counts_type = Kokkos::View<std::int64_t*, MemorySpace>;
  using data_type = Kokkos::View<T**, Layout, MemorySpace>;

  DynamicRaggedRight() = default;
  // Every row starts empty; the slots are not initialised.
  DynamicRaggedRight(const std::string& label, std::int64_t num_rows, std::int64_t capacity)
      : counts_(label + "::counts", checked(label, num_rows, capacity)),
        data_(allocate(label + "::data", num_rows, capacity)) {}

  KOKKOS_INLINE_FUNCTION std::int64_t num_rows() const {
    return static_cast<std::int64_t>(counts_.extent(0));
  }
  KOKKOS_INLINE_FUNCTION std::int64_t capacity() const {
    return static_cast<std::int64_t>(data_.extent(1));
  }
  // How many entries were pushed into row i, including those that did not fit.
  KOKKOS_INLINE_FUNCTION std::int64_t count(std::int64_t i) const { return counts_(i); }
  // How many entries row i holds: the count, at most the capacity.
  KOKKOS_INLINE_FUNCTION std::int64_t row_size(std::int64_t i) const {
    const std::int64_t c = counts_(i);
    return c < capacity() ? c : capacity();
  }
  KOKKOS_INLINE_FUNCTION bool overflowed(std::int64_t i) const { return counts_(i) > capacity(); }
  KOKKOS_INLINE_FUNCTION T& operator()(std::int64_t i, std::int64_t j) const { return data_(i, j); }

  // Appends v to row i; safe when many threads push into one row. Returns
  // the slot the value asked for: at or past capacity() nothing was stored
  // (the row overflowed) but the count still grew.
  KOKKOS_INLINE_FUNCTION std::int64_t push_back(std::int64_t i, const T& v) const {
    const std::int64_t k = Kokkos::atomic_fetch_add(&counts_(i), std::int64_t(1));
    if (k < capacity()) data_(i, k) = v;
    return k;
  }
  // For a row with a single writer (one thread fills it): stores v in slot k
  // only inside capacity, without an atomic; finish with set_count(i, n).
  KOKKOS_INLINE_FUNCTION bool store(std::int64_t i, std::int64_t k, const T& v) const {
    if (k >= capacity()) return false;
    data_(i, k) = v;
    return true;
  }
  KOKKOS_INLINE_FUNCTION void set_count(std::int64_t i, std::int64_t n) const { counts_(i) = n; }

  KOKKOS_INLINE_FUNCTION const counts_type& counts() const { return counts_; }
  KOKKOS_INLINE_FUNCTION const data_type& data() const { return data_; }

  // Every row empty again (a kernel; the storage stays).
  void clear() const {
    const counts_type c = counts_;
    Kokkos::parallel_for(
        "karma::DynamicRagged::clear",
        Kokkos::RangePolicy<execution_space, Kokkos::IndexType<std::int64_t>>(0, num_rows()),
        KOKKOS_LAMBDA(const std::int64_t i) { c(i) = 0; });
  }
  // The largest requested count: above capacity() means some row overflowed
  // and a capacity of max_count() holds every row.
  std::int64_t max_count() const {
    const counts_type c = counts_;
    std::int64_t m = 0;
    Kokkos::parallel_reduce(
        "karma::DynamicRagged::max_count",
        Kokkos::RangePolicy<execution_space, Kokkos::IndexType<std::int64_t>>(0, num_rows()),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& v) {
          if (c(i) > v) v = c(i);
        },
        Kokkos::Max<std::int64_t>(m));
    return num_rows() > 0 ? m : 0;
  }
  // Entries stored (sum of row_size).
  std::int64_t num_entries() const {
    const counts_type c = counts_;
    const std::int64_t cap = capacity();
    std::int64_t s = 0;
    Kokkos::parallel_reduce(
        "karma::DynamicRagged::num_entries",
        Kokkos::RangePolicy<execution_space, Kokkos::IndexType<std::int64_t>>(0, num_rows()),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& v) { v += c(i) < cap ? c(i) : cap; }, s);
    return s;
  }
  std::int64_t overflowed_rows() const {
    const counts_type c = counts_;
    const std::int64_t cap = capacity();
    std::int64_t s = 0;
    Kokkos::parallel_reduce(
        "karma::DynamicRagged::overflowed_rows",
        Kokkos::RangePolicy<execution_space, Kokkos::IndexType<std::int64_t>>(0, num_rows()),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& v) { v += c(i) > cap ? 1 : 0; }, s);
    return s;
  }
  // A larger capacity that keeps every row's stored entries and its count.
  // A row that had overflowed still lacks the entries that did not fit
  // (count() > what it stored): refill those rows (or all, as reallocate).
  // Other copies of the handle keep the old storage.
  void grow(std::int64_t capacity) {
    const std::int64_t old_capacity = this->capacity();
    if (capacity < old_capacity)
      throw Error(exit_runtime_error, data_.label() + ": grow to " + std::to_string(capacity) +
                                          " below the capacity " + std::to_string(old_capacity));
    data_type bigger = allocate(data_.label(), num_rows(), capacity);
    const data_type old = data_;
    const counts_type c = counts_;
    Kokkos::parallel_for(
        "karma::DynamicRagged::grow",
        Kokkos::RangePolicy<execution_space, Kokkos::IndexType<std::int64_t>>(0, num_rows()),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t stored = c(i) < old_capacity ? c(i) : old_capacity;
          for (std::int64_t k = 0; k < stored; ++k) bigger(i, k) = old(i, k);
        });
    data_ = bigger;
  }
  // New storage of the given capacity, every row empty: the old entries are
  // gone, so refill after growing. Other copies of the handle keep the old
  // storage.
  void reallocate(std::int64_t capacity) {
    const std::string label = data_.label();
    counts_ = counts_type(counts_.label(), num_rows());
    data_ = data_type();  // free the old storage before taking the new
    data_ = allocate(label, num_rows(), capacity);
  }
  std::int64_t footprint_bytes() const {
    return static_cast<std::int64_t>(counts_.span() * sizeof(std::int64_t) +
                                     data_.span() * sizeof(T));
  }

 private:
  // Layout left: every slot starts on a whole line (Kokkos pads the rows to
  // 64 bytes), so that a warp's access to a slot of 32 neighbouring rows
  // takes four sectors, not five every other slot, whatever the number of
  // rows. Layout right keeps rows of exactly `capacity`.
  static data_type allocate(const std::string& label, std::int64_t num_rows,
                            std::int64_t capacity) {
    if constexpr (std::is_same_v<Layout, Kokkos::LayoutLeft>)
      return data_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, Kokkos::AllowPadding, label),
                       num_rows, capacity);
    else
      return data_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), num_rows, capacity);
  }
  static std::int64_t checked(const std::string& label, std::int64_t num_rows,
                              std::int64_t capacity) {
    if (num_rows < 0 || capacity < 0)
      throw Error(exit_runtime_error, label + ": negative size (" + std::to_string(num_rows) +
                                          " rows, capacity " + std::to_string(capacity) + ")");
    return num_rows;
  }
  counts_type counts_;
  data_type data_;
};

// The column-major twin: d(i, j) is entry i of column j, push_back(j, v)
// appends to column j. Layout is again that of the storage seen as columns
// x capacity (LayoutRight: a column contiguous, the default; LayoutLeft:
// entry i of neighbouring columns contiguous).
template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space,
          class Layout = Kokkos::LayoutRight>
class DynamicRaggedDown {
 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using execution_space = typename MemorySpace::execution_space;
  using array_layout = Layout;
  using lists_type = DynamicRaggedRight<T, MemorySpace, Layout>;
  using counts_type = typename lists_type::counts_type;
  using data_type = typename lists_type::data_type;

  DynamicRaggedDown() = default;
  DynamicRaggedDown(const std::string& label, std::int64_t capacity, std::int64_t num_cols)
      : lists_(label, num_cols, capacity) {}

  KOKKOS_INLINE_FUNCTION std::int64_t num_cols() const { return lists_.num_rows(); }
  KOKKOS_INLINE_FUNCTION std::int64_t capacity() const { return lists_.capacity(); }
  KOKKOS_INLINE_FUNCTION std::int64_t count(std::int64_t j) const { return lists_.count(j); }
  KOKKOS_INLINE_FUNCTION std::int64_t col_size(std::int64_t j) const { return lists_.row_size(j); }
  KOKKOS_INLINE_FUNCTION bool overflowed(std::int64_t j) const { return lists_.overflowed(j); }
  KOKKOS_INLINE_FUNCTION T& operator()(std::int64_t i, std::int64_t j) const {
    return lists_(j, i);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t push_back(std::int64_t j, const T& v) const {
    return lists_.push_back(j, v);
  }
  KOKKOS_INLINE_FUNCTION bool store(std::int64_t i, std::int64_t j, const T& v) const {
    return lists_.store(j, i, v);
  }
  KOKKOS_INLINE_FUNCTION void set_count(std::int64_t j, std::int64_t n) const {
    lists_.set_count(j, n);
  }
  KOKKOS_INLINE_FUNCTION const counts_type& counts() const { return lists_.counts(); }
  KOKKOS_INLINE_FUNCTION const data_type& data() const { return lists_.data(); }
  // The same storage seen as rows: column j is row j.
  KOKKOS_INLINE_FUNCTION const lists_type& lists() const { return lists_; }

  void clear() const { lists_.clear(); }
  std::int64_t max_count() const { return lists_.max_count(); }
  std::int64_t num_entries() const { return lists_.num_entries(); }
  std::int64_t overflowed_rows() const { return lists_.overflowed_rows(); }
  void grow(std::int64_t capacity) { lists_.grow(capacity); }
  void reallocate(std::int64_t capacity) { lists_.reallocate(capacity); }
  std::int64_t footprint_bytes() const { return lists_.footprint_bytes(); }

 private:
  lists_type lists_;
};

// Empties d, runs fill(d) (which launches the kernels that push into it);
// when a row overflowed, grows d to the largest requested count, empties it
// and runs fill(d) again. Returns the number of refills (0 or 1).
template <class Dynamic, class Fill>
int fill_growing(Dynamic& d, const Fill& fill) {
  d.clear();
  fill(static_cast<const Dynamic&>(d));
  const std::int64_t needed = d.max_count();
  if (needed <= d.capacity()) return 0;
  d.reallocate(needed);
  fill(static_cast<const Dynamic&>(d));
  const std::int64_t again = d.max_count();
  if (again > d.capacity())
    throw Error(exit_runtime_error,
                "dynamic ragged array: the refill asked for " + std::to_string(again) +
                    " slots in a row after growing to " + std::to_string(d.capacity()) +
                    ": the fill is not deterministic in its counts");
  return 1;
}

namespace ragged_detail {
// Compressed copy of the stored entries of a dynamic array, lists in order.
// counts() and data() see rows and columns alike as lists.
template <class Dynamic, class T = typename Dynamic::value_type,
          class M = typename Dynamic::memory_space>
Compressed<T, M> compress(const Dynamic& d, const std::string& label) {
  using Exec = typename M::execution_space;
  using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  if (d.overflowed_rows() > 0)
    throw Error(exit_runtime_error, label + ": " + std::to_string(d.overflowed_rows()) +
                                        " list(s) overflowed their capacity of " +
                                        std::to_string(d.capacity()) +
                                        "; grow and refill before compressing");
  const auto counts = d.counts();
  const auto data = d.data();
  const auto c = from_sizes<T, M>(label, counts, /*zero_fill=*/false);
  const auto offsets = c.offsets;
  const auto values = c.values;
  Kokkos::parallel_for(
      label + "::copy", Policy(0, static_cast<std::int64_t>(counts.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t begin = offsets(i);
        const std::int64_t n = offsets(i + 1) - begin;
        for (std::int64_t k = 0; k < n; ++k) values(begin + k) = data(i, k);
      });
  return c;
}

// What a dynamic array compresses to, and its default label: rows to
// compressed rows, columns to compressed columns.
template <class Dynamic>
struct compressed_of {};
template <class T, class M, class L>
struct compressed_of<DynamicRaggedRight<T, M, L>> {
  using type = RaggedRight<T, M>;
  static constexpr const char* label = "karma::RaggedRight";
};
template <class T, class M, class L>
struct compressed_of<DynamicRaggedDown<T, M, L>> {
  using type = RaggedDown<T, M>;
  static constexpr const char* label = "karma::RaggedDown";
};
}  // namespace ragged_detail

// Dynamic -> compressed: the stored entries, rows (columns) in order. Throws
// if a list overflowed (its missing entries would be lost).
template <class Dynamic>
typename ragged_detail::compressed_of<Dynamic>::type to_compressed(
    const Dynamic& d, const std::string& label = ragged_detail::compressed_of<Dynamic>::label) {
  const auto c = ragged_detail::compress(d, label);
  return typename ragged_detail::compressed_of<Dynamic>::type(c.offsets, c.values);
}

}  // namespace karma
