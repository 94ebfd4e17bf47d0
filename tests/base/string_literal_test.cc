// string_literal(): the string literal canonical forms, logs and campaign texts are written with.
#include "base/string_literal.h"

#include <string>

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"

namespace arc {
namespace {

TEST(StringLiteral, IsWhatNlohmannDumpWritesForEveryByte) {
  for (int c = 1; c < 256; ++c) {
    const std::string s = std::string("a") + static_cast<char>(c) + "z";
    if (c >= 0x80) continue;  // a lone high byte is not UTF-8; dump() would throw
    EXPECT_EQ(string_literal(s), nlohmann::json(s).dump()) << "byte " << c;
  }
  EXPECT_EQ(string_literal(""), "\"\"");
  EXPECT_EQ(string_literal("caf\xc3\xa9"), "\"caf\xc3\xa9\"") << "UTF-8 passes through";
}

TEST(StringLiteral, EscapesDelForToml) {
  EXPECT_EQ(string_literal("a\x7f"), "\"a\x7f\"");
  EXPECT_EQ(string_literal("a\x7f", true), "\"a\\u007f\"");
  EXPECT_EQ(string_literal("tab\there \"q\" back\\slash\n", true),
            "\"tab\\there \\\"q\\\" back\\\\slash\\n\"");
}

}  // namespace
}  // namespace arc
