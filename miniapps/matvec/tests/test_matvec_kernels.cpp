// The matvec kernels on small matrices with known products (non-square,
// 1 x N, M x 1), both layouts, transposes read as the other layout; the
// device reference of every entry against a long-double oracle, and the
// checker on seeded data, including corrupted results; the CSR patterns and
// kernels.
#include "matvec_csr.hpp"
#include "matvec_kernels.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace karma_test_matvec {

using namespace karma::matvec;
using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Vector = Kokkos::View<double*, Memory>;

template <class Layout>
using Matrix = Kokkos::View<double**, Layout, Memory>;

// The same storage read with the other layout and swapped extents: A^T.
template <class Layout>
using Other = std::conditional_t<std::is_same<Layout, Kokkos::LayoutLeft>::value,
                                 Kokkos::LayoutRight, Kokkos::LayoutLeft>;
template <class Layout>
using Unmanaged = Kokkos::View<double**, Layout, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Layout>
Unmanaged<Other<Layout>> transposed(const Matrix<Layout>& a) {
  return Unmanaged<Other<Layout>>(a.data(), a.extent(1), a.extent(0));
}

template <class Layout>
Matrix<Layout> from_rows(const std::vector<std::vector<double>>& rows) {
  Matrix<Layout> a("a", rows.size(), rows.at(0).size());
  auto h = Kokkos::create_mirror_view(a);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i].size(); ++j) h(i, j) = rows[i][j];
  Kokkos::deep_copy(a, h);
  return a;
}

Vector from_values(const std::vector<double>& v) {
  Vector x("x", v.size());
  auto h = Kokkos::create_mirror_view(x);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(x, h);
  return x;
}

std::vector<double> to_host(const Vector& y) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

struct Case {
  Variant variant;
  std::int64_t column_blocks;  // mdrange: 0 = the device's choice
  int team_size, vector_length;
  bool interleaved = false;  // mdrange: the GPU's split (a row per item, columns c, c + C, ...)
  int rows_per_thread = 0;   // team-per-row: 0 = the device's choice
  int team_warps = 0;        // mdrange: > 0 sums column ranges inside a team (CUDA, packed columns)
  std::string name() const {
    std::string n = variant == Variant::row_per_thread ? "row-per-thread"
                    : variant == Variant::team_per_row ? "team-per-row"
                                                       : "mdrange";
    return n + " blocks=" + std::to_string(column_blocks) + (interleaved ? " interleaved" : "") +
           " team=" + std::to_string(team_size) + "x" + std::to_string(vector_length) +
           " rows=" + std::to_string(rows_per_thread) + " warps=" + std::to_string(team_warps);
  }
};

// Every variant, with the device's own choices and with forced splits that
// exercise the partial-sum pass and teams of several rows.
std::vector<Case> all_cases() {
  const int lanes = Kokkos::TeamPolicy<Exec>::vector_length_max() >= 4 ? 4 : 1;
  // More lanes than a row has column sets: the sets widen (GPU only).
  const int wide = std::min(32, Kokkos::TeamPolicy<Exec>::vector_length_max());
  // A host team has at most as many threads as the pool.
  const int team = karma::is_gpu_space<Exec>() ? 3 : std::min(2, Exec().concurrency());
  return {{Variant::row_per_thread, 0, 0, 0},
          {Variant::team_per_row, 0, 0, 0},
          {Variant::team_per_row, 0, team, lanes},
          {Variant::team_per_row, 0, 1, 0, false, 1},
          {Variant::team_per_row, 0, team, lanes, false, 2},
          {Variant::team_per_row, 0, team, 0, false, 4},
          {Variant::team_per_row, 0, team, wide, false, 4},
          {Variant::team_per_row, 0, team, 0, false, 8},
          {Variant::team_per_row, 0, team, wide, false, 8},
          {Variant::mdrange, 0, 0, 0},
          {Variant::mdrange, 3, 0, 0},
          {Variant::mdrange, 7, 0, 0},
          {Variant::mdrange, 1, 0, 0, true},
          {Variant::mdrange, 5, 0, 0, true},
          {Variant::mdrange, 0, 0, 0, false, 0, 1},
          {Variant::mdrange, 0, 0, 0, false, 0, 3},
          {Variant::mdrange, 0, 0, 0, false, 0, PackedTeamShape<double>::most_warps}};
}

