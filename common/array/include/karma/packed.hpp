// 16 bytes of contiguous values loaded as one: a GPU thread's wider load,
// which halves (double) or quarters (float) the load instructions a byte
// and keeps more bytes in flight for the same registers.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace karma {

// Two doubles or four floats.
template <class T>
struct alignas(16) Packed {
  static constexpr int width = static_cast<int>(16 / sizeof(T));
  T v[width];
};

template <class T>
KOKKOS_INLINE_FUNCTION T packed_dot(const Packed<T>& a, const Packed<T>& b) {
  T s = a.v[0] * b.v[0];
  for (int k = 1; k < Packed<T>::width; ++k) s += a.v[k] * b.v[k];
  return s;
}

// Whether p may be read as Packed units.
inline bool packed_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % sizeof(Packed<double>) == 0;
}

}  // namespace karma
