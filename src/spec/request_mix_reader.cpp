#include "spec/request_mix_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "spec/json_syntax.h"
#include "spec/yaml_reader.h"
#include "util/error.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) {
      return false;
    }
  }
  return true;
}

// A count field (tokens unless `unit` says otherwise; "" for a plain
// number such as a seed): digits only. Says why anything else is wrong.
uint64_t ParseCount(std::string_view text, const SourcePos& pos, std::string_view field,
                    std::string_view unit = "tokens") {
  std::string_view t = Trim(text);
  const std::string of = unit.empty() ? std::string() : fmt::format(" of {}", unit);
  auto fail = [&](std::string_view why) {
    Fail("{}{}: {} (expected a whole number{} >= 0)", pos.Prefix(), field, why, of);
  };
  if (t.empty()) fail("empty value");
  if (t.front() == '-') fail(fmt::format("'{}' is negative", t));
  uint64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') {
      bool numeric = t.find_first_not_of("0123456789.eE+") == std::string_view::npos;
      fail(numeric ? fmt::format("'{}' is not an integer", t)
                   : fmt::format("'{}' is not a number", t));
    }
    if (v > RequestMixLimits::kMaxTokens) break;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > RequestMixLimits::kMaxTokens) {
    fail(fmt::format("'{}' is larger than {}{}", t, RequestMixLimits::kMaxTokens,
                     unit.empty() ? std::string() : fmt::format(" {}", unit)));
  }
  return v;
}

void CheckRequest(const Request& r, const SourcePos& pos) {
  if (r.prompt_tokens == 0)
    Fail("{}prompt_tokens: a request needs at least 1 prompt token", pos.Prefix());
}

struct Line {
  std::string_view text;
  int number = 0;
};

// The non-blank lines of a text, one at a time: a mix at the size limit is
// read in one pass without a second copy of its lines.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}

  // The next non-blank line into `line`; false at the end.
  bool Next(Line& line) {
    while (start_ <= text_.size()) {
      size_t end = text_.find('\n', start_);
      if (end == std::string_view::npos) end = text_.size();
      ++number_;
      const std::string_view l = text_.substr(start_, end - start_);
      start_ = end + 1;
      if (!Trim(l).empty()) {
        line = {l, number_};
        return true;
      }
    }
    return false;
  }

  // An upper bound on the requests left (one per line), to size the vector once.
  size_t Remaining() const {
    if (start_ >= text_.size()) return 0;
    return static_cast<size_t>(
               std::count(text_.begin() + static_cast<ptrdiff_t>(start_), text_.end(), '\n')) +
           1;
  }

 private:
  std::string_view text_;
  size_t start_ = 0;
  int number_ = 0;
};

// Splits one CSV record (RFC 4180 quoting, no embedded newlines), with the
// 1-based column where each field starts.
std::vector<std::pair<std::string, int>> SplitCsv(std::string_view line, const SourcePos& pos) {
  std::vector<std::pair<std::string, int>> fields;
  size_t i = 0;
  while (true) {
    std::string field;
    int column = static_cast<int>(i) + 1;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size())
          Fail("{}:{}:{}: unterminated quoted field", pos.file, pos.line, column);
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',' && !Trim(line.substr(i)).empty()) {
        Fail("{}:{}:{}: text after a closing quote", pos.file, pos.line, static_cast<int>(i) + 1);
      }
      while (i < line.size() && line[i] != ',') ++i;
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    fields.emplace_back(std::string(Trim(field)), column);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