// Runs one case; y starts as NaN so an entry the kernel skips shows.
template <class M>
std::vector<double> run(const Case& c, const M& b, const Vector& x) {
  Settings s;
  s.team = choose_team_shape(b, c.team_size, c.vector_length, c.rows_per_thread);
  s.tiling = choose_tiling(b, c.column_blocks);
  if (c.interleaved) {
    s.tiling.rows_per_item = 1;
    s.tiling.interleaved = true;
    s.tiling.column_blocks = std::min<std::int64_t>(c.column_blocks, b.extent(1));
    s.tiling.tile0 = s.tiling.tile1 = 1;
  }
  if (c.team_warps > 0) {
    s.tiling.team_warps = c.team_warps;
    s.tiling.column_blocks = 1;
  }
  const Vector y("y", b.extent(0));
  Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
  multiply(c.variant, b, x, y, s, allocate_partials(b, s.tiling));
  Kokkos::fence();
  return to_host(y);
}

template <class Layout>
class KnownProducts : public ::testing::Test {};
using Layouts = ::testing::Types<Kokkos::LayoutLeft, Kokkos::LayoutRight>;
TYPED_TEST_SUITE(KnownProducts, Layouts);

TYPED_TEST(KnownProducts, TwoByThreeAndItsTranspose) {
  const auto a = from_rows<TypeParam>({{1, 2, 3}, {4, 5, 6}});
  for (const auto& c : all_cases()) {
    SCOPED_TRACE(c.name());
    EXPECT_EQ(run(c, a, from_values({1, 2, 3})), (std::vector<double>{14, 32}));
    EXPECT_EQ(run(c, transposed(a), from_values({1, 1})), (std::vector<double>{5, 7, 9}));
    EXPECT_EQ(run(c, transposed(a), from_values({2, -1})), (std::vector<double>{-2, -1, 0}));
  }
}

TYPED_TEST(KnownProducts, RowAndColumnVectors) {
  const auto row = from_rows<TypeParam>({{1, -2, 3, -4, 5}});  // 1 x 5
  const auto col = from_rows<TypeParam>({{2}, {0}, {-1}});     // 3 x 1
  for (const auto& c : all_cases()) {
    SCOPED_TRACE(c.name());
    EXPECT_EQ(run(c, row, from_values({1, 1, 1, 1, 1})), (std::vector<double>{3}));
    EXPECT_EQ(run(c, transposed(row), from_values({2})), (std::vector<double>{2, -4, 6, -8, 10}));
    EXPECT_EQ(run(c, col, from_values({3})), (std::vector<double>{6, 0, -3}));
    EXPECT_EQ(run(c, transposed(col), from_values({1, 5, 1})), (std::vector<double>{1}));
  }
}

// A(i, j) = (i + 1) - 2 (j + 1), x(j) = j + 1: y(i) = (i + 1) S1 - 2 S2 with
// S1 = n(n+1)/2, S2 = n(n+1)(2n+1)/6; with x = ones, (A^T x)(j) = m(m+1)/2 -
// 2 m (j + 1). Integers, exact in double.
TYPED_TEST(KnownProducts, ClosedFormOnManyShapes) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 37},
      {37, 1},
      {1, 1},
      {13, 257},
      {257, 13},
      {67, 1031},
      // Even rows on CUDA read in 16-byte units: steps with every set in
      // range and a last step with some sets past the end (260 columns).
      {45, 260},
      {260, 46},
      // Contiguous columns of an even length on CUDA: several blocks of
      // 128 units of rows, column blocks summed by the tiled second pass;
      // in the one-pass cases 16 teams, the last of 20 units, and with 16
      // warps ranges of 19 columns (a step of 16 units and a rest in double),
      // the last of 15 (a rest only).
      {1000, 300},
      {3, 2}};
  for (const auto& [m, n] : shapes) {
    Matrix<TypeParam> a("a", m, n);
    auto h = Kokkos::create_mirror_view(a);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) h(i, j) = static_cast<double>((i + 1) - 2 * (j + 1));
    Kokkos::deep_copy(a, h);
    std::vector<double> xs(n), ones(m, 1.0);
    for (std::int64_t j = 0; j < n; ++j) xs[j] = static_cast<double>(j + 1);
    const double s1 = n * (n + 1) / 2.0, s2 = n * (n + 1) * (2.0 * n + 1) / 6.0;
    for (const auto& c : all_cases()) {
      SCOPED_TRACE(c.name() + " shape " + std::to_string(m) + " x " + std::to_string(n));
      const auto y = run(c, a, from_values(xs));
      ASSERT_EQ(y.size(), static_cast<std::size_t>(m));
      for (std::int64_t i = 0; i < m; ++i) ASSERT_EQ(y[i], (i + 1) * s1 - 2 * s2) << "row " << i;
      const auto yt = run(c, transposed(a), from_values(ones));
      ASSERT_EQ(yt.size(), static_cast<std::size_t>(n));
      for (std::int64_t j = 0; j < n; ++j)
        ASSERT_EQ(yt[j], m * (m + 1) / 2.0 - 2.0 * m * (j + 1)) << "column " << j;
    }
  }
}

