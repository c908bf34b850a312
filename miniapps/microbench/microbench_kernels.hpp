// The five kernels of the mdspan paper's benchmarks (Hollman et al. 2019),
// each written twice: once against karma's arrays (a(i, j, k)) and once with a
// raw pointer and hand-written index arithmetic, as a careful programmer
// writes it (offsets hoisted out of the inner loop). The two versions of a
// kernel run the same loops in the same order; only the indexing differs.
//
// Loops follow the layout: the innermost loop runs over the contiguous index
// (the last one for LayoutRight, the first for LayoutLeft). Serial versions
// are plain host loops, as in the paper; parallel versions run on the default
// execution space with the same policy for both versions.
#pragma once

#include "karma/array.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace karma::microbench {

// 64-bit indices throughout: the arrays' offsets are 64-bit in Kokkos, and a
// programmer writing for arrays past 2^31 elements uses them too.
using Index = std::int64_t;

// An extent the compiler knows (the raw versions' counterpart of a static
// extent in a karma array's data type).
template <Index N>
struct Fixed {
  static constexpr Index value = N;
  KOKKOS_INLINE_FUNCTION constexpr operator Index() const { return N; }
};

// The extents of a raw array: each a Fixed<N> or a run-time Index.
template <class E0, class E1, class E2>
struct Shape {
  E0 n0;
  E1 n1;
  E2 n2;
};

template <class Layout>
constexpr bool is_right() {
  return std::is_same<Layout, Right>::value;
}

template <class View>
using value_t = typename View::non_const_value_type;

// Serial loops are host code, inlined where they are called so that the
// arrays they loop over stay local (see unmanaged()).
#define KARMA_MICROBENCH_HOST_INLINE inline __attribute__((always_inline))
// Every serial kernel, karma and raw alike, is a function of its own: the
// timed loop calls it, and callgrind can count each one's instructions
// (README.md).
#define KARMA_MICROBENCH_KERNEL __attribute__((noinline))

// The same array, not reference-counted. karma's serial kernels loop over
// local, unmanaged copies of their arrays: Kokkos counts references when a
// managed view is copied or sliced outside a parallel kernel, one atomic
// increment and decrement per subview (10x on Subspan3D 20^3). Before
// karma::Array computed its own offsets, the copy also kept Kokkos 3.4's
// 32-bit unsigned extents in registers, out of reach of int stores that may
// alias them (5x on Stencil3D). The karma_byref benchmarks measure the same
// loops without the copy.
template <class View>
UnmanagedArray<typename View::data_type, typename View::array_layout, typename View::memory_space>
unmanaged(const View& a) {
  return a;
}

// ---------------------------------------------------------------------------
// Policies shared by both versions of every parallel kernel.

template <class Layout>
constexpr Kokkos::Iterate iterate_of() {
  return is_right<Layout>() ? Kokkos::Iterate::Right : Kokkos::Iterate::Left;
}

template <class Layout>
using Policy3 =
    Kokkos::MDRangePolicy<DefaultSpace, Kokkos::Rank<3, iterate_of<Layout>(), iterate_of<Layout>()>,
                          Kokkos::IndexType<Index>>;

// [lo, n - lo) in each dimension, iterated in memory order. On a GPU the
// tiles are karma-stream's, measured on an H200: Kokkos maps tile extents to
// blockDim (x, y, z), so the contiguous index gets x (Left) or the 64 threads
// z allows (Right; a larger z tile leaves elements unvisited in Kokkos 4.6).
template <class Layout>
Policy3<Layout> policy3(Index lo, Index n0, Index n1, Index n2) {
  using Policy = Policy3<Layout>;
  const typename Policy::point_type lower{{lo, lo, lo}};
  const typename Policy::point_type upper{{n0 - lo, n1 - lo, n2 - lo}};
  if (!is_gpu_space<DefaultSpace>()) return Policy(lower, upper);
  const typename Policy::tile_type tile = is_right<Layout>()
                                              ? typename Policy::tile_type{{1, 4, 64}}
                                              : typename Policy::tile_type{{128, 2, 1}};
  return Policy(lower, upper, tile);
}

