#pragma once
// arcd export (docs/export.md): a run's best CUDA implementation as files a user can take away.
//   cuda:          NAME.h and NAME.cu. The .cu holds every distinct variant of the best
//                  candidate (each in its own namespace, its kernels renamed arc_vI_KERNEL, its
//                  knobs as #defines) and a host launcher that picks the variant for the
//                  workload's shape (the gated workloads' exact axis values, else the base) and
//                  launches that family's kernels with the grid, block and shared memory of its
//                  launch expressions. A cuBLASLt variant runs the algorithm recorded for each
//                  workload (the plan table: algorithm, tile, stages, split-K, reduction,
//                  swizzle), falling back to the heuristic's rank-HEUR choice for a shape the
//                  table lacks.
//   sol-execbench: solution.json for SOL-ExecBench: language cuda_cpp, entry point
//                  kernel.cu::run, destination-passing style (inputs, then outputs, in problem
//                  order), torch binding; its sources are kernel.cu (the binding), NAME.h and
//                  NAME_impl.cuh (the .cu above).
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "problem/problem.h"

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
  std::map<std::string, std::string> plans;  // workload -> recorded cuBLASLt plan description
  std::string note;                          // one line on where it came from (campaign, score)
};

// The identifier files and functions are named after: the problem name with every character
// that is not a letter, digit or '_' replaced by '_'.
std::string export_name(const problem::Problem& p);

Result<std::vector<ExportedFile>> export_cuda(const KernelExportInput& in);
Result<std::vector<ExportedFile>> export_sol_execbench(const KernelExportInput& in);

// Reads RUN_DIR's log, takes its best candidate and writes the format's files into out_dir
// (created if missing). `format`: "cuda" | "sol-execbench". Returns the paths written.
// The problem is the run's (replay/reconstruct.h): the log's copy when the folder the log names
// is gone or holds other files, which `notice` is told as a note or a warning;
// Status::missing_input when neither is there.
Result<std::vector<std::filesystem::path>> export_run(
    const std::filesystem::path& run_dir, const std::string& format,
    const std::filesystem::path& out_dir,
    const std::function<void(const std::string&)>& notice = {});

}  // namespace arc::replay