// Which B and x team-per-row reads in 16-byte units: on CUDA rows of an
// even length (in doubles) that start on 16 bytes, beside an x that does;
// nowhere else. With a misaligned x every team-per-row case falls back to
// element loads and gives row-per-thread's y.
TEST(PackedRows, OnlyAlignedContiguousRowsOnCuda) {
  const bool cuda = packed_rows_layout<Matrix<Kokkos::LayoutRight>>();
#if defined(KOKKOS_ENABLE_CUDA)
  EXPECT_EQ(cuda, (std::is_same<Exec, Kokkos::Cuda>::value));
#else
  EXPECT_FALSE(cuda);
#endif
  Matrix<Kokkos::LayoutRight> even("even", 9, 64), odd("odd", 9, 63);
  Matrix<Kokkos::LayoutLeft> left("left", 9, 64);
  const Vector x("x", 65);
  const Vector x64 = Kokkos::subview(x, std::make_pair(0, 64));
  const Vector shifted = Kokkos::subview(x, std::make_pair(1, 65));
  EXPECT_EQ(rows_load_packed(even, x64), cuda);
  EXPECT_FALSE(rows_load_packed(even, shifted));
  EXPECT_FALSE(rows_load_packed(odd, Kokkos::subview(x, std::make_pair(0, 63))));
  EXPECT_FALSE(rows_load_packed(left, x64));
  // Nine rows fill few teams: R = 1 where rows are packed.
  EXPECT_EQ(choose_team_shape(even).rows_per_thread, cuda                          ? 1
                                                     : karma::is_gpu_space<Exec>() ? 4
                                                                                   : 1);

  // The fallback's product.
  auto h = Kokkos::create_mirror_view(even);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 64; ++j) h(i, j) = (i + 1) * (j % 5) - j;
  Kokkos::deep_copy(even, h);
  Kokkos::deep_copy(x, 1.0);
  for (const auto& c : all_cases()) {
    if (c.variant != Variant::team_per_row) continue;
    SCOPED_TRACE(c.name());
    const auto y = run(c, even, shifted);
    const auto expected = run({Variant::row_per_thread, 0, 0, 0}, even, shifted);
    EXPECT_EQ(y, expected);
  }
}

// The device reference (dense_exact: every entry, compensated sums) equals
// the long-double oracle to an ulp of its scale; the checker passes every
// kernel and fails a wrong y: one entry off by a little, a NaN.
template <class Layout>
void check_seeded(bool transpose) {
  // This "rank" holds rows 5..71 of A; A^T x needs all of A's rows (the
  // mini-app adds the ranks' partial products first), so row0 = 0 there.
  const std::int64_t m = 67, n = 1200, row0 = transpose ? 0 : 5;
  const std::uint64_t seed = 7;
  const std::int64_t rows = transpose ? n : m, cols = transpose ? m : n;
  Matrix<Layout> b("b", rows, cols);
  fill_matrix(b, Placement{seed, transpose, row0});
  Vector x("x", cols);
  fill_vector(x, seed, transpose ? row0 : 0);
  Reference ref;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (transpose)
      add_reference_row(
          ref, r, m, [&](std::int64_t k) { return matrix_entry(seed, row0 + k, r); },
          [&](std::int64_t k) { return vector_entry(seed, row0 + k); });
    else
      add_reference_row(
          ref, r, n, [&](std::int64_t k) { return matrix_entry(seed, row0 + r, k); },
          [&](std::int64_t k) { return vector_entry(seed, k); });
  }
  const auto exact = to_host(dense_exact(seed, transpose, row0, 0, rows, cols));
  ASSERT_EQ(exact.count(), rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double scale = static_cast<double>(ref.scale[r]);
    EXPECT_LE(std::fabs(exact.value(r) - static_cast<double>(ref.exact[r])),
              std::numeric_limits<double>::epsilon() * scale)
        << "entry " << r;
    EXPECT_NEAR(exact.scale(r), scale, 1e-13 * scale) << "entry " << r;
  }
  // A share of the entries (as one of several ranks checks of A^T x).
  const auto share = to_host(dense_exact(seed, transpose, row0, 7, 20, cols));
  for (std::int64_t i = 0; i < 20; ++i) EXPECT_EQ(share.value(i), exact.value(7 + i));

  const double tolerance = tolerance_for<double>(cols);
  for (const auto& c : all_cases()) {
    SCOPED_TRACE(c.name());
    auto y = run(c, b, x);
    auto at = [&](std::int64_t i) { return y[i]; };
    EXPECT_LE(worst_scaled_error(exact, at), tolerance);
    EXPECT_LE(max_scaled_error(ref, at), tolerance);
    // Off by a relative 1e-9 of its scale: far above rounding, far below sight.
    const std::int64_t k = rows / 2;
    const double good = y[k];
    y[k] = good + 1e-9 * exact.scale(k);
    EXPECT_GT(worst_scaled_error(exact, at), tolerance);
    y[k] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(worst_scaled_error(exact, at), std::numeric_limits<double>::infinity());
    y[k] = good;
    EXPECT_LE(worst_scaled_error(exact, at), tolerance);
  }
}

