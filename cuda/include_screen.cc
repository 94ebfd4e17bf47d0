#include "cuda/include_screen.h"

#include <cctype>

namespace arc::cuda {
namespace {

// One logical character: its byte and the original line it came from.
struct Spliced {
  std::string text;
  std::vector<int> line_of;  // per byte of text
};

// Splices lines, replaces comments by one space (keeping newlines of block comments), and
// leaves string and character literals as they are.
Spliced preprocess(std::string_view s) {
  Spliced out;
  int line = 1;
  std::string joined;
  std::vector<int> joined_line;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
      ++i;
      ++line;
      continue;
    }
    if (s[i] == '\\' && i + 2 < s.size() && s[i + 1] == '\r' && s[i + 2] == '\n') {
      i += 2;
      ++line;
      continue;
    }
    joined.push_back(s[i]);
    joined_line.push_back(line);
    if (s[i] == '\n') ++line;
  }
  char quote = 0;
  for (size_t i = 0; i < joined.size(); ++i) {
    const char c = joined[i];
    if (quote != 0) {
      out.text.push_back(c);
      out.line_of.push_back(joined_line[i]);
      if (c == '\\' && i + 1 < joined.size()) {
        out.text.push_back(joined[++i]);
        out.line_of.push_back(joined_line[i]);
      } else if (c == quote || c == '\n') {
        quote = 0;
      }
      continue;
    }
    if (c == '/' && i + 1 < joined.size() && joined[i + 1] == '/') {
      while (i < joined.size() && joined[i] != '\n') ++i;
      if (i < joined.size()) {
        out.text.push_back('\n');
        out.line_of.push_back(joined_line[i]);
      }
      continue;
    }
    if (c == '/' && i + 1 < joined.size() && joined[i + 1] == '*') {
      const int at = joined_line[i];
      i += 2;
      while (i + 1 < joined.size() && !(joined[i] == '*' && joined[i + 1] == '/')) {
        if (joined[i] == '\n') {
          out.text.push_back('\n');
          out.line_of.push_back(joined_line[i]);
        }
        ++i;
      }
      ++i;  // the '/'
      out.text.push_back(' ');
      out.line_of.push_back(at);
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    out.text.push_back(c);
    out.line_of.push_back(joined_line[i]);
  }
  return out;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::vector<IncludeDirective> include_directives(std::string_view source) {
  const Spliced p = preprocess(source);
  const std::string& t = p.text;
  std::vector<IncludeDirective> out;
  size_t pos = 0;
  while (pos < t.size()) {
    size_t end = t.find('\n', pos);
    if (end == std::string::npos) end = t.size();
    size_t i = pos;
    while (i < end && space(t[i])) ++i;
    if (i < end && t[i] == '#') {
      const int line = p.line_of[i];
      ++i;
      while (i < end && space(t[i])) ++i;
      size_t word_end = i;
      while (word_end < end &&
             (std::isalnum(static_cast<unsigned char>(t[word_end])) != 0 || t[word_end] == '_')) {
        ++word_end;
      }
      const std::string word = t.substr(i, word_end - i);
      if (word == "include" || word == "include_next" || word == "import" || word == "embed") {
        i = word_end;
        while (i < end && space(t[i])) ++i;
        IncludeDirective d;
        d.line = line;
        const char open = i < end ? t[i] : '\0';
        const char close = open == '"' ? '"' : open == '<' ? '>' : '\0';
        if (close != '\0') {
          size_t stop = t.find(close, i + 1);
          if (stop != std::string::npos && stop < end) {
            d.target = t.substr(i + 1, stop - i - 1);
            d.literal = true;
          }
        }
        out.push_back(d);
      }
    }
    pos = end + 1;
  }
  return out;
}

}  // namespace arc::cuda