RequestMix ParseCsv(Lines& lines, const Line& first, const std::string& file) {
  RequestMix mix;
  mix.source = file;
  SourcePos hpos{file, first.number, 1};
  auto header = SplitCsv(first.text, hpos);
  int prompt_col = -1, output_col = -1;
  for (size_t c = 0; c < header.size(); ++c) {
    const std::string& name = header[c].first;
    SourcePos pos{file, hpos.line, header[c].second};
    int* slot = name == "prompt_tokens"   ? &prompt_col
                : name == "output_tokens" ? &output_col
                                          : nullptr;
    if (slot == nullptr) continue;  // other columns (ids, timestamps) are allowed and ignored
    if (*slot >= 0) Fail("{}column '{}' appears twice in the header", pos.Prefix(), name);
    *slot = static_cast<int>(c);
  }
  for (auto [col, name] : {std::pair{prompt_col, "prompt_tokens"}, {output_col, "output_tokens"}}) {
    if (col < 0) {
      Fail(
          "{}:{}: header has no '{}' column (expected a header line 'prompt_tokens,output_tokens')",
          file, hpos.line, name);
    }
  }
  mix.requests.reserve(lines.Remaining());
  for (Line line; lines.Next(line);) {
    SourcePos lpos{file, line.number, 1};
    auto fields = SplitCsv(line.text, lpos);
    if (fields.size() != header.size()) {
      Fail("{}:{}: {} fields, but the header has {}", file, line.number, fields.size(),
           header.size());
    }
    Request r;
    r.line = line.number;
    auto& p = fields[static_cast<size_t>(prompt_col)];
    auto& o = fields[static_cast<size_t>(output_col)];
    r.prompt_tokens = ParseCount(p.first, {file, r.line, p.second}, "prompt_tokens");
    r.output_tokens = ParseCount(o.first, {file, r.line, o.second}, "output_tokens");
    CheckRequest(r, {file, r.line, p.second});  // points at the prompt_tokens field
    mix.requests.push_back(r);
  }
  if (mix.requests.empty()) Fail("{}: no requests after the header line", file);
  return mix;
}

// One JSON object per line, read strictly through nlohmann: the two count
// keys must be integers; other keys may hold any JSON value (nested up to 64
// deep inside the object). Errors come in the order they stand in the line:
// a count that is no whole number is named before a later syntax error.
class JsonLine : public JsonVisitor {
 public:
  JsonLine(std::string_view text, std::string file, int line)
      : s_(text), file_(std::move(file)), line_(line) {}

  Request Parse() {
    r_.line = line_;
    size_t start = 0;
    while (start < s_.size() && IsLineWs(s_[start])) ++start;
    if (start >= s_.size() || s_[start] != '{') {
      Fail("{}malformed JSON: expected '{{', found {}", At(start), FoundAt(start));
    }
    JsonOptions options;
    options.outer_levels = 1;  // the line's object; 64 levels inside it
    try {
      VisitJson(s_, *this, options);
    } catch (const JsonSyntaxError& e) {
      FailSyntax(e);
    }
    if (!have_prompt_) Fail("{}:{}: missing key \"prompt_tokens\"", file_, line_);
    if (!have_output_) Fail("{}:{}: missing key \"output_tokens\"", file_, line_);
    CheckRequest(r_, {file_, line_, 0});
    return r_;
  }

  void Key(const std::string& key, size_t begin, size_t end, int depth) override {
    if (depth != 1) return;
    pending_ = nullptr;
    if (key != "prompt_tokens" && key != "output_tokens") return;
    bool& have = key == "prompt_tokens" ? have_prompt_ : have_output_;
    if (have) Fail("{}{}: duplicate key", At(begin), key);
    have = true;
    key_ = key;
    key_end_ = end;
    pending_ = key == "prompt_tokens" ? &r_.prompt_tokens : &r_.output_tokens;
  }
  void Scalar(nlohmann::ordered_json value, size_t begin, size_t, int depth) override {
    if (depth != 1 || pending_ == nullptr) return;
    if (value.is_string()) Fail("{}{}: a string, not a number of tokens", At(begin), key_);
    *pending_ = ParseCount(Written(begin), Pos(begin), key_);
    pending_ = nullptr;
  }
  void Open(bool, size_t begin, int depth) override {
    if (depth == 1 && pending_ != nullptr) container_ = begin;
  }
  void Close(size_t end, int depth) override {
    // A list or an object as a count: valid JSON, and no number.
    if (depth == 1 && pending_ != nullptr) {
      ParseCount(s_.substr(container_, end - container_), Pos(container_), key_);
    }
  }

