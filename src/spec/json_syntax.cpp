#include "spec/json_syntax.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "util/error.h"

namespace kvplan {
namespace {

using Expected = JsonSyntaxError::Expected;
using ojson = nlohmann::ordered_json;

bool IsWs(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsNumberChar(char c) {
  return IsDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}
// What a number or a literal (true, nullx, 0x10) is made of.
bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsNumberChar(c) || c == '_';
}

// How far nlohmann's lexer has read, for the offsets of the values it
// reports: it reads through an iterator that counts its steps and notes
// when it has met the end of the text.
struct Cursor {
  const char* base = nullptr;
  size_t pos = 0;    // bytes read
  bool eof = false;  // the lexer asked past the last byte
};

class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, Cursor* c) : p_(p), c_(c) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    ++p_;
    c_->pos = static_cast<size_t>(p_ - c_->base);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const CountingIterator& a, const CountingIterator& b) {
    const bool same = a.p_ == b.p_;
    if (same) a.c_->eof = true;  // only the lexer compares, and only with the end
    return same;
  }

 private:
  const char* p_;
  Cursor* c_;
};

// The Python constants, as a string of the same length in the text that
// nlohmann reads (so every offset stays), and their values.
struct PythonConstant {
  std::string_view word;
  std::string_view stand_in;
  double value;
};
constexpr PythonConstant kPythonConstants[] = {
    {"NaN", "\"N\"", std::numeric_limits<double>::quiet_NaN()},
    {"Infinity", "\"Infini\"", std::numeric_limits<double>::infinity()},
    {"-Infinity", "\"-Infini\"", -std::numeric_limits<double>::infinity()},
};

class Handler : public nlohmann::json_sax<ojson> {
 public:
  Handler(std::string_view text, const Cursor& cursor, JsonVisitor& visitor,
          const JsonOptions& options, const std::map<size_t, double>& constants)
      : s_(text), cur_(cursor), visitor_(visitor), options_(options), constants_(constants) {}

  bool null() override { return Literal(nullptr, 4); }
  bool boolean(bool v) override { return Literal(v, v ? 4 : 5); }
  bool number_integer(number_integer_t v) override { return Number(v); }
  bool number_unsigned(number_unsigned_t v) override { return Number(v); }
  bool number_float(number_float_t v, const string_t&) override { return Number(v); }
  bool string(string_t& v) override {
    const size_t end = cur_.pos;
    const size_t begin = OpeningQuote(end - 1);
    if (auto c = constants_.find(begin); c != constants_.end()) {
      Done(Last::kNumber, begin, end);
      visitor_.Scalar(c->second, begin, end, Depth());
      return true;
    }
    Done(Last::kString, begin, end);
    visitor_.Scalar(std::move(v), begin, end, Depth());
    return true;
  }
  bool binary(binary_t&) override { return true; }  // not in JSON text
  bool start_object(std::size_t) override { return Open(true); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    const size_t end = cur_.pos;
    const size_t begin = OpeningQuote(end - 1);
    if (options_.unique_keys && !stack_.back().keys.insert(k).second) {
      JsonSyntaxError e;
      e.offset = e.token = begin;
      e.what = "duplicate key";
      e.duplicate_key = k;
      e.depth = Depth();
      throw e;
    }
    Done(Last::kKey, begin, end);
    visitor_.Key(k, begin, end, Depth());
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    throw Translate(position, ex.what());
  }

 private:
  enum class Last { kNone, kKey, kString, kNumber, kLiteral, kOpen, kClose };
  struct Level {
    char close;
    std::set<std::string> keys;
  };

  int Depth() const { return static_cast<int>(stack_.size()); }
  void Done(Last what, size_t begin, size_t end) {
    last_ = what;
    last_begin_ = begin;
    last_end_ = end;
  }
  bool Literal(ojson v, size_t length) {
    const size_t end = cur_.pos;
    Done(Last::kLiteral, end - length, end);
    visitor_.Scalar(std::move(v), end - length, end, Depth());
    return true;
  }
  template <typename T>
  bool Number(T v) {
    // The lexer has read one byte past the number, unless it met the end.
    const size_t end = cur_.eof ? s_.size() : cur_.pos - 1;
    size_t begin = end;
    while (begin > 0 && IsNumberChar(s_[begin - 1])) --begin;
    Done(Last::kNumber, begin, end);
    visitor_.Scalar(v, begin, end, Depth());
    return true;
  }
  bool Open(bool object) {
    const size_t at = cur_.pos - 1;
    if (Depth() >= options_.max_depth + options_.outer_levels) {
      JsonSyntaxError e;
      e.offset = e.token = at;
      e.what = fmt::format("nested more than {} deep", options_.max_depth);
      e.depth = Depth();
      throw e;
    }
    visitor_.Open(object, at, Depth());
    stack_.push_back({object ? '}' : ']', {}});
    Done(Last::kOpen, at, at + 1);
    return true;
  }
  bool Close() {
    stack_.pop_back();
    Done(Last::kClose, cur_.pos - 1, cur_.pos);
    visitor_.Close(cur_.pos, Depth());
    return true;
  }

