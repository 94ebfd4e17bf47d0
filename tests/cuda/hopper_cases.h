#pragma once
// The sm_90 GEMM families' variants that the GPU tests run: the Hopper family
// (problems/gpu/common/gemm/families/hopper.cu) and the bulk-copy skinny family (bulk.cu), every
// mechanism checked for correctness, and the variants measured against cuBLASLt's default in
// pairs. tests/cuda/families_compile_test.cc checks on any machine that
// each is inside its problem's search space and compiles without serialized wgmmas, so the GPU
// time goes to running them.
#include <map>
#include <string>
#include <vector>

namespace arc::test_cases {

using Knobs = std::map<std::string, std::string>;

struct HopperCase {
  std::string problem;            // problems/gpu/<problem>
  Knobs knobs;                    // differences from the family's defaults
  std::string family = "hopper";  // the family's name in the problem
};

// A skinny-m variant: w as wgmma's A in 64-row tiles, BLOCK_N rows of x, one consumer, SPLIT_K
// blocks per tile (not persistent), STAGES deep, and `more` on top.
inline Knobs skinny(const char* block_n, const char* split_k, const char* stages, Knobs more = {}) {
  more.insert({{"SWAP_AB", "1"},
               {"BLOCK_M", "64"},
               {"BLOCK_N", block_n},
               {"CONSUMERS", "1"},
               {"SPLIT_K", split_k},
               {"PERSIST", "0"},
               {"STAGES", stages}});
  return more;
}

// persistent or not, one to three consumers, each swizzle, clusters with and without TMA
// multicast, split-K through distributed shared memory (one and two consumers), swapped
// operands for a skinny m, ping-pong consumers, the TMA-store epilogue, two blocks per SM; the
// in-place residual (attn_out_proj_bf16) on the variants whose epilogue differs; fp8 with its
// scales and promotion interval (gemm_fp8).
inline std::vector<HopperCase> hopper_mechanisms() {
  const std::vector<Knobs> bf16 = {
      {},
      {{"PERSIST", "0"}, {"RASTER", "1"}, {"GROUP", "1"}},
      {{"BLOCK_M", "64"},
       {"BLOCK_N", "128"},
       {"CONSUMERS", "1"},
       {"SWIZZLE", "64"},
       {"STAGES", "6"}},
      {{"BLOCK_M", "192"},
       {"BLOCK_N", "128"},
       {"CONSUMERS", "3"},
       {"SWIZZLE", "32"},
       {"BLOCK_K", "32"}},
      {{"CLUSTER_M", "2"}, {"MULTICAST", "1"}, {"STAGES", "3"}},
      {{"CLUSTER_M", "2"}, {"CLUSTER_N", "2"}, {"MULTICAST", "1"}, {"BLOCK_N", "128"}},
      {{"CLUSTER_N", "2"}, {"BLOCK_N", "128"}, {"BLOCK_K", "128"}, {"STAGES", "3"}},
      {{"SWAP_AB", "1"}, {"BLOCK_N", "16"}, {"SPLIT_K", "4"}, {"PERSIST", "0"}},
      {{"SWAP_AB", "1"}, {"BLOCK_N", "32"}, {"BLOCK_M", "64"}, {"CONSUMERS", "1"}},
      {{"SWAP_AB", "1"}, {"BLOCK_N", "16"}, {"SPLIT_K", "2"}, {"PERSIST", "0"}},
      {{"PINGPONG", "1"}, {"BLOCK_N", "128"}},
      {{"PINGPONG", "1"}, {"CONSUMERS", "3"}, {"BLOCK_N", "64"}, {"PERSIST", "0"}},
      {{"PINGPONG", "1"},
       {"BLOCK_N", "128"},
       {"CLUSTER_M", "2"},
       {"MULTICAST", "1"},
       {"STAGES", "3"}},
      {{"EPILOGUE", "1"}, {"STAGES", "3"}},
      {{"EPILOGUE", "1"}, {"PINGPONG", "1"}, {"BLOCK_N", "128"}, {"RASTER", "1"}},
      {{"OCCUPANCY", "2"},
       {"BLOCK_M", "64"},
       {"BLOCK_N", "128"},
       {"CONSUMERS", "1"},
       {"STAGES", "3"}},
      skinny("16", "4", "8", {{"OCCUPANCY", "2"}})};
  const std::vector<size_t> residual = {0, 7, 10, 13, 14, 16};
  const std::vector<Knobs> fp8 = {
      {},
      {{"CLUSTER_M", "2"}, {"MULTICAST", "1"}},
      {{"SWIZZLE", "64"}, {"BLOCK_K", "64"}, {"BLOCK_N", "128"}, {"STAGES", "6"}},
      {{"SWAP_AB", "1"}, {"BLOCK_N", "16"}, {"SPLIT_K", "4"}, {"PERSIST", "0"}},
      {{"PROMOTE", "4"}},
      {{"PINGPONG", "1"}, {"BLOCK_N", "64"}, {"PROMOTE", "2"}},
      {{"EPILOGUE", "1"}, {"STAGES", "3"}},
      {{"OCCUPANCY", "2"}, {"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"CONSUMERS", "1"}}};
  std::vector<HopperCase> out;
  for (const auto& k : bf16) out.push_back({"gemm_bf16", k});
  for (size_t i : residual) out.push_back({"attn_out_proj_bf16", bf16[i]});
  for (const auto& k : fp8) out.push_back({"gemm_fp8", k});
  return out;
}

// Measured against cuBLASLt's default in pairs (docs/performance.md, "The Hopper GEMM family").
inline std::vector<HopperCase> hopper_pairs() {
  const Knobs pingpong = {{"PINGPONG", "1"}, {"BLOCK_N", "128"}};
  Knobs pingpong_tma = pingpong, pingpong_cluster = pingpong;
  pingpong_tma["EPILOGUE"] = "1";
  pingpong_cluster.insert({{"CLUSTER_M", "2"}, {"MULTICAST", "1"}, {"STAGES", "5"}});
  return {
      {"gemm_bf16", {}},
      {"gemm_bf16", {{"CLUSTER_M", "2"}, {"MULTICAST", "1"}, {"STAGES", "3"}}},
      {"gemm_bf16", {{"SWAP_AB", "1"}, {"BLOCK_M", "64"}, {"BLOCK_N", "32"}, {"CONSUMERS", "1"}}},
      {"gemm_bf16", skinny("16", "2", "8")},
      {"gemm_bf16", skinny("64", "2", "6")},
      {"gemm_bf16", skinny("16", "4", "8")},
      {"gemm_bf16", skinny("16", "4", "8", {{"OCCUPANCY", "2"}})},
      {"gemm_bf16", skinny("16", "2", "5", {{"BLOCK_K", "128"}, {"OCCUPANCY", "2"}})},
      {"gemm_bf16", {{"BLOCK_M", "256"}, {"BLOCK_N", "128"}}},
      {"gemm_bf16", pingpong},
      {"gemm_bf16", pingpong_tma},
      {"gemm_bf16", pingpong_cluster},
      {"gemm_bf16", {{"EPILOGUE", "1"}, {"STAGES", "4"}}},
      {"attn_out_proj_bf16", {{"CLUSTER_M", "2"}, {"MULTICAST", "1"}, {"STAGES", "3"}}},
      {"attn_out_proj_bf16", pingpong_tma},
      {"gemm_fp8", {}},
      {"gemm_fp8", {{"CLUSTER_M", "2"}, {"MULTICAST", "1"}}},
      {"gemm_fp8", {{"PROMOTE", "4"}}},
      {"gemm_fp8", {{"PINGPONG", "1"}, {"BLOCK_N", "64"}, {"PROMOTE", "4"}, {"EPILOGUE", "1"}}}};
}

// The bulk family (bulk.cu): defaults, each knob's mechanism (split-K clusters through
// distributed shared memory, two and four m16 tiles, one and eight consumer warps, the shortest
// and longest stages, no L2 policy, the fewest stages), on gemm_bf16, with the in-place
// residual on attn_out_proj_bf16, and in e4m3 with its scales on gemm_fp8.
inline std::vector<HopperCase> bulk_mechanisms() {
  const std::vector<Knobs> knobs = {
      {},
      {{"SPLIT_K", "2"}, {"BLOCK_N", "32"}},
      {{"SPLIT_K", "8"}, {"BLOCK_N", "64"}, {"WARPS", "8"}, {"STAGES", "3"}},
      {{"TILE_M", "32"}, {"BLOCK_N", "8"}, {"WARPS", "1"}},
      {{"TILE_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "64"}, {"WARPS", "2"}, {"STAGES", "4"}},
      {{"BLOCK_K", "512"}, {"STAGES", "3"}, {"WARPS", "8"}, {"EVICT_W", "0"}},
      {{"STAGES", "2"}, {"SPLIT_K", "4"}}};
  std::vector<HopperCase> out;
  for (const auto& k : knobs) out.push_back({"gemm_bf16", k, "bulk"});
  for (size_t i : {0, 1, 4}) out.push_back({"attn_out_proj_bf16", knobs[i], "bulk"});
  out.push_back({"gemm_fp8", {}, "bulk"});
  out.push_back({"gemm_fp8",
                 {{"SPLIT_K", "4"}, {"BLOCK_N", "32"}, {"BLOCK_K", "1024"}, {"STAGES", "3"}},
                 "bulk"});
  out.push_back({"gemm_fp8", {{"TILE_M", "32"}, {"BLOCK_K", "128"}, {"WARPS", "2"}}, "bulk"});
  return out;
}

// The bulk family against cuBLASLt's default in pairs.
inline std::vector<HopperCase> bulk_pairs() {
  return {
      {"gemm_bf16", {}, "bulk"},
      {"gemm_bf16", {{"SPLIT_K", "2"}, {"BLOCK_N", "32"}}, "bulk"},
      {"gemm_bf16",
       {{"TILE_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "128"}, {"SPLIT_K", "2"}, {"STAGES", "3"}},
       "bulk"},
      {"gemm_fp8", {}, "bulk"},
      {"gemm_fp8", {{"SPLIT_K", "2"}, {"BLOCK_N", "32"}}, "bulk"}};
}

}  // namespace arc::test_cases
