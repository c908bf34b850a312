// Launching the dense kernels (matvec_kernels.hpp): policies and team
// shapes, the launchers, multiply() and each variant's code.
#pragma once

#include "matvec_columns.hpp"
#include "matvec_rows.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace karma::matvec {

// team-per-row's policy. On a GPU, at most 51 registers a thread (ten blocks
// of 128 threads per 2048): without the bound the R = 4 kernel took 64 and
// ran at half occupancy. H200, GB/s without / with: LayoutRight 2^22 x 64
// 3670 / 3990 (row-per-thread on LayoutLeft: 4368), 262144 x 1024 4330 /
// 4382, 16384^2 4343 / 4336; LayoutLeft 16384^2 1744 / 1973. Bounds of 9 or
// 11 blocks were slower, and so is R = 1 with this one (4031 / 2920). HIP
// reads the second number as waves per execution unit, which clang 19 could
// not meet for gfx942 (a warning): AMD GPUs get only the team size.
#if defined(KOKKOS_ENABLE_CUDA)
inline constexpr unsigned team_rows_min_blocks = 10;
#else
inline constexpr unsigned team_rows_min_blocks = 0;
#endif
template <class Matrix, class Exec = typename Matrix::execution_space>
using TeamRowsPolicy =
    std::conditional_t<is_gpu_space<Exec>(),
                       Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<128, team_rows_min_blocks>>,
                       Kokkos::TeamPolicy<Exec>>;

// TeamPerRowPacked's: at least four blocks of 128 threads a multiprocessor
// (at most 128 registers a thread, which ptxas then spends on the R x U units
// in flight) for R > 1; for R = 1, a warp a row, three (at most 168), as
// cuBLAS's GEMV runs, so that 16 units of doubles stay in flight a lane.
// Unbounded, R = 8 chose fewer blocks in double and fewer loads in flight in
// float, both slower (results/matvec/README.md).
inline constexpr unsigned packed_rows_blocks = 4;
inline constexpr unsigned packed_rows_blocks_r1 = 3;  // R = 1
// U at R = 1 in double (packed_rows_units).
inline constexpr int packed_rows_wide_units = 16;
template <class Matrix, unsigned Blocks>
using PackedRowsPolicy =
    Kokkos::TeamPolicy<typename Matrix::execution_space, Kokkos::LaunchBounds<128, Blocks>>;

// The teams of TeamPerRowPacked that run at once, `blocks` a multiprocessor.
// The rules below were measured on CUDA only; elsewhere 0 (no count).
inline std::int64_t packed_rows_slots(unsigned blocks) {
#if defined(KOKKOS_ENABLE_CUDA)
  return static_cast<std::int64_t>(karma::device_multiprocessors()) * blocks;
#else
  (void)blocks;
  return 0;
#endif
}

// Teams of `team_size` threads, R rows a thread, that `rows` take.
inline std::int64_t packed_rows_teams(std::int64_t rows, int team_size, int r) {
  const std::int64_t per_team = static_cast<std::int64_t>(team_size) * r;
  return (rows + per_team - 1) / per_team;
}

// R for TeamPerRowPacked (results/matvec/README.md, "A warp's chunk"): 1, a
// warp a row, where a row takes 32 lanes; for short rows (fewer lanes), whose
// teams finish in a step or two, 8, unless too few rows for R = 4 to fill 90%
// of the teams that run at once (`slots`, 0 where unknown): then the largest
// of 2 and 1 that does, else 1.
inline int packed_rows_per_thread(std::int64_t rows, int team_size, int vector_length,
                                  std::int64_t slots) {
  if (vector_length >= 32) return 1;
  const auto fills = [&](int r) { return 10 * packed_rows_teams(rows, team_size, r) >= 9 * slots; };
  if (!fills(4)) return fills(2) ? 2 : 1;
  return 8;
}

// U for TeamPerRowPacked (packed rows run on CUDA only, so its default is the
// GPU's partial sums): at R = 1, 16 units of 16 bytes in flight a lane in
// double; in float 8 where R = 1's teams fill a round of `slots` (16 was 5%
// slower at 30000 x 9000 on an H100), else 16.
inline int packed_rows_units(std::int64_t rows, int team_size, int rows_per_thread,
                             std::size_t value_bytes, std::int64_t slots) {
  if (rows_per_thread != 1) return gpu_partial_sums;
  const bool few = packed_rows_teams(rows, team_size, 1) < slots;
  return value_bytes >= 8 || few ? packed_rows_wide_units : packed_rows_wide_units / 2;
}