using RangePolicy = Kokkos::RangePolicy<DefaultSpace, Kokkos::IndexType<Index>>;
using TeamPolicy = Kokkos::TeamPolicy<DefaultSpace, Kokkos::IndexType<Index>>;
using TeamMember = TeamPolicy::member_type;

// Vector lanes for team kernels: a warp's worth over the contiguous index on
// a GPU (coalesced loads); one on a CPU, where the thread's loop vectorizes.
inline int vector_length() { return is_gpu_space<DefaultSpace>() ? 32 : 1; }

// ---------------------------------------------------------------------------
// Sum3D: the sum of every element of a 3D array.

// The loops, on whatever arrays they are given (karma_byref: the caller's).
template <class View>
KARMA_MICROBENCH_HOST_INLINE value_t<View> sum3d_karma_loops(const View& a) {
  using Layout = typename View::array_layout;
  const Index n0 = a.extent(0), n1 = a.extent(1), n2 = a.extent(2);
  value_t<View> sum = 0;
  if constexpr (is_right<Layout>()) {
    for (Index i = 0; i < n0; ++i)
      for (Index j = 0; j < n1; ++j)
        for (Index k = 0; k < n2; ++k) sum += a(i, j, k);
  } else {
    for (Index k = 0; k < n2; ++k)
      for (Index j = 0; j < n1; ++j)
        for (Index i = 0; i < n0; ++i) sum += a(i, j, k);
  }
  return sum;
}

// karma's serial kernel: the loops on a local, unmanaged copy.
template <class View>
KARMA_MICROBENCH_KERNEL value_t<View> sum3d_karma(const View& a) {
  return sum3d_karma_loops(unmanaged(a));
}

// karma_byref: the same loops on the caller's arrays.
template <class View>
KARMA_MICROBENCH_KERNEL value_t<View> sum3d_karma_byref(const View& a) {
  return sum3d_karma_loops(a);
}

template <class Layout, class T, class E0, class E1, class E2>
KARMA_MICROBENCH_KERNEL T sum3d_raw(const T* a, const Shape<E0, E1, E2>& n) {
  T sum = 0;
  if constexpr (is_right<Layout>()) {
    for (Index i = 0; i < n.n0; ++i)
      for (Index j = 0; j < n.n1; ++j) {
        const T* line = a + (i * n.n1 + j) * n.n2;
        for (Index k = 0; k < n.n2; ++k) sum += line[k];
      }
  } else {
    for (Index k = 0; k < n.n2; ++k)
      for (Index j = 0; j < n.n1; ++j) {
        const T* line = a + (k * n.n1 + j) * n.n0;
        for (Index i = 0; i < n.n0; ++i) sum += line[i];
      }
  }
  return sum;
}

template <class View>
value_t<View> sum3d_karma_parallel(const View& a) {
  using T = value_t<View>;
  T sum = 0;
  Kokkos::parallel_reduce(
      "microbench::sum3d::karma",
      policy3<typename View::array_layout>(0, a.extent(0), a.extent(1), a.extent(2)),
      KOKKOS_LAMBDA(const Index i, const Index j, const Index k, T& acc) { acc += a(i, j, k); },
      sum);
  return sum;
}

template <class Layout, class T, class E0, class E1, class E2>
T sum3d_raw_parallel(const T* a, const Shape<E0, E1, E2>& n) {
  // The layout is chosen outside the lambdas: nvcc does not let a device
  // lambda capture a variable first inside `if constexpr`.
  T sum = 0;
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_reduce(
        "microbench::sum3d::raw", policy3<Layout>(0, n.n0, n.n1, n.n2),
        KOKKOS_LAMBDA(const Index i, const Index j, const Index k, T& acc) {
          acc += a[(i * n.n1 + j) * n.n2 + k];
        },
        sum);
  } else {
    Kokkos::parallel_reduce(
        "microbench::sum3d::raw", policy3<Layout>(0, n.n0, n.n1, n.n2),
        KOKKOS_LAMBDA(const Index i, const Index j, const Index k, T& acc) {
          acc += a[i + n.n0 * (j + n.n1 * k)];
        },
        sum);
  }
  return sum;
}

