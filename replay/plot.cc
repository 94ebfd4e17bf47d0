#include "replay/plot.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "base/stats.h"

namespace arc::replay {
namespace {

constexpr double kWidth = 900, kHeight = 520;
constexpr double kLeft = 70, kRight = 170, kTop = 50, kBottom = 60;
const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                               "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

struct Frame {
  double x_max = 1, y_min = 1, y_max = 1;
  double x(double i) const { return kLeft + (kWidth - kLeft - kRight) * i / x_max; }
  double y(double v) const {
    return kTop + (kHeight - kTop - kBottom) * (1 - (v - y_min) / (y_max - y_min));
  }
};

// A "nice" tick step for a range.
double tick_step(double range, int want) {
  const double raw = range / want;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

// Best-so-far as a step line from candidate 0 (score 1).
std::string step_path(const Frame& f, const std::vector<std::pair<uint32_t, double>>& curve) {
  std::ostringstream os;
  double last = 1.0;
  os << "M" << f.x(0) << "," << f.y(1.0);
  for (const auto& [i, v] : curve) {
    os << " L" << f.x(i) << "," << f.y(last) << " L" << f.x(i) << "," << f.y(v);
    last = v;
  }
  return os.str();
}

void axes(std::ostringstream& os, const Frame& f, const std::string& title) {
  os << "<text x=\"" << kWidth / 2 << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
     << esc(title) << "</text>\n";
  const double x0 = f.x(0), x1 = f.x(f.x_max), y0 = f.y(f.y_min), y1 = f.y(f.y_max);
  os << "<rect x=\"" << x0 << "\" y=\"" << y1 << "\" width=\"" << x1 - x0 << "\" height=\""
     << y0 - y1 << "\" fill=\"none\" stroke=\"#333\"/>\n";
  const double xs = std::max(1.0, std::round(tick_step(f.x_max, 8)));
  for (double i = 0; i <= f.x_max + 1e-9; i += xs) {
    os << "<line x1=\"" << f.x(i) << "\" y1=\"" << y0 << "\" x2=\"" << f.x(i) << "\" y2=\""
       << y0 + 5 << "\" stroke=\"#333\"/><text x=\"" << f.x(i) << "\" y=\"" << y0 + 20
       << "\" text-anchor=\"middle\" font-size=\"12\">" << i << "</text>\n";
  }
  const double ys = tick_step(f.y_max - f.y_min, 6);
  for (double v = std::ceil(f.y_min / ys) * ys; v <= f.y_max + 1e-9; v += ys) {
    os << "<line x1=\"" << x0 << "\" y1=\"" << f.y(v) << "\" x2=\"" << x1 << "\" y2=\""
       << f.y(v) << "\" stroke=\"#ddd\"/><text x=\"" << x0 - 8 << "\" y=\"" << f.y(v) + 4
       << "\" text-anchor=\"end\" font-size=\"12\">" << v << "x</text>\n";
  }
  os << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << kHeight - 15
     << "\" text-anchor=\"middle\" font-size=\"13\">candidates decided</text>\n"
     << "<text x=\"18\" y=\"" << (y0 + y1) / 2 << "\" text-anchor=\"middle\" font-size=\"13\" "
     << "transform=\"rotate(-90 18 " << (y0 + y1) / 2 << ")\">best speedup over the seed</text>\n";
}

void legend(std::ostringstream& os, int row, const std::string& color, const std::string& label,
            double width) {
  const double x = kWidth - kRight + 15, y = kTop + 10 + 20 * row;
  os << "<line x1=\"" << x << "\" y1=\"" << y << "\" x2=\"" << x + 24 << "\" y2=\"" << y
     << "\" stroke=\"" << color << "\" stroke-width=\"" << width << "\"/><text x=\"" << x + 30
     << "\" y=\"" << y + 4 << "\" font-size=\"12\">" << esc(label) << "</text>\n";
}

// Median line and interquartile band over runs, as steps, in one colour.
void band(std::ostringstream& os, const Frame& f,
          const std::vector<std::vector<std::pair<uint32_t, double>>>& curves,
          const std::string& color) {
  const int n = static_cast<int>(f.x_max);
  std::vector<double> med, q1, q3;
  for (int i = 0; i <= n; ++i) {
    std::vector<double> at;
    for (const auto& c : curves) {
      double v = 1.0;
      for (const auto& [k, s] : c) {
        if (static_cast<int>(k) <= i) v = s;
      }
      at.push_back(v);
    }
    med.push_back(quantile(at, 0.5));
    q1.push_back(quantile(at, 0.25));
    q3.push_back(quantile(at, 0.75));
  }
  std::ostringstream b, m;
  b << "M" << f.x(0) << "," << f.y(q3[0]);
  m << "M" << f.x(0) << "," << f.y(med[0]);
  for (int i = 1; i <= n; ++i) {
    b << " L" << f.x(i) << "," << f.y(q3[i - 1]) << " L" << f.x(i) << "," << f.y(q3[i]);
    m << " L" << f.x(i) << "," << f.y(med[i - 1]) << " L" << f.x(i) << "," << f.y(med[i]);
  }
  for (int i = n; i >= 1; --i) {
    b << " L" << f.x(i) << "," << f.y(q1[i]) << " L" << f.x(i) << "," << f.y(q1[i - 1]);
  }
  b << " L" << f.x(0) << "," << f.y(q1[0]);
  os << "<path d=\"" << b.str() << " Z\" fill=\"" << color << "\" opacity=\"0.2\"/>\n";
  os << "<path d=\"" << m.str() << "\" fill=\"none\" stroke=\"" << color
     << "\" stroke-width=\"2.5\"/>\n";
}

}  // namespace

std::string plot_groups_svg(const std::vector<PlotGroup>& groups, const std::string& title) {
  Frame f;
  for (const auto& g : groups) {
    for (const auto& c : g.curves) {
      for (const auto& [i, v] : c) {
        f.x_max = std::max<double>(f.x_max, i);
        f.y_max = std::max(f.y_max, v);
      }
    }
  }
  f.y_max = 1 + (f.y_max - 1) * 1.08 + 0.05;
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
     << kHeight << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
     << "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  axes(os, f, title);
  int row = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string color = kColors[i % 10];
    band(os, f, groups[i].curves, color);
    legend(os, row++, color, groups[i].name + " (" + std::to_string(groups[i].curves.size()) + ")",
           2.5);
  }
  os << "<text x=\"" << kWidth - kRight + 15 << "\" y=\"" << kTop + 20 * row + 20
     << "\" font-size=\"11\">median, interquartile band</text>\n</svg>\n";
  return os.str();
}

std::string plot_svg(const std::vector<RunAnalysis>& runs, const std::string& title) {
  Frame f;
  for (const auto& r : runs) {
    f.x_max = std::max<double>(f.x_max, r.candidates);
    f.y_max = std::max(f.y_max, r.best_score);
  }
  f.y_max = 1 + (f.y_max - 1) * 1.08 + 0.05;
  f.y_min = 1.0;
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
     << kHeight << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
     << "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  axes(os, f, title);
  int row = 0;
  if (runs.size() == 1) {
    const RunAnalysis& r = runs.front();
    size_t c = 0;
    std::map<std::string, std::string> color;
    for (const auto& [agent, curve] : r.curves) {
      color[agent] = kColors[c++ % 10];
      os << "<path d=\"" << step_path(f, curve) << "\" fill=\"none\" stroke=\"" << color[agent]
         << "\" stroke-width=\"1.8\" opacity=\"0.85\"/>\n";
      legend(os, row++, color[agent], agent, 1.8);
    }
    os << "<path d=\"" << step_path(f, r.campaign_curve)
       << "\" fill=\"none\" stroke=\"black\" stroke-width=\"3\" stroke-dasharray=\"6 3\"/>\n";
    legend(os, row++, "black", "campaign best", 3);
    for (const auto& m : r.markers) {
      const double x = f.x(m.index), y = f.y(m.score);
      if (m.plateau) {
        os << "<path d=\"M" << x << "," << y - 7 << " L" << x - 6 << "," << y + 5 << " L"
           << x + 6 << "," << y + 5 << " Z\" fill=\"white\" stroke=\"" << color[m.agent]
           << "\" stroke-width=\"1.5\"><title>" << esc(m.agent) << " plateau</title></path>\n";
      } else {
        os << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"4\" fill=\"" << color[m.agent]
           << "\"><title>" << esc(m.agent) << " KEEP " << m.score << "x</title></circle>\n";
      }
    }
    os << "<text x=\"" << kWidth - kRight + 15 << "\" y=\"" << kTop + 20 * row + 20
       << "\" font-size=\"11\">&#9679; KEEP   &#9651; plateau</text>\n";
  } else {
    std::vector<std::vector<std::pair<uint32_t, double>>> all;
    for (const auto& r : runs) {
      os << "<path d=\"" << step_path(f, r.campaign_curve)
         << "\" fill=\"none\" stroke=\"#888\" stroke-width=\"0.8\" opacity=\"0.6\"/>\n";
      all.push_back(r.campaign_curve);
    }
    band(os, f, all, "#1f77b4");
    legend(os, row++, "#888", "each run (" + std::to_string(runs.size()) + ")", 1);
    legend(os, row++, "#1f77b4", "median", 3);
    os << "<rect x=\"" << kWidth - kRight + 15 << "\" y=\"" << kTop + 20 * row + 4
       << "\" width=\"24\" height=\"10\" fill=\"#1f77b4\" opacity=\"0.25\"/><text x=\""
       << kWidth - kRight + 45 << "\" y=\"" << kTop + 20 * row + 13
       << "\" font-size=\"12\">interquartile</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

}  // namespace arc::replay