 private:
  static bool IsLineWs(char c) { return c == ' ' || c == '\t' || c == '\r'; }
  SourcePos Pos(size_t i) const { return {file_, line_, static_cast<int>(i) + 1}; }
  std::string At(size_t i) const { return Pos(i).Prefix(); }
  std::string FoundAt(size_t i) const {
    return i < s_.size() ? fmt::format("'{}'", s_[i]) : std::string("end of line");
  }
  // A count as written (NaN, -1, 1.5, 2.5e2), for ParseCount's messages.
  std::string_view Written(size_t begin) const {
    size_t end = begin;
    while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) ||
                               s_[end] == '-' || s_[end] == '+' || s_[end] == '.')) {
      ++end;
    }
    return s_.substr(begin, end - begin);
  }

  [[noreturn]] void FailSyntax(const JsonSyntaxError& e) const {
    using E = JsonSyntaxError::Expected;
    // A count key's value that is not JSON (NaN, +5): its own words first.
    if (pending_ != nullptr) {
      size_t v = key_end_;
      while (v < s_.size() && IsLineWs(s_[v])) ++v;
      if (v < s_.size() && s_[v] == ':') {
        ++v;
        while (v < s_.size() && IsLineWs(s_[v])) ++v;
        if (e.token >= v) {
          if (v < s_.size() && s_[v] == '"') {
            Fail("{}{}: a string, not a number of tokens", At(v), key_);
          }
          if (!Written(v).empty()) ParseCount(Written(v), Pos(v), key_);
        }
      }
    }
    if (e.depth == 0 && e.expected == E::kEnd) Fail("{}text after the JSON object", At(e.token));
    if (e.depth == 1 && e.expected != E::kToken && e.expected != E::kValue) {
      // The object's own punctuation, named as the one character wanted.
      const std::string found = FoundAt(e.token);
      if (e.expected == E::kColon)
        Fail("{}malformed JSON: expected ':', found {}", At(e.token), found);
      if (e.expected == E::kKey || e.offset != e.token) {  // a key after '{' or ','
        Fail("{}malformed JSON: expected '\"', found {}", At(e.token), found);
      }
      Fail("{}malformed JSON: expected '}}', found {}", At(e.token), found);
    }
    Fail("{}malformed JSON: {}", At(e.offset), e.what);
  }

  std::string_view s_;
  std::string file_;
  int line_;
  Request r_;
  bool have_prompt_ = false, have_output_ = false;
  uint64_t* pending_ = nullptr;  // the count whose value comes next
  std::string key_;
  size_t key_end_ = 0;
  size_t container_ = 0;
};

RequestMix ParseJsonl(Lines& lines, const Line& first, const std::string& file) {
  RequestMix mix;
  mix.source = file;
  mix.requests.reserve(lines.Remaining() + 1);
  mix.requests.push_back(JsonLine(first.text, file, first.number).Parse());
  for (Line l; lines.Next(l);) mix.requests.push_back(JsonLine(l.text, file, l.number).Parse());
  return mix;
}

// "100..2000" -> {100, 2000}.
std::pair<uint64_t, uint64_t> ParseRange(std::string_view v, std::string_view what,
                                         std::string_view key) {
  size_t dots = v.find("..");
  if (dots == std::string_view::npos) {
    Fail("{}: {}={}: expected a range like 100..2000", what, key, v);
  }
  SourcePos none;
  std::string field = fmt::format("{}: {}", what, key);
  uint64_t lo = ParseCount(v.substr(0, dots), none, field);
  uint64_t hi = ParseCount(v.substr(dots + 2), none, field);
  if (lo > hi) Fail("{}: {}={}: the range is empty ({} > {})", what, key, v, lo, hi);
  return {lo, hi};
}

double ParsePositive(std::string_view v, std::string_view what, std::string_view key) {
  // util/units' one number grammar: no hex float, inf or nan.
  const double d = TryParseReal(v).value_or(0);
  if (!(d > 0)) {
    Fail("{}: {}={}: expected a number > 0", what, key, v);
  }
  return d;
}

}  // namespace

RequestMix ParseRequestMix(std::string_view text, const std::string& file) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") {
    text.remove_prefix(3);  // BOM
    if (text.starts_with("\xEF\xBB\xBF")) {
      Fail("{}:1:2: a second byte-order mark (U+FEFF); save the file with at most one", file);
    }
  }
  Lines lines(text);
  Line first;
  if (!lines.Next(first)) {
    Fail(
        "{}: empty request mix (expected a CSV header 'prompt_tokens,output_tokens' or JSONL "
        "objects)",
        file);
  }
  bool jsonl = EndsWith(file, ".jsonl") || EndsWith(file, ".ndjson") || EndsWith(file, ".json");
  if (!jsonl && !EndsWith(file, ".csv")) jsonl = Trim(first.text).front() == '{';
  return jsonl ? ParseJsonl(lines, first, file) : ParseCsv(lines, first, file);
}

