// The remote worker protocol's pure parts (eval/remote_protocol.h): endpoints and --serve
// addresses, the proofs of the shared secret, and the requests that cross the network.
#include "eval/remote_protocol.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "problem/problem.h"

namespace arc::eval {
namespace {

using ::testing::HasSubstr;

TEST(RemoteProtocol, WorkerEndpointsNeedAHostAndAPortFromOneTo65535) {
  auto ep = parse_worker_endpoint("gpu-box.lan:7070");
  ASSERT_TRUE(ep) << ep.status().to_string();
  EXPECT_EQ(ep->host, "gpu-box.lan");
  EXPECT_EQ(ep->port, 7070);
  EXPECT_EQ(ep->text(), "gpu-box.lan:7070");
  auto v6 = parse_worker_endpoint("[::1]:9");
  ASSERT_TRUE(v6) << v6.status().to_string();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->text(), "[::1]:9");
  for (const char* bad : {"host", "host:", ":80", "host:0", "host:65536", "host:8o", "::1:80"}) {
    auto r = parse_worker_endpoint(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr(std::string("\"") + bad + "\""));
    EXPECT_THAT(r.status().message(), HasSubstr("expected HOST:PORT with a port 1..65535"));
  }
}

TEST(RemoteProtocol, ServeAddressDefaultsToLoopbackAndAcceptsPortZero) {
  auto only_port = parse_serve_address("7070");
  ASSERT_TRUE(only_port);
  EXPECT_EQ(only_port->text(), "127.0.0.1:7070");
  auto colon = parse_serve_address(":0");
  ASSERT_TRUE(colon);
  EXPECT_EQ(colon->text(), "127.0.0.1:0");
  auto any = parse_serve_address("0.0.0.0:7070");
  ASSERT_TRUE(any);
  EXPECT_EQ(any->host, "0.0.0.0");
  for (const char* bad : {"", "x", "1.2.3.4:", "1.2.3.4:70000", "1.2.3.4:-1"}) {
    auto r = parse_serve_address(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("--serve"));
  }
}

TEST(RemoteProtocol, ProofsDependOnTheSecretTheRoleAndBothNonces) {
  const std::string secret(64, 'k');
  const std::string a(64, 'a'), b(64, 'b');
  const std::string worker = remote_worker_proof(secret, a, b);
  EXPECT_TRUE(is_remote_nonce(worker));
  EXPECT_EQ(worker, remote_worker_proof(secret, a, b));
  // A worker's proof never serves as a client's (no reflection), nor across nonces or secrets.
  EXPECT_NE(worker, remote_client_proof(secret, b, a));
  EXPECT_NE(worker, remote_client_proof(secret, a, b));
  EXPECT_NE(worker, remote_worker_proof(secret, b, a));
  EXPECT_NE(worker, remote_worker_proof(std::string(64, 'j'), a, b));
  EXPECT_FALSE(is_remote_nonce(std::string(63, 'a')));
  EXPECT_FALSE(is_remote_nonce(std::string(64, 'A')));
}

TEST(RemoteProtocol, EvaluateRequestsCarryTheCandidateAndEverySetting) {
  auto p = problem::load_problem(std::filesystem::path(ARC_SOURCE_DIR) /
                                 "problems/host/softmax/problem.toml");
  ASSERT_TRUE(p) << p.status().to_string();
  EvalRequest r;
  r.candidate = p->seed;
  r.candidate_hash = p->seed.hash();
  r.input_seed = 1234567890123ULL;
  r.settings.rounds = 2;
  r.settings.warmup = 3;
  r.settings.repetitions = 4;
  r.settings.buffer_sets = 5;
  r.settings.timeout_s = 6.5;
  r.settings.memory_limit_mb = 7;
  r.settings.flush_cache = false;
  r.settings.timing = "cuda_events";
  auto back = parse_evaluate_request(evaluate_request_json(r));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->candidate, r.candidate);
  EXPECT_EQ(back->candidate_hash, r.candidate_hash);
  EXPECT_EQ(back->input_seed, r.input_seed);
  EXPECT_EQ(back->settings.rounds, 2u);
  EXPECT_EQ(back->settings.warmup, 3u);
  EXPECT_EQ(back->settings.repetitions, 4u);
  EXPECT_EQ(back->settings.buffer_sets, 5u);
  EXPECT_EQ(back->settings.timeout_s, 6.5);
  EXPECT_EQ(back->settings.memory_limit_mb, 7u);
  EXPECT_FALSE(back->settings.flush_cache);
  EXPECT_EQ(back->settings.timing, "cuda_events");

  // A hash that is not the candidate's, and malformed fields, are refused naming the field.
  EvalRequest lying = r;
  lying.candidate_hash = std::string(64, '0');
  auto refused = parse_evaluate_request(evaluate_request_json(lying));
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.status().message(), HasSubstr("hashes to"));
  auto bad = parse_evaluate_request(R"({"candidate":"{}","candidate_hash":"x","input_seed":-1})");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.status().message(), HasSubstr("'input_seed'"));
  EXPECT_FALSE(parse_evaluate_request("not json"));
}

TEST(RemoteProtocol, AttachCarriesEveryFileTheHashCovers) {
  auto p = problem::load_problem(std::filesystem::path(ARC_SOURCE_DIR) /
                                 "problems/host/softmax/problem.toml");
  ASSERT_TRUE(p) << p.status().to_string();
  auto text = attach_json(p.value());
  ASSERT_TRUE(text) << text.status().to_string();
  auto back = parse_attach(text.value());
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->problem_dir, p->dir.string());
  EXPECT_EQ(back->problem_hash, p->hash);
  EXPECT_EQ(back->files, p->files);
  auto no_toml = parse_attach(R"({"problem_dir":"/p","problem_hash":"h","files":{"a.h":"x"}})");
  ASSERT_FALSE(no_toml);
  EXPECT_THAT(no_toml.status().message(), HasSubstr("problem.toml"));
}

TEST(RemoteProtocol, IdentityRoundTrips) {
  const RemoteIdentity id{"cuda", "cuda: H200 (GPU-1)", "cuda: H200", "gpu:GPU-1"};
  auto back = parse_identity(identity_json(id));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->name, id.name);
  EXPECT_EQ(back->device, id.device);
  EXPECT_EQ(back->device_model, id.device_model);
  EXPECT_EQ(back->device_key, id.device_key);
  EXPECT_FALSE(parse_identity(R"({"name":"host"})"));
}

}  // namespace
}  // namespace arc::eval
