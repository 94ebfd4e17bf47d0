#include "replay/export_text.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace arc::replay {

ExportVariants distinct_variants(const problem::Problem& p, const problem::Candidate& c) {
  ExportVariants out;
  out.variants.push_back(c.base);
  for (const auto& w : p.workloads) {
    const problem::Variant& v = c.variant_for(w.name);
    auto it = std::find(out.variants.begin(), out.variants.end(), v);
    if (it == out.variants.end()) {
      out.variants.push_back(v);
      it = out.variants.end() - 1;
    }
    out.variant_of[w.name] = static_cast<size_t>(it - out.variants.begin());
  }
  return out;
}

bool is_include(const std::string& line) {
  static const std::regex kInclude(R"(^\s*#\s*include\b)");
  return std::regex_search(line, kInclude);
}

std::set<std::string> defined_macros(const std::string& src) {
  static const std::regex kDefine(R"(^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*))");
  std::set<std::string> out;
  std::istringstream in(src);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kDefine)) out.insert(m[1]);
  }
  return out;
}

std::string escape_c(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string variant_block(const std::string& ns, const std::string& title,
                          const std::string& source,
                          const std::map<std::string, std::string>& defines,
                          const std::map<std::string, std::string>& renames) {
  std::ostringstream out;
  out << "// ---- " << title << " ----\n";
  std::set<std::string> undef = defined_macros(source);
  for (const auto& [k, val] : defines) {
    out << "#define " << k << " " << val << "\n";
    undef.insert(k);
  }
  for (const auto& [from, to] : renames) {
    out << "#define " << from << " " << to << "\n";
    undef.insert(from);
  }
  out << "namespace " << ns << " {\n";
  std::istringstream ss(source);
  std::string line;
  while (std::getline(ss, line)) {
    if (is_include(line)) {
      out << "// (hoisted) " << line << "\n";
    } else {
      out << line << "\n";
    }
  }
  out << "}  // namespace " << ns << "\n";
  for (const auto& m : undef) out << "#undef " << m << "\n";
  out << "\n";
  return out.str();
}

std::set<std::string> hoisted_includes(const std::string& source,
                                       const std::vector<std::string>& skip) {
  std::set<std::string> out;
  std::istringstream ss(source);
  std::string line;
  while (std::getline(ss, line)) {
    if (!is_include(line)) continue;
    const bool skipped = std::any_of(skip.begin(), skip.end(), [&line](const std::string& s) {
      return line.find(s) != std::string::npos;
    });
    if (!skipped) out.insert(line);
  }
  return out;
}

std::string variant_for_function(const problem::Problem& p, const ExportVariants& v,
                                 const std::string& name) {
  std::ostringstream out;
  out << "extern \"C\" int " << name << "_variant_for([[maybe_unused]] const long long* axes) {\n";
  for (const auto& w : p.workloads) {
    const size_t vi = v.variant_of.at(w.name);
    if (vi == 0) continue;
    out << "  if (";
    for (size_t a = 0; a < p.axes.size(); ++a) {
      out << (a ? " && " : "") << "axes[" << a << "] == " << w.axes.at(p.axes[a]) << "LL";
    }
    out << ") return " << vi << ";  // " << w.name << "\n";
  }
  out << "  return 0;\n}\n\n";
  return out.str();
}

}  // namespace arc::replay
