// SHA-256 (FIPS 180-4) of a byte string, as 64 lower-case hex digits: the
// results record which deck produced them.
#pragma once

#include <string>

namespace karma {

std::string sha256_hex(const std::string& bytes);

}  // namespace karma
