// inline_shared_sources: what arcd export and a run's best/ folder write in place of a shared
// source's #include.
#include "problem/shared_sources.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace arc::problem {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(InlineSharedSources, WritesEachSharedSourceOnceAndKeepsOtherIncludes) {
  const std::map<std::string, std::string> headers = {
      {"io/vec.h", "#pragma once\n#include \"scalar.h\"\nVEC_BODY\n"},
      {"io/scalar.h", "#pragma once\nSCALAR_BODY\n"},
      {"scalar.h", "TOP_SCALAR\n"},
      {"dtype.h", "#pragma once\nDTYPE_BODY\n"}};
  const std::string src =
      "#include <cuda_bf16.h>\n#include \"arc_cuda.h\"\n#include \"io/vec.h\"\n"
      "#include <dtype.h>\n#include \"io/vec.h\"\nBODY\n";
  const std::string out = inline_shared_sources(src, headers);
  EXPECT_THAT(out, HasSubstr("#include <cuda_bf16.h>\n"));
  EXPECT_THAT(out, HasSubstr("#include \"arc_cuda.h\"\n"));
  EXPECT_THAT(out, HasSubstr("VEC_BODY"));
  // "scalar.h" from io/vec.h is io/scalar.h first: the folder of the including source.
  EXPECT_THAT(out, HasSubstr("SCALAR_BODY"));
  EXPECT_THAT(out, Not(HasSubstr("TOP_SCALAR")));
  EXPECT_THAT(out, HasSubstr("DTYPE_BODY"));
  EXPECT_THAT(out, Not(HasSubstr("#pragma once")));
  EXPECT_EQ(out.find("VEC_BODY"), out.rfind("VEC_BODY")) << "written once";
  EXPECT_THAT(out, HasSubstr("// (already inlined) #include \"io/vec.h\""));
  EXPECT_LT(out.find("SCALAR_BODY"), out.find("VEC_BODY")) << "in include order";
  EXPECT_LT(out.find("VEC_BODY"), out.find("BODY\n", out.find("DTYPE_BODY") + 11));
}

TEST(InlineSharedSources, NoSharedSourcesLeavesTheTextAsItIs) {
  const std::string src = "#include \"x.h\"\nint a;";
  EXPECT_EQ(inline_shared_sources(src, {}), src);
  EXPECT_EQ(inline_shared_sources(src, {{"y.h", "Y"}}), "#include \"x.h\"\nint a;\n");
}

}  // namespace
}  // namespace arc::problem
