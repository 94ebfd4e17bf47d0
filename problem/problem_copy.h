#pragma once
// A problem's files written somewhere else than its folder: the copy a run's log keeps
// (actors/run_inputs.h) and the copy a remote worker receives (eval/remote_worker.h) are both
// written here, so that the problem loads from the copy exactly as from its folder (same
// relative paths, shared includes "../common/x.h" included, hence the same hash).
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"

namespace arc::problem {

// How far above its folder a problem file may reach ("../../common/x.h"); the loader bounds it
// no tighter, but a copy reaching further is not one a problem needs.
inline constexpr int kMaxProblemLevelsUp = 16;

// Leading ".." components of a relative path whose other components are plain names; -1 when
// the path is absolute, empty, or holds ".", ".." (after a name) or an empty component.
int levels_up(const std::string& path);

// Writes `files` (path relative to the problem folder, as problem::Problem::files names them ->
// bytes) under `root` so that every path, leading ".." included, resolves inside `root`: the
// problem folder is root/problem/<the last max(1, levels up) names of `problem_dir`> (folders
// above it named "upN" where `problem_dir` has too few), so messages about the copy read like
// those about the original. Returns the problem folder. Fails, naming the path, when a path is
// not one levels_up() accepts or reaches more than kMaxProblemLevelsUp folders up, or when a
// file cannot be written.
Result<std::filesystem::path> write_problem_files(const std::filesystem::path& root,
                                                  const std::string& problem_dir,
                                                  const std::map<std::string, std::string>& files);

// Writes `bytes` to `path`, creating its folders; fails naming the folder or the file.
Status write_file_bytes(const std::filesystem::path& path, const std::string& bytes);

// A new private folder (mode 0700) under the system's temporary folder, named
// `prefix`-XXXXXX; removed with everything in it when the last pointer to it goes.
Result<std::shared_ptr<const std::filesystem::path>> make_private_folder(
    const std::string& prefix = "kernelarc-inputs");

}  // namespace arc::problem
