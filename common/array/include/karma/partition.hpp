// The split of a range of items over parts (ranks, threads) that every
// mini-app uses: contiguous blocks, as even as possible, the first blocks one
// item larger when it does not divide.
#pragma once

#include <algorithm>
#include <cstdint>

namespace karma {

struct Block {
  std::int64_t first = 0;  // the block is [first, first + count)
  std::int64_t count = 0;
};

// Block `index` of `total` items over `parts` (parts >= 1, 0 <= index < parts).
constexpr Block block_of(std::int64_t total, std::int64_t parts, std::int64_t index) {
  const std::int64_t base = total / parts, extra = total % parts;
  return {index * base + std::min(index, extra), base + (index < extra ? 1 : 0)};
}

}  // namespace karma