// ---------------------------------------------------------------------------
// Stencil3D: out = the sum of the 27 points of the 3x3x3 box around each
// interior point of in (the paper's stencil, radius 1). The boundary of out
// is left alone.

template <class In, class Out>
KARMA_MICROBENCH_HOST_INLINE void stencil3d_karma_loops(const In& in, const Out& out) {
  using Layout = typename In::array_layout;
  using T = value_t<Out>;
  const Index n0 = in.extent(0), n1 = in.extent(1), n2 = in.extent(2);
  if constexpr (is_right<Layout>()) {
    for (Index i = 1; i < n0 - 1; ++i)
      for (Index j = 1; j < n1 - 1; ++j)
        for (Index k = 1; k < n2 - 1; ++k) {
          T sum = 0;
          for (Index di = -1; di <= 1; ++di)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index dk = -1; dk <= 1; ++dk) sum += in(i + di, j + dj, k + dk);
          out(i, j, k) = sum;
        }
  } else {
    for (Index k = 1; k < n2 - 1; ++k)
      for (Index j = 1; j < n1 - 1; ++j)
        for (Index i = 1; i < n0 - 1; ++i) {
          T sum = 0;
          for (Index dk = -1; dk <= 1; ++dk)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index di = -1; di <= 1; ++di) sum += in(i + di, j + dj, k + dk);
          out(i, j, k) = sum;
        }
  }
}

template <class In, class Out>
KARMA_MICROBENCH_KERNEL void stencil3d_karma(const In& in, const Out& out) {
  stencil3d_karma_loops(unmanaged(in), unmanaged(out));
}

template <class In, class Out>
KARMA_MICROBENCH_KERNEL void stencil3d_karma_byref(const In& in, const Out& out) {
  stencil3d_karma_loops(in, out);
}

template <class Layout, class T, class E0, class E1, class E2>
KARMA_MICROBENCH_KERNEL void stencil3d_raw(const T* in, T* out, const Shape<E0, E1, E2>& n) {
  if constexpr (is_right<Layout>()) {
    const Index sj = n.n2, si = n.n1 * n.n2;  // strides of j and i
    for (Index i = 1; i < n.n0 - 1; ++i)
      for (Index j = 1; j < n.n1 - 1; ++j) {
        const Index line = (i * n.n1 + j) * n.n2;
        for (Index k = 1; k < n.n2 - 1; ++k) {
          const Index c = line + k;
          T sum = 0;
          for (Index di = -1; di <= 1; ++di)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index dk = -1; dk <= 1; ++dk) sum += in[c + di * si + dj * sj + dk];
          out[c] = sum;
        }
      }
  } else {
    const Index sj = n.n0, sk = n.n0 * n.n1;  // strides of j and k
    for (Index k = 1; k < n.n2 - 1; ++k)
      for (Index j = 1; j < n.n1 - 1; ++j) {
        const Index line = (k * n.n1 + j) * n.n0;
        for (Index i = 1; i < n.n0 - 1; ++i) {
          const Index c = line + i;
          T sum = 0;
          for (Index dk = -1; dk <= 1; ++dk)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index di = -1; di <= 1; ++di) sum += in[c + dk * sk + dj * sj + di];
          out[c] = sum;
        }
      }
  }
}

template <class In, class Out>
void stencil3d_karma_parallel(const In& in, const Out& out) {
  using Layout = typename In::array_layout;
  using T = value_t<Out>;
  const auto policy = policy3<Layout>(1, in.extent(0), in.extent(1), in.extent(2));
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_for(
        "microbench::stencil3d::karma", policy,
        KOKKOS_LAMBDA(const Index i, const Index j, const Index k) {
          T sum = 0;
          for (Index di = -1; di <= 1; ++di)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index dk = -1; dk <= 1; ++dk) sum += in(i + di, j + dj, k + dk);
          out(i, j, k) = sum;
        });
  } else {
    Kokkos::parallel_for(
        "microbench::stencil3d::karma", policy,
        KOKKOS_LAMBDA(const Index i, const Index j, const Index k) {
          T sum = 0;
          for (Index dk = -1; dk <= 1; ++dk)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index di = -1; di <= 1; ++di) sum += in(i + di, j + dj, k + dk);
          out(i, j, k) = sum;
        });
  }
}

