#pragma once
// The #include directives of a CUDA source, for the screen that keeps a candidate from making
// NVRTC (which runs inside arcd and reads any file arcd may read) open files outside the
// problem's shared sources and the toolkit's headers. Pure; no I/O.
//
// Lines are spliced at backslash-newline and comments removed first, as the preprocessor does,
// so `#` + backslash-newline + `include`, `# /**/ include` and `#include /**/ "x"` are all
// seen. A directive is `#` followed by include, include_next, import or embed; its operand is
// "name" or <name> (literal), or anything else (a macro to expand: not literal).
#include <string>
#include <string_view>
#include <vector>

namespace arc::cuda {

struct IncludeDirective {
  std::string target;    // the name between the quotes or brackets ("" when not literal)
  bool literal = false;  // a "name" or <name> operand
  int line = 0;          // 1-based line of the directive in the original text
};

std::vector<IncludeDirective> include_directives(std::string_view source);

}  // namespace arc::cuda
