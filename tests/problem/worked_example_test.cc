// The worked example of docs/problem-format-cuda.md is the shipped problem it describes: every
// fenced block whose info string names a file ("```cuda problems/gpu/swiglu_bf16/reference.cu")
// holds exactly that file's text, and the problem loads with the v2 features it shows.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "problem/problem.h"
#include "tests/scratch.h"

namespace arc::problem {
namespace {

namespace fs = std::filesystem;

using testing::slurp;

TEST(WorkedExample, DocBlocksAreTheShippedFilesAndTheProblemLoads) {
  const fs::path root = ARC_SOURCE_DIR;
  std::istringstream doc(slurp(root / "docs" / "problem-format-cuda.md"));
  std::string line, file, body;
  bool in_block = false;
  int checked = 0;
  while (std::getline(doc, line)) {
    if (!in_block && line.rfind("```", 0) == 0) {
      in_block = true;
      body.clear();
      const size_t space = line.find(' ');
      file = space == std::string::npos ? "" : line.substr(space + 1);
      continue;
    }
    if (in_block && line == "```") {
      in_block = false;
      if (file.empty()) continue;
      ASSERT_TRUE(fs::exists(root / file)) << "the doc shows " << file << ", which is not shipped";
      EXPECT_EQ(body, slurp(root / file))
          << "docs/problem-format-cuda.md's copy of " << file << " differs from the file";
      ++checked;
      continue;
    }
    if (in_block) body += line + "\n";
  }
  EXPECT_FALSE(in_block) << "an unclosed code block";
  EXPECT_EQ(checked, 5) << "problem.toml, reference, two families and campaign.toml";

  auto p = load_problem(root / "problems" / "gpu" / "swiglu_bf16");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->inputs.at(0).shape.at(1), "2 * cols");
  ASSERT_EQ(p->params.size(), 1u);
  EXPECT_EQ(p->param_defines().at("BETA"), p->params[0].text);
  EXPECT_EQ(p->headers.count("elem_io.cuh"), 1u);
  EXPECT_EQ(p->constraints.size(), 1u);
  // 4096 rows of 2 * 11008 bf16 columns.
  EXPECT_EQ(p->elements(p->inputs[0], *p->workload("r4096_c11008")), 4096LL * 2 * 11008);
}

}  // namespace
}  // namespace arc::problem