template <class Layout, class T, class E0, class E1, class E2>
void stencil3d_raw_parallel(const T* in, T* out, const Shape<E0, E1, E2>& n) {
  const auto policy = policy3<Layout>(1, n.n0, n.n1, n.n2);
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_for(
        "microbench::stencil3d::raw", policy,
        KOKKOS_LAMBDA(const Index i, const Index j, const Index k) {
          const Index sj = n.n2, si = n.n1 * n.n2;
          const Index c = (i * n.n1 + j) * n.n2 + k;
          T sum = 0;
          for (Index di = -1; di <= 1; ++di)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index dk = -1; dk <= 1; ++dk) sum += in[c + di * si + dj * sj + dk];
          out[c] = sum;
        });
  } else {
    Kokkos::parallel_for(
        "microbench::stencil3d::raw", policy,
        KOKKOS_LAMBDA(const Index i, const Index j, const Index k) {
          const Index sj = n.n0, sk = n.n0 * n.n1;
          const Index c = i + n.n0 * (j + n.n1 * k);
          T sum = 0;
          for (Index dk = -1; dk <= 1; ++dk)
            for (Index dj = -1; dj <= 1; ++dj)
              for (Index di = -1; di <= 1; ++di) sum += in[c + dk * sk + dj * sj + di];
          out[c] = sum;
        });
  }
}

// ---------------------------------------------------------------------------
// TinyMatrixSum: out += in over N small matrices (N x 3 x 3 in the paper).
// Serially the loops follow the layout; in parallel one work item owns one
// small matrix (the batched pattern of mechanics codes).

template <class In, class Out>
KARMA_MICROBENCH_HOST_INLINE void tiny_matrix_sum_karma_loops(const In& in, const Out& out) {
  using Layout = typename In::array_layout;
  const Index n0 = in.extent(0), n1 = in.extent(1), n2 = in.extent(2);
  if constexpr (is_right<Layout>()) {
    for (Index i = 0; i < n0; ++i)
      for (Index j = 0; j < n1; ++j)
        for (Index k = 0; k < n2; ++k) out(i, j, k) += in(i, j, k);
  } else {
    for (Index k = 0; k < n2; ++k)
      for (Index j = 0; j < n1; ++j)
        for (Index i = 0; i < n0; ++i) out(i, j, k) += in(i, j, k);
  }
}

template <class In, class Out>
KARMA_MICROBENCH_KERNEL void tiny_matrix_sum_karma(const In& in, const Out& out) {
  tiny_matrix_sum_karma_loops(unmanaged(in), unmanaged(out));
}

template <class In, class Out>
KARMA_MICROBENCH_KERNEL void tiny_matrix_sum_karma_byref(const In& in, const Out& out) {
  tiny_matrix_sum_karma_loops(in, out);
}

template <class Layout, class T, class E0, class E1, class E2>
KARMA_MICROBENCH_KERNEL void tiny_matrix_sum_raw(const T* in, T* out, const Shape<E0, E1, E2>& n) {
  if constexpr (is_right<Layout>()) {
    for (Index i = 0; i < n.n0; ++i) {
      const Index matrix = i * (n.n1 * n.n2);
      for (Index j = 0; j < n.n1; ++j)
        for (Index k = 0; k < n.n2; ++k) out[matrix + j * n.n2 + k] += in[matrix + j * n.n2 + k];
    }
  } else {
    for (Index k = 0; k < n.n2; ++k)
      for (Index j = 0; j < n.n1; ++j) {
        const Index line = (k * n.n1 + j) * n.n0;
        for (Index i = 0; i < n.n0; ++i) out[line + i] += in[line + i];
      }
  }
}

