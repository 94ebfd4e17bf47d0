#pragma once
// A fresh folder under /tmp for one test, removed with everything in it at the end.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace arc::storage::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/arc-storage-test-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace arc::storage::testing