// Team shape for team-per-row: on a GPU 128 threads a team, vector lanes over
// the columns and R rows a team thread; on a CPU one thread and one lane per
// team, a row at a time. The deck's team_size / vector_length /
// rows_per_thread > 0 override.
struct TeamShape {
  int team_size = 1;
  int vector_length = 1;
  int rows_per_thread = 1;       // R: 1, 2, 4 or 8
  int units = gpu_partial_sums;  // U of TeamPerRowPacked (packed_rows_units)
};

template <class Matrix>
TeamShape choose_team_shape(const Matrix& b, int team_size = 0, int vector_length = 0,
                            int rows_per_thread = 0) {
  using Exec = typename Matrix::execution_space;
  TeamShape s;
  if (is_gpu_space<Exec>()) {
    // Lanes: enough for one step of U columns each, up to a warp. Rows: 4 a
    // team thread. Measured on an H200, LayoutRight: 16384^2 with R = 1, 2, 4
    // gave 4031, 3484 and 4346 GB/s (cuBLAS 4471); 2^22 x 64 with 4, 8, 16
    // lanes gave 1611, 3502 and 3608 GB/s. Teams: 128 threads for a warp a
    // row, 64 for fewer lanes (2^22 x 64, 16 lanes, with TeamRowsPolicy's
    // bound: 3911 GB/s in teams of 128, 3990 in teams of 64).
    const std::int64_t quads =
        (static_cast<std::int64_t>(b.extent(1)) + partial_sums<Exec>() - 1) / partial_sums<Exec>();
    int v = 1;
    while (v < 32 && v < quads) v *= 2;
    s.vector_length = v;
    s.team_size = std::max(1, (v < 32 ? 64 : 128) / v);
    s.rows_per_thread = 4;
    if (packed_row_length(b))
      s.rows_per_thread =
          packed_rows_per_thread(static_cast<std::int64_t>(b.extent(0)), s.team_size,
                                 s.vector_length, packed_rows_slots(packed_rows_blocks));
  }
  if (team_size > 0) s.team_size = team_size;
  if (vector_length > 0) s.vector_length = vector_length;
  if (rows_per_thread > 0) s.rows_per_thread = rows_per_thread;
  if (packed_row_length(b))
    s.units =
        packed_rows_units(static_cast<std::int64_t>(b.extent(0)), s.team_size, s.rows_per_thread,
                          sizeof(value_t<Matrix>), packed_rows_slots(packed_rows_blocks_r1));
  return s;
}

// The mdrange variant's scratch: allocate once, outside timed regions.
template <class Matrix>
using PartialsFor =
    Kokkos::View<value_t<Matrix>**, typename Matrix::array_layout, typename Matrix::memory_space>;

template <class Matrix>
PartialsFor<Matrix> allocate_partials(const Matrix& b, const Tiling& tiling) {
  const std::size_t c =
      tiling.column_blocks > 1 ? static_cast<std::size_t>(tiling.column_blocks) : 0;
  return PartialsFor<Matrix>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "matvec::partials"),
                             c ? b.extent(0) : 0, c);
}

struct Settings {
  TeamShape team;
  Tiling tiling;
};

template <template <class, class, class, int> class Kernel, int R, class Policy, class Matrix,
          class Vector, class Result>
void launch_rows_at(const char* label, const Policy& policy, const TeamShape& s, const Matrix& b,
                    const Vector& x, const Result& y) {
  Kokkos::parallel_for(label, policy,
                       Kernel<Matrix, Vector, Result, R>{b, x, y, s.team_size, s.vector_length});
}

// One team-per-row kernel at the shape's R. Fewest is the least R a caller
// passes: 2 where it launches R = 1 itself, so that kernel is not built here.
template <template <class, class, class, int> class Kernel, int Fewest = 1, class Policy,
          class Matrix, class Vector, class Result>