// R by shape for packed rows: a warp a row wherever a row takes 32 lanes;
// short rows (2^22 rows of 64 columns take 16 lanes, 8 team threads) 8, or 2
// or 1 where too few rows for R = 4 to fill 90% of 528 teams (132
// multiprocessors, 4 blocks each).
TEST(PackedRows, RowsPerThreadByShape) {
  const auto r = [](std::int64_t rows, int lanes = 32, std::int64_t slots = 528) {
    return packed_rows_per_thread(rows, 128 / lanes, lanes, slots);
  };
  for (const std::int64_t rows : {64, 1024, 9000, 10560, 16384, 32768}) EXPECT_EQ(r(rows), 1);
  EXPECT_EQ(r(9000, 32, 0), 1);
  EXPECT_EQ(r(std::int64_t{1} << 22, 16), 8);
  EXPECT_EQ(r(15201, 16), 8);  // 476 teams of 32 rows
  EXPECT_EQ(r(15200, 16), 2);  // 475
  EXPECT_EQ(r(7601, 16), 2);   // 476 teams of 16 rows
  EXPECT_EQ(r(7600, 16), 1);
  EXPECT_EQ(r(64, 16, 0), 8);  // no count of multiprocessors (no CUDA)
}

// U at R = 1: 16 in double; in float 8 where R = 1's teams fill a round of
// 396 (132 multiprocessors, 3 blocks each), else 16. The kernel's 4 at R > 1.
TEST(PackedRows, UnitsInFlightByShape) {
  const auto u = [](std::int64_t rows, int r, std::size_t bytes, std::int64_t slots = 396) {
    return packed_rows_units(rows, 4, r, bytes, slots);
  };
  EXPECT_EQ(u(9000, 1, 8), packed_rows_wide_units);
  EXPECT_EQ(u(256, 1, 8), packed_rows_wide_units);
  EXPECT_EQ(u(1580, 1, 4), packed_rows_wide_units);  // 395 teams
  EXPECT_EQ(u(1581, 1, 4), packed_rows_wide_units / 2);
  EXPECT_EQ(u(9000, 1, 4), packed_rows_wide_units / 2);
  EXPECT_EQ(u(9000, 1, 4, 0), packed_rows_wide_units / 2);
  EXPECT_EQ(u(256, 2, 8), gpu_partial_sums);
  EXPECT_EQ(u(9000, 8, 4), gpu_partial_sums);
}

