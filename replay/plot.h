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

// Groups of runs (e.g. an ablation's configurations, each over seeds): per group the median
// and interquartile band of the campaign best so far, in its own colour.
struct PlotGroup {
  std::string name;
  std::vector<std::vector<std::pair<uint32_t, double>>> curves;  // one per run
};
std::string plot_groups_svg(const std::vector<PlotGroup>& groups, const std::string& title);

}  // namespace arc::replay