template <class In, class Out>
void tiny_matrix_sum_karma_parallel(const In& in, const Out& out) {
  using Layout = typename In::array_layout;
  const RangePolicy policy(0, in.extent(0));
  // The small extents come from the arrays: compile-time constants where static.
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_for(
        "microbench::tiny_matrix_sum::karma", policy, KOKKOS_LAMBDA(const Index i) {
          for (Index j = 0; j < Index(in.extent(1)); ++j)
            for (Index k = 0; k < Index(in.extent(2)); ++k) out(i, j, k) += in(i, j, k);
        });
  } else {
    Kokkos::parallel_for(
        "microbench::tiny_matrix_sum::karma", policy, KOKKOS_LAMBDA(const Index i) {
          for (Index k = 0; k < Index(in.extent(2)); ++k)
            for (Index j = 0; j < Index(in.extent(1)); ++j) out(i, j, k) += in(i, j, k);
        });
  }
}

template <class Layout, class T, class E0, class E1, class E2>
void tiny_matrix_sum_raw_parallel(const T* in, T* out, const Shape<E0, E1, E2>& n) {
  const RangePolicy policy(0, n.n0);
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_for(
        "microbench::tiny_matrix_sum::raw", policy, KOKKOS_LAMBDA(const Index i) {
          const Index matrix = i * (n.n1 * n.n2);
          for (Index j = 0; j < n.n1; ++j)
            for (Index k = 0; k < n.n2; ++k)
              out[matrix + j * n.n2 + k] += in[matrix + j * n.n2 + k];
        });
  } else {
    Kokkos::parallel_for(
        "microbench::tiny_matrix_sum::raw", policy, KOKKOS_LAMBDA(const Index i) {
          for (Index k = 0; k < n.n2; ++k)
            for (Index j = 0; j < n.n1; ++j) {
              const Index c = i + n.n0 * (j + n.n1 * k);
              out[c] += in[c];
            }
        });
  }
}

// ---------------------------------------------------------------------------
// Subspan3D: Sum3D through slices. The karma version takes a 2D subview of
// each slab and a 1D subview of each line in it, as the paper does with
// subspan; the raw version computes the slab's and the line's pointers.
// Slabs are across the slowest index, lines along the contiguous one.

template <class View>
KARMA_MICROBENCH_HOST_INLINE value_t<View> subspan3d_karma_loops(const View& a) {
  using Layout = typename View::array_layout;
  value_t<View> sum = 0;
  if constexpr (is_right<Layout>()) {
    const Index n0 = a.extent(0);
    for (Index i = 0; i < n0; ++i) {
      const auto slab = Kokkos::subview(a, i, Kokkos::ALL, Kokkos::ALL);
      const Index n1 = slab.extent(0);
      for (Index j = 0; j < n1; ++j) {
        const auto line = Kokkos::subview(slab, j, Kokkos::ALL);
        const Index n2 = line.extent(0);
        for (Index k = 0; k < n2; ++k) sum += line(k);
      }
    }
  } else {
    const Index n2 = a.extent(2);
    for (Index k = 0; k < n2; ++k) {
      const auto slab = Kokkos::subview(a, Kokkos::ALL, Kokkos::ALL, k);
      const Index n1 = slab.extent(1);
      for (Index j = 0; j < n1; ++j) {
        const auto line = Kokkos::subview(slab, Kokkos::ALL, j);
        const Index n0 = line.extent(0);
        for (Index i = 0; i < n0; ++i) sum += line(i);
      }
    }
  }
  return sum;
}

template <class View>
KARMA_MICROBENCH_KERNEL value_t<View> subspan3d_karma(const View& a) {
  return subspan3d_karma_loops(unmanaged(a));
}

template <class View>
KARMA_MICROBENCH_KERNEL value_t<View> subspan3d_karma_byref(const View& a) {
  return subspan3d_karma_loops(a);
}

template <class Layout, class T, class E0, class E1, class E2>
KARMA_MICROBENCH_KERNEL T subspan3d_raw(const T* a, const Shape<E0, E1, E2>& n) {
  T sum = 0;
  if constexpr (is_right<Layout>()) {
    for (Index i = 0; i < n.n0; ++i) {
      const T* slab = a + i * (n.n1 * n.n2);
      for (Index j = 0; j < n.n1; ++j) {
        const T* line = slab + j * n.n2;
        for (Index k = 0; k < n.n2; ++k) sum += line[k];
      }
    }
  } else {
    for (Index k = 0; k < n.n2; ++k) {
      const T* slab = a + k * (n.n0 * n.n1);
      for (Index j = 0; j < n.n1; ++j) {
        const T* line = slab + j * n.n0;
        for (Index i = 0; i < n.n0; ++i) sum += line[i];
      }
    }
  }
  return sum;
}

