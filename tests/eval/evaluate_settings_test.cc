// The "evaluate" request's settings as a worker reads them (eval/protocol.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "eval/protocol.h"

namespace arc::eval {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json request() {
  return {{"op", "evaluate"},
          {"input_seed", 9},
          {"tolerance", {{"atol", 1e-3}, {"rtol", 1e-2}, {"matched_ratio", 1.0}}}};
}

TEST(EvaluateSettings, TimingDefaultsToAutoAndTakesTheThreeMethods) {
  EXPECT_EQ(parse_evaluate_settings(request()).timing, "auto");
  for (const char* t : {"auto", "cuda_events", "cupti"}) {
    json j = request();
    j["timing"] = t;
    EXPECT_EQ(parse_evaluate_settings(j).timing, t);
  }
}

TEST(EvaluateSettings, AnUnknownTimingMethodIsAMalformedRequest) {
  json j = request();
  j["timing"] = "sundial";
  try {
    parse_evaluate_settings(j);
    FAIL() << "accepted timing \"sundial\"";
  } catch (const json::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("timing \"sundial\": expected \"auto\", \"cuda_events\" or "
                                    "\"cupti\""));
  }
}

}  // namespace
}  // namespace arc::eval