void launch_team_rows(const char* label, const Policy& policy, const TeamShape& s, const Matrix& b,
                      const Vector& x, const Result& y) {
  static_assert(Fewest == 1 || Fewest == 2, "R is 1, 2, 4 or 8");
  if (s.rows_per_thread == 8) return launch_rows_at<Kernel, 8>(label, policy, s, b, x, y);
  if (s.rows_per_thread == 4) return launch_rows_at<Kernel, 4>(label, policy, s, b, x, y);
  if (Fewest == 2 || s.rows_per_thread == 2)
    return launch_rows_at<Kernel, 2>(label, policy, s, b, x, y);
  if constexpr (Fewest == 1) launch_rows_at<Kernel, 1>(label, policy, s, b, x, y);
}

template <class Matrix, class Vector, class Result, int R>
using PackedRowsKernel = TeamPerRowPacked<Matrix, Vector, Result, R>;

// TeamPerRowPacked at the shape's R and U.
template <class Matrix, class Vector, class Result>
void launch_packed_rows(const TeamShape& s, int teams, const Matrix& b, const Vector& x,
                        const Result& y) {
  const char* label = "matvec::team-per-row-packed";
  constexpr int wide = packed_rows_wide_units;
  const PackedRowsPolicy<Matrix, packed_rows_blocks_r1> one(teams, s.team_size, s.vector_length);
  if (s.rows_per_thread == 1 && s.units == wide)
    Kokkos::parallel_for(
        label, one,
        TeamPerRowPacked<Matrix, Vector, Result, 1, wide>{b, x, y, s.team_size, s.vector_length});
  else if (s.rows_per_thread == 1)
    Kokkos::parallel_for(label, one,
                         TeamPerRowPacked<Matrix, Vector, Result, 1, wide / 2>{b, x, y, s.team_size,
                                                                               s.vector_length});
  else
    launch_team_rows<PackedRowsKernel, 2>(
        label, PackedRowsPolicy<Matrix, packed_rows_blocks>(teams, s.team_size, s.vector_length), s,
        b, x, y);
}

// Whether the second pass over these partial sums is SumColumnBlocksTiled
// (else SumColumnBlocks).
template <class Partials, class Result>
bool sums_tiled(std::int64_t rows, std::int64_t blocks) {
  return is_gpu_space<typename Result::execution_space>() && is_left<Partials>() &&
         SumColumnBlocksTiled<Partials, Result>::suits(rows, blocks);
}

// y(i) = sum_c P(i, c): the mdrange variant's second pass.
template <class Partials, class Result>
void sum_column_blocks(const Partials& p, const Result& y) {
  using Exec = typename Result::execution_space;
  const auto rows = static_cast<std::int64_t>(y.extent(0));
  const auto blocks = static_cast<std::int64_t>(p.extent(1));
  if constexpr (is_gpu_space<Exec>() && is_left<Partials>()) {
    using Sum = SumColumnBlocksTiled<Partials, Result>;
    if (sums_tiled<Partials, Result>(rows, blocks)) {
      const Sum sum{p, y, Sum::groups_for(blocks)};
      const auto teams = static_cast<int>(ceil_div(rows, Sum::rows_a_team));
      Kokkos::parallel_for("matvec::mdrange-sum",
                           Kokkos::TeamPolicy<Exec>(teams, sum.team_size())
                               .set_scratch_size(0, Kokkos::PerTeam(sum.scratch_bytes())),
                           sum);
      return;
    }
  }
  int threads = 1;  // a warp or more per row on a GPU, one thread on a CPU
  if (is_gpu_space<Exec>())
    while (threads < 128 && (threads < 32 || threads < blocks)) threads *= 2;
  Kokkos::parallel_for("matvec::mdrange-sum",
                       Kokkos::TeamPolicy<Exec>(static_cast<int>(rows), threads),
                       SumColumnBlocks<Partials, Result>{p, y});
}