RequestMix LoadRequestMix(const std::string& path) {
  // Read like every other input (a pipe such as /dev/stdin or <(...) too),
  // with the larger limit of a trace.
  return ParseRequestMix(ReadTextFile(path, RequestMixLimits::kMaxFileBytes), path);
}

MixParams ParseMixSpec(std::string_view spec, std::string_view what) {
  MixParams p;
  size_t colon = spec.find(':');
  std::string_view dist = Trim(spec.substr(0, colon));
  std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  std::vector<std::string> known_keys;
  if (dist == "uniform") {
    p.distribution = MixDistribution::kUniform;
    known_keys = {"prompt", "output", "n", "seed"};
  } else if (dist == "lognormal") {
    p.distribution = MixDistribution::kLognormal;
    known_keys = {"prompt_mean", "prompt_sigma", "output_mean", "output_sigma",
                  "prompt",      "output",       "n",           "seed"};
    p.prompt_min = 1;
    p.prompt_max = RequestMixLimits::kMaxTokens;
    p.output_min = 0;
    p.output_max = RequestMixLimits::kMaxTokens;
  } else {
    Fail(
        "{}: unknown distribution '{}' in '{}' (known: uniform, lognormal; or pass a CSV/JSONL "
        "file with --requests)",
        what, dist, spec);
  }
  std::vector<std::string> seen;
  size_t start = 0;
  while (start < rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string_view::npos) comma = rest.size();
    std::string_view item = Trim(rest.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) Fail("{}: '{}': expected key=value", what, item);
    std::string key(Trim(item.substr(0, eq)));
    std::string_view value = Trim(item.substr(eq + 1));
    bool known = false;
    for (const std::string& k : known_keys) known = known || k == key;
    if (!known) {
      std::string list;
      for (const std::string& k : known_keys) list += (list.empty() ? "" : ", ") + k;
      Fail("{}: unknown key '{}' for {}{} (known: {})", what, key, dist,
           DidYouMean(key, known_keys), list);
    }
    for (const std::string& s : seen) {
      if (s == key) Fail("{}: key '{}' given twice", what, key);
    }
    seen.push_back(key);
    if (key == "prompt") {
      std::tie(p.prompt_min, p.prompt_max) = ParseRange(value, what, key);
      if (p.prompt_min == 0)
        Fail("{}: prompt={}: a request needs at least 1 prompt token", what, value);
    } else if (key == "output") {
      std::tie(p.output_min, p.output_max) = ParseRange(value, what, key);
    } else if (key == "n" || key == "seed") {
      uint64_t v =
          ParseCount(value, {}, fmt::format("{}: {}", what, key), key == "n" ? "requests" : "");
      if (key == "n") {
        if (v == 0 || v > RequestMixLimits::kMaxGenerated) {
          Fail("{}: n={}: expected 1 to {} requests", what, value, RequestMixLimits::kMaxGenerated);
        }
        p.count = v;
      } else {
        p.seed = v;
      }
    } else {
      double d = ParsePositive(value, what, key);
      if (key == "prompt_mean") p.prompt_mean = d;
      if (key == "prompt_sigma") p.prompt_sigma = d;
      if (key == "output_mean") p.output_mean = d;
      if (key == "output_sigma") p.output_sigma = d;
    }
  }
  auto require = [&](std::string_view key) {
    for (const std::string& s : seen) {
      if (s == key) return;
    }
    Fail("{}: {} needs {}=... (e.g. {})", what, dist, key,
         dist == "uniform" ? "uniform:prompt=100..2000,output=50..500"
                           : "lognormal:prompt_mean=1000,prompt_sigma=0.8,output_mean=200,"
                             "output_sigma=1");
  };
  if (p.distribution == MixDistribution::kUniform) {
    require("prompt");
    require("output");
  } else {
    for (const char* k : {"prompt_mean", "prompt_sigma", "output_mean", "output_sigma"}) require(k);
  }
  return p;
}

RequestMix MixFromSpec(std::string_view spec, std::string_view what) {
  return GenerateMix(ParseMixSpec(spec, what), std::string(spec));
}

}  // namespace kvplan
