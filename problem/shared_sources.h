#pragma once
// A source with the problem's shared sources (problem.toml's include_dirs) written into it, for
// files that must stand alone (arcd export, a run's best/ folder). Pure text; no I/O.
#include <map>
#include <string>
#include <string_view>

namespace arc::problem {

// Replaces every `#include "NAME"` or `#include <NAME>` line whose NAME is a shared source
// (include name -> text) by that source's text, recursively; a NAME included from a shared
// source in a subfolder is looked up beside it first. Each shared source is written at most
// once per call (as #pragma once would have it) and its `#pragma once` lines are dropped.
// Every other line, system includes included, is kept as written.
std::string inline_shared_sources(std::string_view source,
                                  const std::map<std::string, std::string>& headers);

}  // namespace arc::problem
