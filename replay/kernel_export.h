#pragma once
// arcd export (docs/export.md): a run's best implementation as files a user can take away.
//   cuda:          NAME.h and NAME.cu. The .cu holds every distinct variant of the best
//                  candidate (each in its own namespace, its kernels renamed arc_vI_KERNEL, its
//                  knobs as #defines) and a host launcher that picks the variant for the
//                  workload's shape (the gated workloads' exact axis values, else the base) and
//                  launches that family's kernels with the grid, block and shared memory of its
//                  launch expressions. A cuBLASLt variant replays the algorithm recorded for
//                  each workload (replay/lt_export.h): its handle, descriptors, layouts and
//                  algorithm are set up once per shape and device and cached, so a call costs a
//                  lookup and cublasLtMatmul; a shape the table lacks, or a recorded algorithm
//                  the caller's device or cuBLASLt refuses, gets the heuristic's rank-HEUR
//                  choice, chosen once and cached.
//   sol-execbench: solution.json for SOL-ExecBench: language cuda_cpp, entry point
//                  kernel.cu::run, destination-passing style (inputs, then outputs, in problem
//                  order), torch binding; its sources are kernel.cu (the binding), NAME.h and
//                  NAME_impl.cuh (the .cu above).
//   cpp:           a host problem's NAME.h and NAME.cpp (replay/host_export.h).
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "problem/problem.h"
#include "replay/lt_export.h"

namespace arc::replay {

struct ExportedFile {
  std::string path;  // relative to the output folder
  std::string content;
};

struct KernelExportInput {
  const problem::Problem* problem = nullptr;
  problem::Candidate candidate;
  std::string candidate_hash;
  std::map<std::string, std::string> family_sources;  // family name -> source text
  std::map<std::string, LtRecord> lt_records;  // workload -> recorded cuBLASLt plan and version
  std::string note;                            // one line on where it came from (campaign, score)
  std::string device;  // the device that measured the run ("cuda: NVIDIA H200 (sm_90a)")
};

// The identifier files and functions are named after: the problem name with every character
// that is not a letter, digit or '_' replaced by '_'.
std::string export_name(const problem::Problem& p);

Result<std::vector<ExportedFile>> export_cuda(const KernelExportInput& in);
Result<std::vector<ExportedFile>> export_sol_execbench(const KernelExportInput& in);

// Reads RUN_DIR's log, takes its best candidate and writes the format's files into out_dir
// (created if missing). `format`: "cuda" | "sol-execbench" (CUDA problems) | "cpp" (host
// problems). Returns the paths written.
// The problem is the run's (replay/reconstruct.h): the log's copy when the folder the log names
// is gone or holds other files, which `notice` is told as a note or a warning;
// Status::missing_input when neither is there.
Result<std::vector<std::filesystem::path>> export_run(
    const std::filesystem::path& run_dir, const std::string& format,
    const std::filesystem::path& out_dir,
    const std::function<void(const std::string&)>& notice = {});

}  // namespace arc::replay