// In parallel: one team per slab, its threads over the lines, each line
// reduced by the vector lanes (coalesced on a GPU).
template <class View>
value_t<View> subspan3d_karma_parallel(const View& a) {
  using Layout = typename View::array_layout;
  using T = value_t<View>;
  T sum = 0;
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_reduce(
        "microbench::subspan3d::karma", TeamPolicy(a.extent(0), Kokkos::AUTO, vector_length()),
        KOKKOS_LAMBDA(const TeamMember& team, T& acc) {
          const auto slab = Kokkos::subview(a, team.league_rank(), Kokkos::ALL, Kokkos::ALL);
          T slab_sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, static_cast<Index>(slab.extent(0))),
              [&](const Index j, T& lines) {
                const auto line = Kokkos::subview(slab, j, Kokkos::ALL);
                T line_sum = 0;
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(team, static_cast<Index>(line.extent(0))),
                    [&](const Index k, T& v) { v += line(k); }, line_sum);
                lines += line_sum;
              },
              slab_sum);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { acc += slab_sum; });
        },
        sum);
  } else {
    Kokkos::parallel_reduce(
        "microbench::subspan3d::karma", TeamPolicy(a.extent(2), Kokkos::AUTO, vector_length()),
        KOKKOS_LAMBDA(const TeamMember& team, T& acc) {
          const auto slab = Kokkos::subview(a, Kokkos::ALL, Kokkos::ALL, team.league_rank());
          T slab_sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, static_cast<Index>(slab.extent(1))),
              [&](const Index j, T& lines) {
                const auto line = Kokkos::subview(slab, Kokkos::ALL, j);
                T line_sum = 0;
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(team, static_cast<Index>(line.extent(0))),
                    [&](const Index i, T& v) { v += line(i); }, line_sum);
                lines += line_sum;
              },
              slab_sum);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { acc += slab_sum; });
        },
        sum);
  }
  return sum;
}

template <class Layout, class T, class E0, class E1, class E2>
T subspan3d_raw_parallel(const T* a, const Shape<E0, E1, E2>& n) {
  T sum = 0;
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_reduce(
        "microbench::subspan3d::raw", TeamPolicy(n.n0, Kokkos::AUTO, vector_length()),
        KOKKOS_LAMBDA(const TeamMember& team, T& acc) {
          const T* slab = a + team.league_rank() * (n.n1 * n.n2);
          T slab_sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, Index(n.n1)),
              [&](const Index j, T& lines) {
                const T* line = slab + j * n.n2;
                T line_sum = 0;
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(team, Index(n.n2)),
                    [&](const Index k, T& v) { v += line[k]; }, line_sum);
                lines += line_sum;
              },
              slab_sum);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { acc += slab_sum; });
        },
        sum);
  } else {
    Kokkos::parallel_reduce(
        "microbench::subspan3d::raw", TeamPolicy(n.n2, Kokkos::AUTO, vector_length()),
        KOKKOS_LAMBDA(const TeamMember& team, T& acc) {
          const T* slab = a + team.league_rank() * (n.n0 * n.n1);
          T slab_sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, Index(n.n1)),
              [&](const Index j, T& lines) {
                const T* line = slab + j * n.n0;
                T line_sum = 0;
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(team, Index(n.n0)),
                    [&](const Index i, T& v) { v += line[i]; }, line_sum);
                lines += line_sum;
              },
              slab_sum);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { acc += slab_sum; });
        },
        sum);
  }
  return sum;
}

// ---------------------------------------------------------------------------
// MatVec: y = A x, A of rows x cols. Serially: dot products of rows
// (LayoutRight) or a sum of scaled columns (LayoutLeft). In parallel: one
// team per row, reducing over the contiguous row (LayoutRight), or one work
// item per row, adjacent items reading adjacent elements (LayoutLeft).

