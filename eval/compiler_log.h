#pragma once
// What of a compiler's output may reach the log (and from there a decision, a trap and the next
// model prompt): only diagnostics about the candidate's own sources. A diagnostic located in any
// other file is replaced by one line saying it was withheld, so that `#include "/some/file"`
// cannot turn the compiler into a reader of files outside the candidate's sources (an error in
// that file would name its first tokens). Pure; no I/O.
//
// A line is kept when it is
//   - located ("PATH:LINE:COL: ..." or "PATH: In function ...") in one of `own`: an exact file,
//     or any file under an entry that ends with '/';
//   - an include chain line ("In file included from PATH:N", "                 from PATH:N"),
//     which names paths only, or "compilation terminated.";
//   - a driver or linker line ("g++: ...", "cc1plus: ...", "collect2: ...", "ld: ...",
//     "/usr/bin/ld: ...");
//   - indented continuation of a kept line.
// Everything else (including indented continuation of a withheld line and quoted source text)
// is withheld.
#include <string>
#include <string_view>
#include <vector>

namespace arc::eval {

inline constexpr std::string_view kWithheldDiagnostic =
    "[a diagnostic located outside the candidate's sources is withheld]";

std::string withhold_foreign_diagnostics(std::string_view log, const std::vector<std::string>& own);

}  // namespace arc::eval
