// actors/worker_admission.h: one device model per run, one worker per device.
#include "actors/worker_admission.h"

#include <gtest/gtest.h>

namespace arc::actors {
namespace {

const std::string kH200 = "NVIDIA H200 (sm_90, 132 SMs, 139 GiB)";

TEST(WorkerAdmission, TheFirstWorkerSetsTheModelAndTheOthersMustMatchIt) {
  EXPECT_EQ(admission_refusal("", kH200, "gpu:GPU-1 0000:19:00.0", {}), "");
  EXPECT_EQ(admission_refusal(kH200, kH200, "gpu:GPU-2 0000:3b:00.0",
                              {{"local:0", "gpu:GPU-1 0000:19:00.0"}}),
            "");
  const std::string r = admission_refusal(kH200, "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)",
                                          "gpu:GPU-3 0000:5d:00.0", {});
  EXPECT_EQ(
      r.rfind("it measures on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), the run on " + kH200, 0), 0u)
      << r;
  EXPECT_NE(r.find("never compared across device models"), std::string::npos) << r;
}

TEST(WorkerAdmission, OneDeviceIsNeverMeasuredThroughTwoWorkers) {
  const std::vector<LiveWorker> live = {{"local:0", "gpu:GPU-1 0000:19:00.0"},
                                        {"10.0.0.2:7000", "gpu:GPU-9 0000:19:00.0"}};
  const std::string r = admission_refusal(kH200, kH200, "gpu:GPU-9 0000:19:00.0", live);
  EXPECT_EQ(r,
            "its device gpu:GPU-9 0000:19:00.0 is already measured by worker 10.0.0.2:7000; two "
            "workers on one device would be timed at once");
  // A model mismatch is said first; a worker whose device is not known matches none.
  EXPECT_EQ(admission_refusal(kH200, "other", "gpu:GPU-9 0000:19:00.0", live)
                .rfind("it measures on other", 0),
            0u);
  EXPECT_EQ(admission_refusal(kH200, kH200, "", {{"local", ""}}), "");
}

}  // namespace
}  // namespace arc::actors