// Which B the mdrange variant reads in 16-byte units of a column: on CUDA
// contiguous columns of an even length (in doubles) that start on 16
// bytes, with the tiling's unit of rows an item; nowhere else. A misaligned
// B falls back to element loads over the same items and gives
// row-per-thread's y.
TEST(PackedColumns, OnlyAlignedContiguousColumnsOnCuda) {
  const bool cuda = packed_columns_layout<Matrix<Kokkos::LayoutLeft>>();
#if defined(KOKKOS_ENABLE_CUDA)
  EXPECT_EQ(cuda, (std::is_same<Exec, Kokkos::Cuda>::value));
#else
  EXPECT_FALSE(cuda);
#endif
  EXPECT_FALSE(packed_columns_layout<Matrix<Kokkos::LayoutRight>>());
  Matrix<Kokkos::LayoutLeft> even("even", 64, 9), odd("odd", 63, 9), storage("storage", 65, 9);
  const Matrix<Kokkos::LayoutRight> right("right", 64, 9);
  // Columns of 64, 8 bytes off 16.
  const Unmanaged<Kokkos::LayoutLeft> shifted(storage.data() + 1, 64, 9);
  const Tiling t = choose_tiling(even);
  EXPECT_EQ(t.packed, cuda);
  if (cuda) {
    EXPECT_EQ(t.rows_per_item, 2);
  }
  EXPECT_EQ(columns_load_packed(even, t), cuda);
  EXPECT_FALSE(columns_load_packed(odd, choose_tiling(odd)));
  EXPECT_FALSE(columns_load_packed(right, choose_tiling(right)));
  EXPECT_FALSE(columns_load_packed(shifted, t));
  Tiling one_row = t;
  one_row.rows_per_item = 1;
  EXPECT_FALSE(columns_load_packed(even, one_row));

  auto h = Kokkos::create_mirror_view(storage);
  for (int j = 0; j < 9; ++j)
    for (int i = 0; i < 65; ++i) h(i, j) = (i + 1) * (j % 5) - j;
  Kokkos::deep_copy(storage, h);
  const Vector x = from_values({1, -2, 3, -4, 5, -6, 7, -8, 9});
  const auto expected = run({Variant::row_per_thread, 0, 0, 0}, shifted, x);
  for (const auto& c : all_cases()) {
    if (c.variant != Variant::mdrange) continue;
    SCOPED_TRACE(c.name());
    EXPECT_EQ(run(c, shifted, x), expected);
  }
}

// The packed sweep in float (four rows a unit): integers, exact.
TEST(PackedColumns, FloatUnitsOfFourRows) {
  const std::int64_t m = 4800, n = 150;  // 1200 units: ten blocks of rows
  Kokkos::View<float**, Kokkos::LayoutLeft, Memory> a("a", m, n);
  Kokkos::View<float*, Memory> x("x", n), y("y", m);
  auto ha = Kokkos::create_mirror_view(a);
  auto hx = Kokkos::create_mirror_view(x);
  for (std::int64_t j = 0; j < n; ++j) {
    hx(j) = static_cast<float>(j % 7 - 3);
    for (std::int64_t i = 0; i < m; ++i) ha(i, j) = static_cast<float>((i % 11) - (j % 13));
  }
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(x, hx);
  // On a GPU the second pass: 6 blocks tiled, 4 threads a row; 150 tiled,
  // 16 threads a row (32 rows a block); 200, too many for tiles, a team a
  // row. Then one pass, column ranges summed in teams of 1, 5 and 32 warps
  // (38 teams of 128 rows, the last of 64; 32 warps: ranges of 5 columns).
  for (const auto& [blocks, warps] : std::vector<std::pair<std::int64_t, int>>{
           {0, 0}, {1, 0}, {6, 0}, {150, 0}, {200, 0}, {1, 1}, {1, 5}, {1, 32}}) {
    SCOPED_TRACE("column blocks " + std::to_string(blocks) + ", warps " + std::to_string(warps));
    Settings s;
    s.tiling = choose_tiling(a, blocks);
    s.tiling.team_warps = warps;
    EXPECT_EQ(columns_load_packed(a, s.tiling), packed_columns_layout<decltype(a)>());
    Kokkos::deep_copy(y, std::numeric_limits<float>::quiet_NaN());
    multiply(Variant::mdrange, a, x, y, s, allocate_partials(a, s.tiling));
    const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
    for (std::int64_t i = 0; i < m; ++i) {
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j) sum += double(ha(i, j)) * hx(j);
      ASSERT_EQ(hy(i), static_cast<float>(sum)) << "row " << i;
    }
  }
}

