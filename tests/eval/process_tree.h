#pragma once
// /proc readings the worker-process tests share.
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <sys/types.h>

namespace arc::testing {

// The parent of `pid` (0 when unknown).
inline pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  char state = 0;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

}  // namespace arc::testing