template <class Matrix, class Vector>
KARMA_MICROBENCH_HOST_INLINE void matvec_karma_loops(const Matrix& A, const Vector& x,
                                                     const Vector& y) {
  using Layout = typename Matrix::array_layout;
  using T = value_t<Vector>;
  const Index rows = A.extent(0), cols = A.extent(1);
  if constexpr (is_right<Layout>()) {
    for (Index i = 0; i < rows; ++i) {
      T dot = 0;
      for (Index j = 0; j < cols; ++j) dot += A(i, j) * x(j);
      y(i) = dot;
    }
  } else {
    for (Index i = 0; i < rows; ++i) y(i) = 0;
    for (Index j = 0; j < cols; ++j) {
      const T xj = x(j);
      for (Index i = 0; i < rows; ++i) y(i) += A(i, j) * xj;
    }
  }
}

template <class Matrix, class Vector>
KARMA_MICROBENCH_KERNEL void matvec_karma(const Matrix& A, const Vector& x, const Vector& y) {
  matvec_karma_loops(unmanaged(A), unmanaged(x), unmanaged(y));
}

template <class Matrix, class Vector>
KARMA_MICROBENCH_KERNEL void matvec_karma_byref(const Matrix& A, const Vector& x, const Vector& y) {
  matvec_karma_loops(A, x, y);
}

template <class Layout, class T>
KARMA_MICROBENCH_KERNEL void matvec_raw(const T* A, const T* x, T* y, Index rows, Index cols) {
  if constexpr (is_right<Layout>()) {
    for (Index i = 0; i < rows; ++i) {
      const T* row = A + i * cols;
      T dot = 0;
      for (Index j = 0; j < cols; ++j) dot += row[j] * x[j];
      y[i] = dot;
    }
  } else {
    for (Index i = 0; i < rows; ++i) y[i] = 0;
    for (Index j = 0; j < cols; ++j) {
      const T* column = A + j * rows;
      const T xj = x[j];
      for (Index i = 0; i < rows; ++i) y[i] += column[i] * xj;
    }
  }
}

template <class Matrix, class Vector>
void matvec_karma_parallel(const Matrix& A, const Vector& x, const Vector& y) {
  using Layout = typename Matrix::array_layout;
  using T = value_t<Vector>;
  const Index rows = A.extent(0);
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_for(
        "microbench::matvec::karma", TeamPolicy(rows, Kokkos::AUTO),
        KOKKOS_LAMBDA(const TeamMember& team) {
          const Index i = team.league_rank();
          T dot = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, static_cast<Index>(A.extent(1))),
              [&](const Index j, T& acc) { acc += A(i, j) * x(j); }, dot);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { y(i) = dot; });
        });
  } else {
    Kokkos::parallel_for(
        "microbench::matvec::karma", RangePolicy(0, rows), KOKKOS_LAMBDA(const Index i) {
          const Index cols = A.extent(1);
          T dot = 0;
          for (Index j = 0; j < cols; ++j) dot += A(i, j) * x(j);
          y(i) = dot;
        });
  }
}

template <class Layout, class T>
void matvec_raw_parallel(const T* A, const T* x, T* y, Index rows, Index cols) {
  if constexpr (is_right<Layout>()) {
    Kokkos::parallel_for(
        "microbench::matvec::raw", TeamPolicy(rows, Kokkos::AUTO),
        KOKKOS_LAMBDA(const TeamMember& team) {
          const Index i = team.league_rank();
          const T* row = A + i * cols;
          T dot = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, cols),
              [&](const Index j, T& acc) { acc += row[j] * x[j]; }, dot);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { y[i] = dot; });
        });
  } else {
    Kokkos::parallel_for(
        "microbench::matvec::raw", RangePolicy(0, rows), KOKKOS_LAMBDA(const Index i) {
          T dot = 0;
          for (Index j = 0; j < cols; ++j) dot += A[i + j * rows] * x[j];
          y[i] = dot;
        });
  }
}

}  // namespace karma::microbench
