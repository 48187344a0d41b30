#include "spec/json_syntax.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.h"

namespace kvplan {
namespace {

constexpr int kMaxDepth = 64;

// Past JSON's whitespace (space, tab, LF, CR) from `i`.
size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  size_t Value(size_t i, int depth) {
    if (i >= s_.size()) Throw(i, "expected a value, found the end");
    const char c = s_[i];
    if (c == '{') return Container(i, depth, '}');
    if (c == '[') return Container(i, depth, ']');
    if (c == '"') return String(i);
    if (c == '-' || (c >= '0' && c <= '9')) return Number(i);
    for (std::string_view word : {"true", "false", "null"}) {
      if (s_.substr(i, word.size()) == word) {
        const size_t end = i + word.size();
        if (end < s_.size() && IsWordChar(s_[end])) break;
        return end;
      }
    }
    Throw(i, fmt::format("expected a value, found {}", Shown(i)));
  }

 private:
  static bool IsWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  [[noreturn]] static void Throw(size_t at, std::string what) {
    throw JsonSyntaxError{at, std::move(what)};
  }
  std::string Shown(size_t i) const {
    if (i >= s_.size()) return "the end";
    const unsigned char c = static_cast<unsigned char>(s_[i]);
    if (c < 0x20 || c >= 0x7f) return fmt::format("byte 0x{:02x}", c);
    return fmt::format("'{}'", s_[i]);
  }
  size_t Ws(size_t i) const { return SkipWs(s_, i); }

  // `depth`: containers around this one (0 at the top).
  size_t Container(size_t i, int depth, char close) {
    if (depth >= kMaxDepth) Throw(i, fmt::format("nested more than {} deep", kMaxDepth));
    const bool object = close == '}';
    i = Ws(i + 1);
    if (i < s_.size() && s_[i] == close) return i + 1;
    while (true) {
      if (object) {
        if (i >= s_.size() || s_[i] != '"') {
          Throw(i, fmt::format("expected a \"quoted\" key, found {}", Shown(i)));
        }
        i = Ws(String(i));
        if (i >= s_.size() || s_[i] != ':')
          Throw(i, fmt::format("expected ':', found {}", Shown(i)));
        i = Ws(i + 1);
      }
      i = Ws(Value(i, depth + 1));
      if (i < s_.size() && s_[i] == ',') {
        const size_t comma = i;
        i = Ws(i + 1);
        if (i < s_.size() && s_[i] == close) {
          Throw(comma, fmt::format("a trailing ',' before '{}'", close));
        }
        continue;
      }
      if (i < s_.size() && s_[i] == close) return i + 1;
      Throw(i, fmt::format("expected ',' or '{}', found {}", close, Shown(i)));
    }
  }

  size_t String(size_t i) {
    const size_t open = i++;
    while (true) {
      if (i >= s_.size()) Throw(open, "unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[i]);
      if (c == '"') return i + 1;
      if (c < 0x20) Throw(i, fmt::format("control character 0x{:02x} inside a string", c));
      if (c != '\\') {
        ++i;
        continue;
      }
      if (i + 1 >= s_.size()) Throw(open, "unterminated string");
      const char e = s_[i + 1];
      if (e == 'u') {
        for (size_t k = 2; k < 6; ++k) {
          const char h = i + k < s_.size() ? s_[i + k] : '\0';
          if (!IsDigit(h) && !((h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) {
            Throw(i, "invalid \\u escape: four hex digits expected");
          }
        }
        i += 6;
      } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
        i += 2;
      } else {
        Throw(i, fmt::format("invalid escape '\\{}'", e));
      }
    }
  }

  size_t Number(size_t i) {
    const size_t start = i;
    if (s_[i] == '-') ++i;
    if (i >= s_.size() || !IsDigit(s_[i])) Throw(start, "invalid number: a digit must follow '-'");
    if (s_[i] == '0') {
      ++i;
      if (i < s_.size() && IsDigit(s_[i])) Throw(start, "invalid number: a leading zero");
    } else {
      while (i < s_.size() && IsDigit(s_[i])) ++i;
    }
    if (i < s_.size() && s_[i] == '.') {
      ++i;
      if (i >= s_.size() || !IsDigit(s_[i]))
        Throw(start, "invalid number: a digit must follow '.'");
      while (i < s_.size() && IsDigit(s_[i])) ++i;
    }
    if (i < s_.size() && (s_[i] == 'e' || s_[i] == 'E')) {
      ++i;
      if (i < s_.size() && (s_[i] == '+' || s_[i] == '-')) ++i;
      if (i >= s_.size() || !IsDigit(s_[i])) {
        Throw(start, "invalid number: a digit must follow the exponent");
      }
      while (i < s_.size() && IsDigit(s_[i])) ++i;
    }
    if (i < s_.size() && (IsWordChar(s_[i]) || s_[i] == '.' || s_[i] == '-' || s_[i] == '+')) {
      Throw(start, fmt::format("invalid number (then {})", Shown(i)));
    }
    return i;
  }

  std::string_view s_;
};

}  // namespace

size_t JsonValueEnd(std::string_view text, size_t start) {
  return Scanner(text).Value(start, 0);
}

std::string JsonStringValue(std::string_view text, size_t& i) {
  if (i >= text.size() || text[i] != '"') throw JsonSyntaxError{i, "expected a \"quoted\" string"};
  const size_t end = JsonValueEnd(text, i);  // a valid JSON string
  std::string out;
  for (size_t k = i + 1; k + 1 < end; ++k) {
    if (text[k] != '\\') {
      out += text[k];
      continue;
    }
    const char e = text[++k];
    if (e != 'u') {
      out += e == 'b'   ? '\b'
             : e == 'f' ? '\f'
             : e == 'n' ? '\n'
             : e == 'r' ? '\r'
             : e == 't' ? '\t'
                        : e;
      continue;
    }
    // \uXXXX as UTF-8 (each half of a surrogate pair as its own code point:
    // enough to compare keys, which are ASCII).
    const auto cp =
        static_cast<unsigned>(std::stoul(std::string(text.substr(k + 1, 4)), nullptr, 16));
    k += 4;
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  i = end;
  return out;
}

void CheckJsonSyntax(std::string_view text, const std::string& what) {
  size_t i = 0;
  try {
    i = SkipWs(text, JsonValueEnd(text, SkipWs(text, 0)));
    if (i != text.size()) throw JsonSyntaxError{i, "text after the JSON value"};
  } catch (const JsonSyntaxError& e) {
    // One line: its column; several (a config.json): line and column.
    const size_t at = std::min(e.offset, text.size());
    const size_t nl = text.rfind('\n', at == 0 ? std::string_view::npos : at - 1);
    if (text.find('\n') == std::string_view::npos) {
      Fail("{}: not valid JSON (column {}: {})", what, at + 1, e.what);
    }
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
    const size_t col = nl == std::string_view::npos || at == 0 ? at + 1 : at - nl;
    Fail("{}: not valid JSON (its line {}, column {}: {})", what, line, col, e.what);
  }
}

}  // namespace kvplan
