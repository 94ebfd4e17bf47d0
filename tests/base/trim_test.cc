// base/trim.h.
#include "base/trim.h"

#include <gtest/gtest.h>

namespace arc {
namespace {

TEST(Trim, DropsBlanksAtBothEndsOnly) {
  EXPECT_EQ(trim("  a b\t\r\n"), "a b");
  EXPECT_EQ(trim("x"), "x");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim(""), "");
  // Other blanks: a line end is kept when only spaces and tabs are blanks.
  EXPECT_EQ(trim(" local:1\n", " \t"), "local:1\n");
  EXPECT_EQ(trim("\t local:1 ", " \t"), "local:1");
}

}  // namespace
}  // namespace arc
