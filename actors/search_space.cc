#include "actors/search_space.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

namespace arc::actors {
namespace {

// A knob's value as a number: the whole text must parse (locale-independent) to a finite one.
std::optional<double> as_number(const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool power_of_two(double v) {
  int exponent = 0;
  return v > 0 && std::frexp(v, &exponent) == 0.5;
}

uint16_t value_index(const problem::Knob& k, const std::string& value) {
  auto it = std::find(k.values.begin(), k.values.end(), value);
  if (it == k.values.end()) it = std::find(k.values.begin(), k.values.end(), k.default_value);
  return it == k.values.end() ? 0 : static_cast<uint16_t>(it - k.values.begin());
}

// How the values of one knob name, over every family in scope, become features: for numbers,
// value -> position on [0, 1]; nullopt when some value is no number (ordinal indices then).
std::optional<std::map<std::string, double>> numeric_scale(const std::vector<std::string>& all) {
  std::map<std::string, double> number;
  for (const auto& text : all) {
    auto v = as_number(text);
    if (!v) return std::nullopt;
    number[text] = *v;
  }
  double smallest_positive = std::numeric_limits<double>::infinity(), largest = 0;
  bool powers = true;
  size_t positive = 0;
  for (const auto& [text, v] : number) {
    if (v > 0) {
      ++positive;
      smallest_positive = std::min(smallest_positive, v);
      largest = std::max(largest, v);
      powers &= power_of_two(v);
    } else if (v < 0) {
      powers = false;
    }
  }
  const bool log_scale = powers && positive >= 2 && largest >= 4 * smallest_positive;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (auto& [text, v] : number) {
    if (log_scale) v = v > 0 ? std::log2(v) : std::log2(smallest_positive) - 1;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  for (auto& [text, v] : number) v = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  return number;
}

}  // namespace

SearchSpace::SearchSpace(const problem::Problem& problem, const skills::Skill& skill) {
  constexpr size_t kMostValues = std::numeric_limits<uint16_t>::max();
  for (const auto& f : problem.families) {
    if (!skill.may_use_family(f.name) || families_.size() >= kMostValues) continue;
    // A configuration holds value indices in 16 bits.
    const bool fits = std::all_of(f.knobs.begin(), f.knobs.end(), [](const problem::Knob& k) {
      return k.values.size() <= kMostValues;
    });
    if (fits) families_.push_back(&f);
  }
  family_columns_ = families_.size() > 1 ? families_.size() : 0;

  // Knob names some family in scope varies, and every value each name takes there.
  std::map<std::string, std::vector<std::string>> names;
  for (const problem::Family* f : families_) {
    for (const auto& k : f->knobs) {
      if (k.values.size() > 1) names[k.name];
    }
  }
  for (const problem::Family* f : families_) {
    for (const auto& k : f->knobs) {
      auto it = names.find(k.name);
      if (it != names.end()) it->second.insert(it->second.end(), k.values.begin(), k.values.end());
    }
  }
  std::map<std::string, size_t> column;
  std::map<std::string, std::optional<std::map<std::string, double>>> scale;
  for (const auto& [name, values] : names) {
    column[name] = family_columns_ + column.size();
    scale[name] = numeric_scale(values);
  }
  columns_ = family_columns_ + names.size();

  for (const problem::Family* f : families_) {
    std::vector<KnobSlot> slots;
    double size = 1;
    for (const auto& k : f->knobs) {
      KnobSlot s;
      s.in_scope = k.values.size() > 1 && skill.may_touch_knob(k.name);
      if (s.in_scope) size *= static_cast<double>(k.values.size());
      auto c = column.find(k.name);
      if (c != column.end()) {
        s.has_column = true;
        s.column = c->second;
        const auto& numeric = scale.at(k.name);
        for (size_t i = 0; i < k.values.size(); ++i) {
          if (numeric) {
            s.values.push_back(numeric->at(k.values[i]));
          } else {
            s.values.push_back(k.values.size() > 1 ? static_cast<double>(i) /
                                                         static_cast<double>(k.values.size() - 1)
                                                   : 0.5);
          }
        }
      }
      slots.push_back(std::move(s));
    }
    slots_.push_back(std::move(slots));
    family_size_.push_back(size);
    size_ += size;
  }
}

std::optional<Config> SearchSpace::config_of(const problem::Variant& v) const {
  if (!v.source.empty()) return std::nullopt;
  for (size_t f = 0; f < families_.size(); ++f) {
    if (families_[f]->name != v.family) continue;
    Config c{static_cast<uint16_t>(f)};
    for (const auto& k : families_[f]->knobs) {
      auto it = v.knobs.find(k.name);
      const std::string& value = it == v.knobs.end() ? k.default_value : it->second;
      auto at = std::find(k.values.begin(), k.values.end(), value);
      if (at == k.values.end()) return std::nullopt;
      c.push_back(static_cast<uint16_t>(at - k.values.begin()));
    }
    return c;
  }
  return std::nullopt;
}

problem::Variant SearchSpace::variant_of(const Config& c) const {
  const problem::Family& f = *families_.at(c.at(0));
  problem::Variant v;
  v.family = f.name;
  for (size_t k = 0; k < f.knobs.size(); ++k) {
    v.knobs[f.knobs[k].name] = f.knobs[k].values.at(c.at(k + 1));
  }
  return v;
}

void SearchSpace::encode(const Config& c, double* row) const {
  std::fill(row, row + family_columns_, 0.0);
  std::fill(row + family_columns_, row + columns_, -1.0);
  if (family_columns_ != 0) row[c[0]] = 1.0;
  const std::vector<KnobSlot>& slots = slots_[c[0]];
  for (size_t k = 0; k < slots.size(); ++k) {
    if (slots[k].has_column) row[slots[k].column] = slots[k].values[c[k + 1]];
  }
}

Config SearchSpace::anchored(uint16_t family, const problem::Variant& anchor) const {
  Config c{family};
  for (const auto& k : families_[family]->knobs) {
    auto it = anchor.knobs.find(k.name);
    c.push_back(value_index(k, it == anchor.knobs.end() ? k.default_value : it->second));
  }
  return c;
}

Config SearchSpace::sample(const problem::Variant& anchor, Xoshiro256& rng) const {
  // The family with probability proportional to its size, then each knob in scope uniformly:
  // every configuration equally likely.
  double r = rng.uniform() * size_;
  size_t f = 0;
  while (f + 1 < families_.size() && r >= family_size_[f]) r -= family_size_[f++];
  Config c = anchored(static_cast<uint16_t>(f), anchor);
  const auto& knobs = families_[f]->knobs;
  for (size_t k = 0; k < knobs.size(); ++k) {
    if (slots_[f][k].in_scope)
      c[k + 1] = static_cast<uint16_t>(rng.next() % knobs[k].values.size());
  }
  return c;
}

std::vector<Config> SearchSpace::neighbours(const Config& c) const {
  std::vector<Config> out;
  const auto& knobs = families_[c[0]]->knobs;
  for (size_t k = 0; k < knobs.size(); ++k) {
    if (!slots_[c[0]][k].in_scope) continue;
    if (c[k + 1] > 0) {
      out.push_back(c);
      --out.back()[k + 1];
    }
    if (c[k + 1] + 1u < knobs[k].values.size()) {
      out.push_back(c);
      ++out.back()[k + 1];
    }
  }
  return out;
}

}  // namespace arc::actors
