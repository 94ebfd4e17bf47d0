// Writing a problem's files under another root (problem/problem_copy.h).
#include "problem/problem_copy.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include <stdlib.h>

namespace arc::problem {

namespace fs = std::filesystem;

Status write_file_bytes(const fs::path& path, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    return Status::io_error("cannot create " + path.parent_path().string() + ": " + ec.message());
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  out.close();
  if (!out) return Status::io_error("cannot write " + path.string());
  return Status::ok();
}

int levels_up(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return -1;
  int up = 0;
  bool named = false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || (part == ".." && named)) return -1;
    if (part == "..") {
      ++up;
    } else {
      named = true;
    }
    start = end + 1;
  }
  return named ? up : -1;
}

Result<fs::path> write_problem_files(const fs::path& root, const std::string& problem_dir,
                                     const std::map<std::string, std::string>& files) {
  int up = 0;
  for (const auto& [path, _] : files) {
    const int n = levels_up(path);
    if (n < 0 || n > kMaxProblemLevelsUp) {
      return Status::invalid_argument(
          "problem file \"" + path + "\": expected a path relative to the problem folder (plain " +
          "names, at most " + std::to_string(kMaxProblemLevelsUp) + " leading \"..\")");
    }
    up = std::max(up, n);
  }
  std::vector<std::string> names;
  for (const auto& part : fs::path(problem_dir).lexically_normal()) {
    const std::string s = part.string();
    if (!s.empty() && s != "/" && s != "." && s != "..") names.push_back(s);
  }
  const size_t keep = static_cast<size_t>(std::max(up, 1));
  while (names.size() < keep) names.insert(names.begin(), "up" + std::to_string(names.size()));
  fs::path dir = root / "problem";
  for (size_t i = names.size() - keep; i < names.size(); ++i) dir /= names[i];
  for (const auto& [path, bytes] : files) {
    if (auto s = write_file_bytes((dir / path).lexically_normal(), bytes); !s) return s;
  }
  return dir;
}

Result<std::shared_ptr<const fs::path>> make_private_folder(const std::string& prefix) {
  std::error_code ec;
  std::string tmpl = (fs::temp_directory_path(ec) / (prefix + "-XXXXXX")).string();
  if (ec) return Status::io_error("no temporary folder: " + ec.message());
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status::io_error("cannot create a temporary folder like " + tmpl);
  }
  return std::shared_ptr<const fs::path>(new fs::path(tmpl), [](const fs::path* p) {
    std::error_code ignored;
    fs::remove_all(*p, ignored);
    delete p;
  });
}

}  // namespace arc::problem
