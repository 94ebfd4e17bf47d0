// The worker lists of --workers and [[workers]] (actors/worker_spec.h).
#include "actors/worker_spec.h"

#include <gtest/gtest.h>

namespace arc::actors {
namespace {

TEST(WorkerSpec, ParsesLocalAndRemoteWorkers) {
  auto list = parse_worker_list("local:0, local:3,10.0.0.2:7100,[::1]:7101", "--workers");
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  ASSERT_EQ(list->size(), 4u);
  EXPECT_TRUE((*list)[0].local);
  EXPECT_EQ((*list)[0].device, 0);
  EXPECT_EQ((*list)[1].name, "local:3");
  EXPECT_EQ((*list)[1].device, 3);
  EXPECT_FALSE((*list)[2].local);
  EXPECT_EQ((*list)[2].host, "10.0.0.2");
  EXPECT_EQ((*list)[2].port, 7100);
  EXPECT_EQ((*list)[2].name, "10.0.0.2:7100");
  EXPECT_EQ((*list)[3].host, "::1");
  EXPECT_EQ((*list)[3].port, 7101);
}

TEST(WorkerSpec, AutoIsEmptyUntilExpanded) {
  auto list = parse_worker_list(" auto ", "--workers");
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
  auto one = auto_workers(0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "local");
  auto eight = auto_workers(8);
  ASSERT_EQ(eight.size(), 8u);
  EXPECT_EQ(eight[7].name, "local:7");
  EXPECT_EQ(eight[7].device, 7);
}

TEST(WorkerSpec, RefusesWhatIsNotAWorker) {
  for (const char* bad : {"", "local:", "local:-1", "local:1024", "host", "host:0", "host:70000",
                          ":7100", "local,local:0", "a:1,a:1", "auto,local"}) {
    auto list = parse_worker_list(bad, "--workers");
    EXPECT_FALSE(list.ok()) << bad;
    if (!list.ok()) {
      EXPECT_NE(list.status().message().find("--workers"), std::string::npos)
          << list.status().message();
    }
  }
}

}  // namespace
}  // namespace arc::actors