// Column blocks of the packed sweep: the fewest whose grid fills its last
// round of 1056 blocks at once (132 multiprocessors, 8 blocks each) to 90%,
// else the fullest; at least 64 columns a block.
TEST(PackedColumns, ColumnBlocksFillTheLastRound) {
  EXPECT_EQ(packed_column_blocks(64, 16384, 1056), 15);     // 16384^2 double: 960 blocks
  EXPECT_EQ(packed_column_blocks(32, 16384, 1056), 30);     // in float
  EXPECT_EQ(packed_column_blocks(118, 9000, 1056), 17);     // 30000 x 9000 double
  EXPECT_EQ(packed_column_blocks(18, 30000, 1056), 53);     // A^T x of it in float
  EXPECT_EQ(packed_column_blocks(1, 1 << 20, 1056), 951);   // 256 rows of 2^20
  EXPECT_EQ(packed_column_blocks(16384, 64, 1056), 1);      // 2^22 rows of 64: 15.5 rounds
  EXPECT_EQ(packed_column_blocks(1200, 1 << 14, 1056), 4);  // 1.14 rounds: 4 fill 4.5 of 5
  EXPECT_EQ(packed_column_blocks(4, 300, 1056), 4);         // none fills: the fullest
  EXPECT_EQ(packed_column_blocks(4, 100, 1056), 1);
  // One pass instead where teams of a warp's 32 units of rows fill 90% of
  // their last round: 16384^2 in double, 256 teams of 8 warps (16 a
  // multiprocessor), in float 128 of 32 (32); not 30000 x 9000 (469 teams
  // fill at most 89%) nor a deck's own column blocks; none where one block
  // suffices.
  constexpr int doubles = PackedTeamShape<double>::most_warps;
  constexpr int floats = PackedTeamShape<float>::most_warps;
  EXPECT_EQ(doubles, 16);
  EXPECT_EQ(floats, 32);
  EXPECT_EQ(packed_team_warps(8192, 16384, 132, doubles), 8);
  EXPECT_EQ(packed_team_warps(4096, 16384, 132, floats), 32);
  EXPECT_EQ(packed_team_warps(15000, 9000, 132, doubles), 0);
  EXPECT_NEAR(packed_team_fill(469, 4, 132, doubles), 0.888, 0.001);
  EXPECT_EQ(packed_team_warps(7500, 9000, 132, floats), 0);
  EXPECT_NEAR(packed_team_fill(235, 16, 132, floats), 0.890, 0.001);
  EXPECT_EQ(packed_team_warps(8192, 448, 132, doubles), 0);  // 7 warps: 64 columns each
  EXPECT_EQ(packed_team_warps(8192, 16384, 0, doubles), 0);  // multiprocessors unknown
  EXPECT_NEAR(packed_team_fill(256, 16, 132, 32), 0.970, 0.001);
  EXPECT_NEAR(packed_team_fill(300, 7, 132, 32), 0.497, 0.001);  // 4 teams a multiprocessor
  // The second pass: at most 16 blocks a thread, 4 to 32 threads a row.
  using Sum = SumColumnBlocksTiled<PartialsFor<Matrix<Kokkos::LayoutLeft>>, Vector>;
  EXPECT_EQ(Sum::groups_for(1), 4);
  EXPECT_EQ(Sum::groups_for(64), 4);
  EXPECT_EQ(Sum::groups_for(71), 8);
  EXPECT_EQ(Sum::groups_for(150), 16);
  EXPECT_EQ(Sum::groups_for(1056), 32);
  EXPECT_TRUE(Sum::suits(16384, 15));
  EXPECT_TRUE(Sum::suits(32, 1));
  EXPECT_FALSE(Sum::suits(256, 951));  // a team a row instead
  EXPECT_TRUE(Sum::suits(1024, 32));
  EXPECT_FALSE(Sum::suits(1023, 32));
}

TEST(Seeded, LeftMatchesReferenceAndCorruptionFails) { check_seeded<Kokkos::LayoutLeft>(false); }
TEST(Seeded, RightMatchesReferenceAndCorruptionFails) { check_seeded<Kokkos::LayoutRight>(false); }
TEST(Seeded, TransposedLeftStorage) { check_seeded<Kokkos::LayoutRight>(true); }
TEST(Seeded, TransposedRightStorage) { check_seeded<Kokkos::LayoutLeft>(true); }

TEST(Seeded, EntriesAreExactInFloatAndInRange) {
  for (std::int64_t k = 0; k < 1000; ++k) {
    const double v = matrix_entry(3, k, 2 * k + 1);
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
    EXPECT_EQ(static_cast<double>(static_cast<float>(v)), v);
  }
  EXPECT_NE(matrix_entry(3, 1, 2), matrix_entry(3, 2, 1));
  EXPECT_NE(matrix_entry(3, 1, 2), matrix_entry(4, 1, 2));
}

