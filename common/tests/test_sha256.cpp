// SHA-256 against the FIPS 180-4 example vectors and against sha256sum for
// messages whose lengths sit on both sides of the padding boundaries.
#include "karma/sha256.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace {

// The prefix of this sentence of length n: varied bytes, so a permuted word
// order or a wrong byte order in a word changes the digest.
const std::string pattern =
    "The quick brown fox jumps over the lazy dog; 0123456789 ABCDEFGHIJKLMNOP";

bool is_lower_hex(const std::string& s) {
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch)) && !(ch >= 'a' && ch <= 'f')) return false;
  return true;
}

TEST(Sha256, EmptyMessage) {
  EXPECT_EQ(karma::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
  EXPECT_EQ(karma::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage448Bits) {
  const std::string m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  ASSERT_EQ(m.size(), 56u);
  EXPECT_EQ(karma::sha256_hex(m),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, OneMillionA) {
  EXPECT_EQ(karma::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Expected digests from `printf %s ... | sha256sum` on the build machine.
TEST(Sha256, RepeatedAAroundBlockBoundaries) {
  EXPECT_EQ(karma::sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(karma::sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(karma::sha256_hex(std::string(63, 'a')),
            "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(karma::sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(karma::sha256_hex(std::string(65, 'a')),
            "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0");
}

TEST(Sha256, VariedBytesAroundBlockBoundaries) {
  ASSERT_GE(pattern.size(), 65u);
  EXPECT_EQ(karma::sha256_hex(pattern.substr(0, 55)),
            "6c4d23ec244adb9d397e4afe6812e9f88c249ad8e5b5488516aeb49c1e6ca514");
  EXPECT_EQ(karma::sha256_hex(pattern.substr(0, 56)),
            "d6c9f594da83bfdda0e1b482d854d9ab0defec8cd2c8b601579362e6d88830b4");
  EXPECT_EQ(karma::sha256_hex(pattern.substr(0, 63)),
            "841e994b003277c30248c36c05a722ff7b8634cdbab4b675cde8b2395235094a");
  EXPECT_EQ(karma::sha256_hex(pattern.substr(0, 64)),
            "70e7bdffa80210f52aaa435e9bec8dff7be05f9814460c6cceea525035ff6c3a");
  EXPECT_EQ(karma::sha256_hex(pattern.substr(0, 65)),
            "a96446e3f78ded2bbe59f9fe7c7d4506b1dfc0fd1a57cadf4b35a40887bdd21a");
}

// Bytes >= 0x80 and an embedded NUL: the input is bytes, not a C string, and
// a signed char must not sign-extend into the message schedule.
TEST(Sha256, BinaryBytesWithNulAndHighBit) {
  const std::string m("line1\nline2\n\0\xff\x80tail", 19);
  ASSERT_EQ(m.size(), 19u);
  EXPECT_EQ(karma::sha256_hex(m),
            "39971aa7a2a244df5065ae03091ab97c6ef8548ddb2223a9c2c649badd01a6e1");
}

TEST(Sha256, OutputIs64LowerCaseHexDigits) {
  for (std::size_t n : {0u, 1u, 55u, 64u, 200u}) {
    const std::string h = karma::sha256_hex(std::string(n, 'x'));
    EXPECT_EQ(h.size(), 64u) << "length " << n;
    EXPECT_TRUE(is_lower_hex(h)) << h;
  }
}

}  // namespace
