#pragma once
// arc-replay plot: best-so-far speedup against candidate index as an SVG.
//   one run:    a line per agent (its own best KEEP so far) and the campaign's best, with
//               markers at KEEPs (circles) and plateaus (triangles);
//   many runs:  the campaign best of each run (thin), their median and interquartile band.
#include <string>
#include <vector>

#include "replay/analyze.h"

namespace arc::replay {

std::string plot_svg(const std::vector<RunAnalysis>& runs, const std::string& title);

}  // namespace arc::replay