// Compensated sums keep what a plain sum loses, also when partial sums merge
// (as Kokkos' reductions combine threads' values).
TEST(Exact, CompensatedSumsKeepTheSmallTerms) {
  const double big = 1e16;
  CompensatedSum a;
  for (double p : {big, 1.0, 1.0, -big, 0.5}) a.add(p);
  EXPECT_EQ(a.value(), 2.5);
  EXPECT_NEAR(a.size, 2 * big, 8.0);
  CompensatedSum b, c;
  for (double p : {big, 1.0}) b.add(p);
  for (double p : {1.0, -big, 0.5}) c.add(p);
  b += c;
  EXPECT_EQ(b.value(), 2.5);
  EXPECT_EQ(b.size, a.size);
}

TEST(Tiling, CoversRowsAndColumns) {
  for (std::int64_t rows : {1, 7, 5000}) {
    for (std::int64_t cols : {1, 9, 70000}) {
      const Kokkos::View<double**, Kokkos::LayoutLeft, Memory,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          left(nullptr, rows, cols);
      const auto t = choose_tiling(left);
      EXPECT_GE(t.rows_per_item, 1);
      EXPECT_GE(t.column_blocks, 1);
      EXPECT_LE(t.column_blocks, cols);
    }
  }
}

// The CPU's LayoutLeft blocks: at most 2048 rows, one item a thread when the
// columns allow it, a multiple of the threads when the rows give more.
TEST(Tiling, HostLeftRowBlocks) {
  using Blocks = std::pair<std::int64_t, std::int64_t>;  // row blocks, rows a block
  const auto blocks = [](std::int64_t rows, std::int64_t cols, std::int64_t threads) {
    const std::int64_t n = host_left_row_blocks(rows, cols, threads);
    const std::int64_t per_block = ceil_div(rows, n);
    EXPECT_LE(per_block, 2048);
    return Blocks{n, per_block};
  };
  EXPECT_EQ(blocks(16384, 16384, 16), Blocks(8, 2048));  // and 2 column blocks
  EXPECT_EQ(blocks(5000, 5000, 16), Blocks(4, 1250));    // and 4 column blocks
  EXPECT_EQ(blocks(5000, 5000, 12), Blocks(3, 1667));
  EXPECT_EQ(blocks(40000, 40000, 16), Blocks(32, 1250));
  EXPECT_EQ(blocks(std::int64_t{1} << 22, 64, 16), Blocks(2048, 2048));
  EXPECT_EQ(blocks(17 * 2048, 64, 16), Blocks(32, 1088));
  // Too few columns to split: shorter row blocks, of at least 64 rows.
  EXPECT_EQ(blocks(16384, 64, 16), Blocks(16, 1024));
  EXPECT_EQ(blocks(100, 10, 16), Blocks(1, 100));
  EXPECT_EQ(blocks(1, 1, 1), Blocks(1, 1));
}

// ---------------------------------------------------------------------------
// CSR.

template <class Pattern>
Csr<double, int, Memory> make_csr(const Pattern& p, std::int64_t row0, std::int64_t rows,
                                  std::int64_t cols) {
  return build_csr<double, int>(p, row0, cols, csr_row_sizes(p, row0, rows));
}

std::vector<double> run_csr(Variant v, const Csr<double, int, Memory>& a, const Vector& x,
                            double mean_row) {
  const Vector y("y", a.num_rows());
  Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
  multiply_csr(v, a, x, y, choose_csr_team_shape<Exec>(mean_row));
  Kokkos::fence();
  return to_host(y);
}

TEST(Csr, LaplacianTimesOnesIsTheBoundaryCount) {
  // On a 2D grid, (A 1)(p) = 4 - neighbours(p): 0 inside, 1 on an edge, 2 in a corner.
  LaplacianPattern p;
  p.dimensions = 2;
  p.nx = 6;
  p.ny = 5;
  const std::int64_t n = p.nx * p.ny;
  const auto a = make_csr(p, 0, n, n);
  EXPECT_EQ(a.columns.num_entries(), 5 * n - 2 * (p.nx + p.ny));
  for (Variant v : {Variant::row_per_thread, Variant::team_per_row}) {
    const auto y = run_csr(v, a, from_values(std::vector<double>(n, 1.0)), 5);
    for (std::int64_t g = 0; g < n; ++g) {
      const std::int64_t x = g % p.nx, yy = g / p.nx;
      const int edges = (x == 0) + (x == p.nx - 1) + (yy == 0) + (yy == p.ny - 1);
      EXPECT_EQ(y[g], edges) << "point " << g;
    }
  }
}