  // The '"' that opens the string whose last byte before `from`'s closing
  // quote is at or before `from`: the nearest '"' not escaped (preceded by
  // an even number of backslashes), as no unescaped '"' is inside a string.
  size_t OpeningQuote(size_t from) const {
    for (size_t i = std::min(from, s_.size()); i-- > 0;) {
      if (s_[i] != '"') continue;
      size_t slashes = 0;
      while (slashes < i && s_[i - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) return i;
    }
    return 0;
  }
  std::string Shown(size_t i) const {
    if (i >= s_.size()) return "the end";
    const unsigned char c = static_cast<unsigned char>(s_[i]);
    if (c < 0x20 || c >= 0x7f) return fmt::format("byte 0x{:02x}", c);
    return fmt::format("'{}'", s_[i]);
  }

  JsonSyntaxError Translate(size_t position, std::string_view message) const;
  Expected Context(size_t token, size_t& comma) const;

  std::string_view s_;
  const Cursor& cur_;
  JsonVisitor& visitor_;
  const JsonOptions& options_;
  const std::map<size_t, double>& constants_;
  std::vector<Level> stack_;
  Last last_ = Last::kNone;
  size_t last_begin_ = 0, last_end_ = 0;
};

// What the parser wanted at `token`, from the byte before it and the
// containers open. `comma` is set when a ',' directly precedes a close.
Expected Handler::Context(size_t token, size_t& comma) const {
  size_t p = token;
  while (p > 0 && IsWs(s_[p - 1])) --p;
  if (p == 0) return Expected::kValue;
  const char before = s_[p - 1];
  if (before == ':' || before == '[') return Expected::kValue;
  if (before == '{') return Expected::kKey;
  if (before == ',') {
    if (!stack_.empty() && token < s_.size() && s_[token] == stack_.back().close) {
      comma = p - 1;
      return Expected::kCommaOrClose;
    }
    return !stack_.empty() && stack_.back().close == '}' ? Expected::kKey : Expected::kValue;
  }
  if (last_ == Last::kKey && last_end_ == p) return Expected::kColon;
  return stack_.empty() ? Expected::kEnd : Expected::kCommaOrClose;
}

JsonSyntaxError Handler::Translate(size_t position, std::string_view message) const {
  const size_t n = s_.size();
  const size_t e = std::min(position == 0 ? 0 : position - 1, n);  // the byte read last
  auto has = [&](std::string_view part) { return message.find(part) != std::string_view::npos; };
  JsonSyntaxError err;
  err.depth = Depth();
  err.close = stack_.empty() ? 0 : stack_.back().close;
  std::string token_why;  // the token's own fault, where the parser wanted a value or a key
  size_t at = 0;          // where that fault is
  const bool in_string = has("invalid string:");
  const bool bad_number = has("invalid number;");
  if (in_string) {
    err.token = OpeningQuote(e >= n ? n : e);
    if (has("control character")) {
      at = e;
      token_why = fmt::format("control character 0x{:02x} inside a string",
                              static_cast<unsigned char>(s_[e]));
    } else if (has("missing closing quote") || e >= n) {
      err.token = OpeningQuote(n);
      at = err.token;
      token_why = "unterminated string";
    } else if (has("forbidden character after backslash")) {
      at = e - 1;
      token_why = fmt::format("invalid escape '\\{}'", s_[e]);
    } else if (has("4 hex digits")) {
      at = s_.rfind("\\u", e);
      token_why = "invalid \\u escape: four hex digits expected";
    } else if (has("surrogate")) {
      at = s_.rfind("\\u", e);
      token_why = "invalid \\u escape: half of a surrogate pair";
    } else {  // ill-formed UTF-8
      at = e;
      token_why = fmt::format("byte 0x{:02x} inside a string is not UTF-8",
                              static_cast<unsigned char>(s_[e]));
    }
  } else {
    // A number or a word: back to where the run of its bytes starts. A
    // parser error names the whole token just read, which ends at `e`.
    size_t start = e;
    bool word = has("invalid literal") || bad_number;
    if (!word && e < n && s_[e] == '"') start = OpeningQuote(e);
    if (!word && e < n && IsWordChar(s_[e])) word = true;
    while (word && start > 0 && IsWordChar(s_[start - 1])) --start;
    err.token = start;
    at = start;
    // Glued to the number or word before it ("04096", "0x10", "nullx"):
    // that one is the bad value.
    if ((last_ == Last::kNumber || last_ == Last::kLiteral) && last_begin_ == start &&
        last_end_ < n && IsWordChar(s_[last_end_])) {
      err.offset = start;
      err.expected = Expected::kToken;
      err.found = Shown(start);
      if (last_ == Last::kLiteral) {
        err.expected = Expected::kValue;
        err.what = fmt::format("expected a value, found {}", err.found);
      } else if (IsDigit(s_[last_end_]) && (s_.substr(start, last_end_ - start) == "0" ||
                                            s_.substr(start, last_end_ - start) == "-0")) {
        err.what = "invalid number: a leading zero";
      } else {
        err.what = fmt::format("invalid number (then {})", Shown(last_end_));
      }
      return err;
    }
    if (bad_number) {
      token_why = has("after '-'")   ? "invalid number: a digit must follow '-'"
                  : has("after '.'") ? "invalid number: a digit must follow '.'"
                                     : "invalid number: a digit must follow the exponent";
    }
  }
  err.found = Shown(err.token);
  size_t comma = std::string_view::npos;
  err.expected = Context(err.token, comma);
  if (comma != std::string_view::npos) {
    err.offset = comma;
    err.what = fmt::format("a trailing ',' before '{}'", s_[err.token]);
    return err;
  }
  if (!token_why.empty() &&
      (err.expected == Expected::kValue || (in_string && err.expected == Expected::kKey))) {
    err.offset = at;
    err.what = token_why;
    err.expected = Expected::kToken;
    return err;
  }
  err.offset = err.token;
  switch (err.expected) {
    case Expected::kValue:
      err.what = fmt::format("expected a value, found {}", err.found);
      break;
    case Expected::kKey:
      err.what = fmt::format("expected a \"quoted\" key, found {}", err.found);
      break;
    case Expected::kColon:
      err.what = fmt::format("expected ':', found {}", err.found);
      break;
    case Expected::kCommaOrClose:
      err.what = fmt::format("expected ',' or '{}', found {}", stack_.back().close, err.found);
      break;
    default:
      err.what = "text after the JSON value";
  }
  return err;
}

// One parse; at a Python constant where a value belongs, returns its offset
// (to be stood in for and parsed again) instead of throwing.
std::optional<size_t> VisitOnce(std::string_view original, std::string_view text,
                                JsonVisitor& visitor, const JsonOptions& options,
                                const std::map<size_t, double>& constants) {
  // A byte-order mark is no JSON whitespace (nlohmann would skip it).
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    JsonSyntaxError e;
    e.expected = Expected::kValue;
    e.found = "byte 0xef";
    e.what = "expected a value, found byte 0xef";
    throw e;
  }
  Cursor cursor{text.data(), 0, false};
  Handler handler(text, cursor, visitor, options, constants);
  try {
    ojson::sax_parse(CountingIterator(text.data(), &cursor),
                     CountingIterator(text.data() + text.size(), &cursor), &handler);
  } catch (const JsonSyntaxError& e) {
    if (!options.python_constants ||
        (e.expected != Expected::kToken && e.expected != Expected::kValue)) {
      throw;
    }
    for (const PythonConstant& c : kPythonConstants) {
      const size_t end = e.token + c.word.size();
      if (original.substr(e.token, c.word.size()) == c.word &&
          (end >= original.size() || !IsWordChar(original[end])) && !constants.count(e.token)) {
        return e.token;
      }
    }
    throw;
  }
  return std::nullopt;
}

}  // namespace

