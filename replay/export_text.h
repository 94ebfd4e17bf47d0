#pragma once
// What the source exports (arcd export --format cuda | sol-execbench | cpp) share: a candidate's
// distinct variants, each variant's source as a block that can sit beside the others in one
// file, and the C dispatcher that picks a variant from the axis values. Pure text; no I/O.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "problem/problem.h"

namespace arc::replay {

// A candidate's distinct variants: the base first (index 0), then each gate's in workload
// order; `variant_of` maps every workload to the index of the variant serving it.
struct ExportVariants {
  std::vector<problem::Variant> variants;
  std::map<std::string, size_t> variant_of;
};
ExportVariants distinct_variants(const problem::Problem& p, const problem::Candidate& c);

// `line` is a preprocessor #include.
bool is_include(const std::string& line);

// Macro names a source #defines.
std::set<std::string> defined_macros(const std::string& src);

// `s` as the inside of a C string literal.
std::string escape_c(const std::string& s);

// One variant's source as a block of a combined file: `defines` (NAME -> VALUE) #defined
// first, every entry of `renames` (name -> new name) #defined to its new name, the source's
// #include lines turned into comments (the caller writes them once at the top: see
// hoisted_includes), the text inside `namespace NS { ... }`, and every macro the block or the
// source defines #undef'd after it, so that two variants of one family coexist.
std::string variant_block(const std::string& ns, const std::string& title,
                          const std::string& source,
                          const std::map<std::string, std::string>& defines,
                          const std::map<std::string, std::string>& renames);

// The #include lines of `source`, except those naming any of `skip` (e.g. an ABI header the
// export inlines).
std::set<std::string> hoisted_includes(const std::string& source,
                                       const std::vector<std::string>& skip);

// `extern "C" int NAME_variant_for(const long long* axes)`: a gated workload's exact axis values
// (in the problem's axis order) select its variant, any other shape the base (0).
std::string variant_for_function(const problem::Problem& p, const ExportVariants& v,
                                 const std::string& name);

}  // namespace arc::replay