TEST(Csr, Laplacian3DRowsOfARankAndTheirColumns) {
  LaplacianPattern p;
  p.nx = 4;
  p.ny = 3;
  p.nz = 5;
  const std::int64_t n = 60, row0 = 12, rows = 24;  // the middle planes, as rank 1 of 3 holds
  const auto a = make_csr(p, row0, rows, n);
  auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.columns.offsets());
  auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.columns.values());
  auto vals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.values.values());
  for (std::int64_t i = 0; i < rows; ++i) {
    double sum = 0;
    bool diagonal = false;
    for (std::int64_t e = offsets(i); e < offsets(i + 1); ++e) {
      if (e > offsets(i)) {
        EXPECT_LT(cols(e - 1), cols(e));
      }
      if (cols(e) == row0 + i) diagonal = vals(e) == 6.0;
      sum += vals(e);
    }
    EXPECT_TRUE(diagonal) << "row " << i;
    EXPECT_GE(sum, 0.0);
  }
}

TEST(Csr, RandomPatternDensityAndOrder) {
  const auto p = RandomPattern::make(11, 2000, 0.05);
  const auto a = make_csr(p, 0, 200, 2000);
  const double expected = 0.05 * 2000 * 200;  // 20000, standard deviation ~ 138
  EXPECT_NEAR(static_cast<double>(a.columns.num_entries()), expected, 5 * 138.0);
  auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.columns.offsets());
  auto cols = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a.columns.values());
  for (std::int64_t i = 0; i < 200; ++i)
    for (std::int64_t e = offsets(i); e < offsets(i + 1); ++e) {
      EXPECT_GE(cols(e), 0);
      EXPECT_LT(cols(e), 2000);
      if (e > offsets(i)) {
        EXPECT_LT(cols(e - 1), cols(e));
      }
    }
}

TEST(Csr, DensityZeroAndOne) {
  const auto empty = make_csr(RandomPattern::make(1, 50, 0.0), 0, 10, 50);
  EXPECT_EQ(empty.columns.num_entries(), 0);
  EXPECT_EQ(run_csr(Variant::row_per_thread, empty, from_values(std::vector<double>(50, 1.0)), 0),
            std::vector<double>(10, 0.0));
  // Density 1 is the dense matrix: compare with the dense kernel on the same entries.
  const std::int64_t m = 9, n = 50, row0 = 3;
  const auto full = make_csr(RandomPattern::make(1, n, 1.0), row0, m, n);
  EXPECT_EQ(full.columns.num_entries(), m * n);
  Matrix<Kokkos::LayoutRight> dense("dense", m, n);
  fill_matrix(dense, Placement{1, false, row0});
  Vector x("x", n);
  fill_vector(x, 1, 0);
  const auto expected = run({Variant::row_per_thread, 0, 0, 0}, dense, x);
  for (Variant v : {Variant::row_per_thread, Variant::team_per_row}) {
    const auto y = run_csr(v, full, x, n);
    for (std::int64_t i = 0; i < m; ++i) EXPECT_NEAR(y[i], expected[i], 1e-13) << "row " << i;
  }
}

TEST(Csr, ReferenceAcceptsKernelsAndCatchesCorruption) {
  const std::uint64_t seed = 5;
  const auto p = RandomPattern::make(seed, 3000, 0.02);
  const std::int64_t rows = 150, row0 = 40;
  const auto a = make_csr(p, row0, rows, 3000);
  Vector x("x", 3000);
  fill_vector(x, seed, 0);
  Reference ref;
  for (std::int64_t r = 0; r < rows; ++r) add_csr_reference_row(ref, r, row0 + r, p, seed);
  const auto exact = to_host(csr_exact(p, seed, row0, rows));
  for (std::int64_t r = 0; r < rows; ++r)
    EXPECT_LE(std::fabs(exact.value(r) - static_cast<double>(ref.exact[r])),
              std::numeric_limits<double>::epsilon() * static_cast<double>(ref.scale[r]))
        << "row " << r;
  const double tolerance = tolerance_for<double>(3000);
  for (Variant v : {Variant::row_per_thread, Variant::team_per_row}) {
    auto y = run_csr(v, a, x, 60);
    auto at = [&](std::int64_t i) { return y[i]; };
    EXPECT_LE(worst_scaled_error(exact, at), tolerance);
    EXPECT_LE(max_scaled_error(ref, at), tolerance);
    y[rows - 1] += 1e-9 * exact.scale(rows - 1) + 1e-9;
    EXPECT_GT(worst_scaled_error(exact, at), tolerance);
  }
}

}  // namespace karma_test_matvec