// The packed column sweep under its launch bound; false where the layout has none.
template <class Matrix, class Vector, class Result, class Partials>
bool launch_packed_columns(const Tiling& t, const Matrix& b, const Vector& x, const Result& y,
                           const Partials& p) {
  if constexpr (packed_columns_layout<Matrix>()) {
    using Policy = Kokkos::MDRangePolicy<
        typename Matrix::execution_space,
        Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
        Kokkos::IndexType<std::int64_t>,
        Kokkos::LaunchBounds<packed_column_threads, packed_column_blocks_per_sm>>;
    const auto units = static_cast<std::int64_t>(b.extent(0)) / t.rows_per_item;
    if (t.team_warps > 0) {
      using Teams = PackedColumnTeams<Matrix, Vector, Result>;
      constexpr int most = PackedTeamShape<value_t<Matrix>>::most_warps;
      const Teams teams{b, x, y, t.team_warps};
      const auto rows = static_cast<std::int64_t>(b.extent(0));
      Kokkos::parallel_for(
          "matvec::mdrange-packed-teams",
          Kokkos::TeamPolicy<typename Matrix::execution_space,
                             Kokkos::LaunchBounds<packed_team_units * most, 1>>(
              static_cast<int>(ceil_div(rows, Teams::rows_a_team)), teams.team_size())
              .set_scratch_size(0, Kokkos::PerTeam(teams.scratch_bytes())),
          teams);
      return true;
    }
    Kokkos::parallel_for(
        "matvec::mdrange-packed", Policy({0, 0}, {units, t.column_blocks}, {t.tile0, t.tile1}),
        PackedColumnBlocks<Matrix, Vector, Result, Partials>{b, x, y, p, t.column_blocks});
    return true;
  } else {
    (void)t, (void)b, (void)x, (void)y, (void)p;
    return false;
  }
}

// y = B x with one variant. `partials` comes from allocate_partials(b, tiling).
template <class Matrix, class Vector, class Result>
void multiply(Variant variant, const Matrix& b, const Vector& x, const Result& y,
              const Settings& settings, const PartialsFor<Matrix>& partials) {
  using Exec = typename Matrix::execution_space;
  const std::int64_t rows = static_cast<std::int64_t>(b.extent(0));
  if (rows == 0) return;
  switch (variant) {
    case Variant::row_per_thread:
      Kokkos::parallel_for("matvec::row-per-thread",
                           Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, rows),
                           RowPerThread<Matrix, Vector, Result>{b, x, y});
      break;
    case Variant::team_per_row: {
      const TeamShape& s = settings.team;
      const std::int64_t per_team = static_cast<std::int64_t>(s.team_size) * s.rows_per_thread;
      const int teams = static_cast<int>((rows + per_team - 1) / per_team);
      if constexpr (packed_rows_layout<Matrix>()) {
        if (rows_load_packed(b, x)) {
          launch_packed_rows(s, teams, b, x, y);
          break;
        }
      }
      launch_team_rows<TeamPerRow>("matvec::team-per-row",
                                   TeamRowsPolicy<Matrix>(teams, s.team_size, s.vector_length), s,
                                   b, x, y);
      break;
    }
    case Variant::mdrange: {
      Tiling t = settings.tiling;
      t.packed = columns_load_packed(b, t);  // else the same items, elementwise
      constexpr auto order = is_left<Matrix>() ? Kokkos::Iterate::Left : Kokkos::Iterate::Right;
      using Policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, order, order>,
                                           Kokkos::IndexType<std::int64_t>>;
      const std::int64_t blocks = (rows + t.rows_per_item - 1) / t.rows_per_item;
      if (!t.packed || !launch_packed_columns(t, b, x, y, partials))
        Kokkos::parallel_for(
            "matvec::mdrange", Policy({0, 0}, {blocks, t.column_blocks}, {t.tile0, t.tile1}),
            MDRangeBlocks<Matrix, Vector, Result, PartialsFor<Matrix>>{b, x, y, partials, t});
      if (t.column_blocks > 1) sum_column_blocks(partials, y);
      break;
    }
  }
}

// What multiply() may run for `variant` on this Matrix type: the symbols of
// its code version (karma/code_version.hpp). Every functor and launcher
// that B's sizes and alignment or the tiling pick among at run time, so that
// the version names the code and not the run; what ran is in the results.
template <class Matrix>
std::vector<std::string> multiply_code(Variant variant) {
  const std::string ns = "karma::matvec::";
  std::vector<std::string> code;
  switch (variant) {
    case Variant::row_per_thread:
      return {ns + "RowPerThread"};
    case Variant::team_per_row:
      code = {ns + "TeamPerRow", ns + "TeamRowsPolicy", ns + "launch_team_rows"};
      if (packed_rows_layout<Matrix>()) code.push_back(ns + "launch_packed_rows");
      return code;
    case Variant::mdrange:
      code = {ns + "MDRangeBlocks", ns + "sum_column_blocks"};
      if (packed_columns_layout<Matrix>()) code.push_back(ns + "launch_packed_columns");
      return code;
  }
  return code;
}

}  // namespace karma::matvec