void VisitJson(std::string_view text, JsonVisitor& visitor, const JsonOptions& options) {
  std::map<size_t, double> constants;
  std::string stood_in;
  std::string_view parsed = text;
  while (std::optional<size_t> at = VisitOnce(text, parsed, visitor, options, constants)) {
    // Parsed again from the start: the visitor sees the values once more.
    for (const PythonConstant& c : kPythonConstants) {
      if (text.substr(*at, c.word.size()) == c.word) {
        if (stood_in.empty()) stood_in = std::string(text);
        stood_in.replace(*at, c.word.size(), c.stand_in);
        constants[*at] = c.value;
        break;
      }
    }
    parsed = stood_in;
  }
}

std::pair<size_t, size_t> JsonLineColumn(std::string_view text, size_t offset) {
  const size_t at = std::min(offset, text.size());
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
  const size_t nl = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  return {line, nl == std::string_view::npos ? at + 1 : at - nl};
}

void CheckJsonSyntax(std::string_view text, const std::string& what) {
  class Ignore : public JsonVisitor {
    void Key(const std::string&, size_t, size_t, int) override {}
    void Scalar(nlohmann::ordered_json, size_t, size_t, int) override {}
    void Open(bool, size_t, int) override {}
    void Close(size_t, int) override {}
  } ignore;
  try {
    VisitJson(text, ignore);
  } catch (const JsonSyntaxError& e) {
    // One line: its column; several (a config.json): line and column.
    const auto [line, col] = JsonLineColumn(text, e.offset);
    if (text.find('\n') == std::string_view::npos) {
      Fail("{}: not valid JSON (column {}: {})", what, col, e.what);
    }
    Fail("{}: not valid JSON (its line {}, column {}: {})", what, line, col, e.what);
  }
}

}  // namespace kvplan
