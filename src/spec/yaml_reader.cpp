#include "spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "util/suggest.h"

namespace kvplan {
namespace {

// Rejects input that would make the parser go too deep or build too many
// nodes, before parsing (yaml-cpp needs ~1 s per 100k nodes): flow brackets
// nested past the limit, block indentation so deep that no real spec needs
// it, or more lines and flow items than YamlLimits::kMaxNodes. It tracks
// comments and quoted scalars the way YAML does ('#' and quotes only count
// after a separator), so brackets cannot hide from it.
void CheckShapeBeforeParse(const std::string& text, const std::string& file) {
  int flow = 0, line = 1, column = 0;
  bool in_single = false, in_double = false, in_comment = false, at_line_start = true;
  bool line_has_content = false;
  int indent = 0;
  size_t values = 0;
  auto count_value = [&] {
    if (++values > YamlLimits::kMaxNodes) {
      Fail("{}:{}:{}: more than {} values (lines and flow items) in one file", file, line,
           column, YamlLimits::kMaxNodes);
    }
  };
  // Where YAML lets a comment or a quoted scalar start: after white space, and
  // inside brackets also after [ { , : (JSON's {"a":"b"}). Erring the other way
  // only counts more brackets, which is safe.
  auto after_separator = [&](size_t i, bool comment) {
    if (i == 0) return true;
    char p = text[i - 1];
    if (p == ' ' || p == '\t' || p == '\n') return true;
    return !comment && flow > 0 && (p == '[' || p == '{' || p == ',' || p == ':');
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++column;
    if (c == '\n') {
      if (line_has_content) count_value();
      ++line;
      column = 0;
      in_comment = false;
      in_single = in_double = in_double && flow > 0;  // quoted scalars may span lines in flow
      at_line_start = true;
      line_has_content = false;
      indent = 0;
      continue;
    }
    if (at_line_start) {
      // YAML indents with spaces only; yaml-cpp's own message for a tab is cryptic.
      if (c == '\t' && flow == 0 && text.find_first_not_of(' ', i + 1 - column) == i) {
        size_t next = text.find_first_not_of(" \t", i);
        if (next != std::string::npos && text[next] != '\n' && text[next] != '\r' &&
            text[next] != '#') {
          Fail("{}:{}:{}: a tab in the indentation (YAML indents with spaces)", file, line,
               column);
        }
      }
      if (c == ' ' || c == '-' || c == '?' || c == '\t') {
        if (++indent > 8 * YamlLimits::kMaxDepth) {
          Fail("{}:{}:{}: indentation deeper than {} columns (nesting limit {})", file, line,
               column, 8 * YamlLimits::kMaxDepth, YamlLimits::kMaxDepth);
        }
        continue;
      }
      at_line_start = false;
    }
    if (in_comment) continue;
    if (in_double) {
      if (c == '\\') ++i;
      else if (c == '"') in_double = false;
      continue;
    }
    if (in_single) {
      if (c == '\'') in_single = false;
      continue;
    }
    if (c == '#' && after_separator(i, true)) {
      in_comment = true;
      continue;
    }
    line_has_content = true;
    if (c == '"' && after_separator(i, false)) {
      in_double = true;
    } else if (c == '\'' && after_separator(i, false)) {
      in_single = true;
    } else if (c == '[' || c == '{') {
      count_value();
      if (++flow > YamlLimits::kMaxDepth) {
        Fail("{}:{}:{}: nesting deeper than {} levels", file, line, column,
             YamlLimits::kMaxDepth);
      }
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    } else if (c == ',') {
      count_value();
    }
  }
}

// Offset of the first byte of `text` that does not start a well-formed
// UTF-8 sequence (no overlong forms, no surrogates, nothing past
// U+10FFFF), or npos when every byte does.
size_t FirstNonUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    auto b = static_cast<unsigned char>(text[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    bool ok = n != 0 && i + n <= text.size();
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
    for (size_t k = 1; ok && k < n; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      ok = (c >> 6) == 0x2;
      cp = (cp << 6) | (c & 0x3fu);
    }
    if (ok && n > 1) {
      ok = (n == 2 && cp >= 0x80) || (n == 3 && cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff)) ||
           (n == 4 && cp >= 0x10000 && cp <= 0x10ffff);
    }
    if (!ok) return i;
    i += n;
  }
  return std::string_view::npos;
}

// Rejects bytes that are not UTF-8 (yaml-cpp would silently turn them into
// U+FFFD), naming the line and column of the first bad byte.
void CheckUtf8(const std::string& text, const std::string& file) {
  const size_t bad = FirstNonUtf8(text);
  if (bad == std::string_view::npos) return;
  int line = 1, column = 1;
  for (size_t i = 0; i < bad; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == '\n') {
      ++line;
      column = 1;
    } else if ((b & 0xc0) != 0x80) {
      ++column;  // count characters, not continuation bytes
    }
  }
  Fail("{}:{}:{}: not UTF-8 text (byte 0x{:02x}); save the file as UTF-8", file, line, column,
       static_cast<unsigned char>(text[bad]));
}

// Walks the parsed tree once, enforcing depth, node count and scalar length.
// `visited` counts every node reached, so shared (aliased) subtrees count
// each time they are used.
void CheckTree(const YAML::Node& node, const std::string& file, int depth, size_t& visited) {
  if (depth > YamlLimits::kMaxDepth) {
    Fail("{}nesting deeper than {} levels", PosOf(node, file).Prefix(), YamlLimits::kMaxDepth);
  }
  if (++visited > YamlLimits::kMaxNodes) {
    Fail("{}more than {} values in one file (anchors and aliases count each time they are "
         "used)",
         PosOf(node, file).Prefix(), YamlLimits::kMaxNodes);
  }
  if (node.IsScalar() && node.Scalar().size() > YamlLimits::kMaxScalarBytes) {
    Fail("{}a value of {} bytes, over the {} byte limit", PosOf(node, file).Prefix(),
         node.Scalar().size(), YamlLimits::kMaxScalarBytes);
  }
  if (node.IsMap()) {
    // Duplicate keys are refused in every map, not just those a MapReader
    // reads: yaml-cpp keeps the first, Python's json (transformers) the last.
    std::set<std::string, std::less<>> keys;
    for (const auto& it : node) {
      CheckTree(it.first, file, depth + 1, visited);
      if (it.first.IsScalar() && !keys.insert(it.first.Scalar()).second) {
        Fail("{}{}: duplicate key", PosOf(it.first, file).Prefix(), it.first.Scalar());
      }
      CheckTree(it.second, file, depth + 1, visited);
    }
  } else if (node.IsSequence()) {
    for (const auto& it : node) CheckTree(it, file, depth + 1, visited);
  }
}

// Records where the parser starts a document, and ignores the rest.
struct DocumentStart : YAML::EventHandler {
  bool seen = false;
  YAML::Mark mark;
  void OnDocumentStart(const YAML::Mark& m) override {
    seen = true;
    mark = m;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

bool IsAbsent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

}  // namespace

namespace {

// A lone CR (classic Mac line endings) is a line break, as YAML says; yaml-cpp
// and the request-mix reader only know LF and CRLF, so it becomes LF here,
// keeping every line and column where it was.
std::string LoneCrToLf(std::string text) {
  for (size_t i = text.find('\r'); i != std::string::npos; i = text.find('\r', i + 1)) {
    if (i + 1 == text.size() || text[i + 1] != '\n') text[i] = '\n';
  }
  return text;
}

}  // namespace

std::string ReadTextFile(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) Fail("{}: is a directory, not a file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("{}: cannot open file: {}", path, std::strerror(errno));
  if (!std::filesystem::is_regular_file(path, ec)) {
    // A pipe (`kvplan size <(...)`) or a device: read to its end, no further
    // than the limit (/dev/zero has none).
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<size_t>(in.gcount()));
      if (text.size() > max_bytes) {
        Fail("{}: more than {} bytes, the limit for input files", path, max_bytes);
      }
    }
    if (in.bad()) Fail("{}: cannot read file", path);
    return LoneCrToLf(std::move(text));
  }
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) Fail("{}: cannot read file (is it a directory?)", path);
  if (static_cast<uint64_t>(size) > max_bytes) {
    Fail("{}: file is {} bytes, over the {} byte limit for input files", path, size, max_bytes);
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) Fail("{}: cannot read file", path);
  return LoneCrToLf(std::move(text));
}

YAML::Node ParseYaml(const std::string& text, const std::string& file) {
  if (text.size() > YamlLimits::kMaxYamlBytes) {
    Fail("{}: {} bytes of YAML, over the {} byte limit for YAML and JSON input", file,
         text.size(), YamlLimits::kMaxYamlBytes);
  }
  if (text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') ||
                           (text[0] == '\xfe' && text[1] == '\xff'))) {
    Fail("{}: UTF-16 text; save the file as UTF-8", file);
  }
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    size_t line_start = text.rfind('\n', nul);
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    Fail("{}:{}:{}: a NUL byte (is this a binary file?)", file,
         1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'),
         nul - line_start + 1);
  }
  CheckUtf8(text, file);
  CheckShapeBeforeParse(text, file);
  YAML::Node root;
  DocumentStart second;
  try {
    root = YAML::Load(text);
    // Anything after the first document is an error, but yaml-cpp 0.7's
    // LoadAll never returns on a stray ',' (found by fuzzing: it loops,
    // allocating). So ask the event parser for at most one more document.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStart first;
    if (parser.HandleNextDocument(first)) parser.HandleNextDocument(second);
  } catch (const YAML::Exception& e) {
    // JSON (an HF config.json) is read as YAML, of which it is a subset.
    const char* what = file.ends_with(".json") ? "malformed JSON" : "malformed YAML";
    if (e.mark.is_null()) Fail("{}: {}: {}", file, what, e.msg);
    Fail("{}:{}:{}: {}: {}", file, e.mark.line + 1, e.mark.column + 1, what, e.msg);
  }
  if (IsAbsent(root)) Fail("{}: empty document", file);
  if (second.seen) {
    Fail("{}:{}:{}: text after the end of the YAML document (a second '---' document, or a "
         "stray ',' or ']'); a file holds exactly one",
         file, second.mark.line + 1, second.mark.column + 1);
  }
  size_t visited = 0;
  CheckTree(root, file, 0, visited);
  return root;
}

SourcePos PosOf(const YAML::Node& node, const std::string& file) {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return SourcePos{file, 0, 0};
  return SourcePos{file, m.line + 1, m.column + 1};
}

MapReader::MapReader(const YAML::Node& node, std::string file, std::string what,
                     std::vector<std::string> fields)
    : node_(node),
      file_(std::move(file)),
      what_(std::move(what)),
      fields_(std::move(fields)),
      pos_(PosOf(node, file_)) {
  if (!node_.IsMap()) Fail("{}{}: expected a map of fields", pos_.Prefix(), what_);
  std::set<std::string, std::less<>> seen;
  for (const auto& it : node_) {
    if (!it.first.IsScalar()) {
      Fail("{}{}: keys must be plain names", PosOf(it.first, file_).Prefix(), what_);
    }
    const std::string& key = it.first.Scalar();
    if (!seen.insert(key).second) {
      Fail("{}{}: duplicate key", PosOf(it.first, file_).Prefix(), key);
    }
  }
}

bool MapReader::Has(std::string_view key) const {
  for (const auto& it : node_) {
    if (it.first.Scalar() == key) return !IsAbsent(it.second);
  }
  return false;
}

bool MapReader::Written(std::string_view key) const {
  for (const auto& it : node_) {
    if (it.first.Scalar() == key) return true;
  }
  return false;
}

SourcePos MapReader::Pos(std::string_view key) const {
  for (const auto& it : node_) {
    if (it.first.Scalar() == key) {
      // A null value (`key:` with nothing after it) is marked where the next
      // token starts, often the next line: the key's own place then.
      SourcePos p = PosOf(it.second, file_);
      return p.line > 0 && !it.second.IsNull() ? p : PosOf(it.first, file_);
    }
  }
  return pos_;
}

void MapReader::FailAt(std::string_view key, const std::string& message) const {
  Fail("{}{}: {}", Pos(key).Prefix(), key, message);
}

YAML::Node MapReader::Value(std::string_view key) {
  asked_.insert(std::string(key));
  for (const auto& it : node_) {
    if (it.first.Scalar() == key) return it.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

void MapReader::FailMissing(std::string_view key) const {
  // `key:` written with no value: point at it, not at the map.
  for (const auto& it : node_) {
    if (it.first.Scalar() == key) {
      Fail("{}{}: no value (the field is required)", PosOf(it.first, file_).Prefix(), key);
    }
  }
  // A missing field is most often a typo of it: point at the typo instead,
  // never at a field of this map (read later, so not asked for yet).
  for (const auto& it : node_) {
    const std::string& other = it.first.Scalar();
    if (std::find(fields_.begin(), fields_.end(), other) != fields_.end()) continue;
    if (!ClosestNames(other, {std::string(key)}, 1).empty()) {
      Fail("{}{}: unknown field in {} (did you mean '{}'?)", PosOf(it.first, file_).Prefix(),
           other, what_, key);
    }
  }
  Fail("{}{}: missing required field '{}'", pos_.Prefix(), what_, key);
}

std::string MapReader::Str(std::string_view key) {
  std::optional<std::string> v = OptStr(key);
  if (!v) FailMissing(key);
  return *v;
}

std::optional<std::string> MapReader::OptStr(std::string_view key) {
  YAML::Node v = Value(key);
  if (IsAbsent(v)) return std::nullopt;
  if (!v.IsScalar()) FailAt(key, "expected a text value");
  if (v.Scalar().empty()) FailAt(key, "must not be empty");
  // The file is UTF-8 (CheckUtf8), but yaml-cpp 0.7 decodes the escapes \N
  // and \_ of a double-quoted string to the single bytes 0x85 and 0xa0,
  // which are not UTF-8 (found by fuzz_hardware_spec: such a name could not
  // be written back and read again).
  if (FirstNonUtf8(v.Scalar()) != std::string_view::npos) {
    FailAt(key, "an escape decodes to a byte that is not UTF-8 (\\N and \\_ are not supported; "
                "write the character itself)");
  }
  return v.Scalar();
}

uint64_t MapReader::U64(std::string_view key, bool allow_zero) {
  std::optional<uint64_t> v = OptU64(key, allow_zero);
  if (!v) FailMissing(key);
  return *v;
}

std::optional<uint64_t> MapReader::OptU64(std::string_view key, bool allow_zero) {
  YAML::Node v = Value(key);
  if (IsAbsent(v)) return std::nullopt;
  return ScalarU64(v, file_, key, allow_zero);
}

double MapReader::Num(std::string_view key, bool allow_zero) {
  std::optional<double> v = OptNum(key, allow_zero);
  if (!v) FailMissing(key);
  return *v;
}

std::optional<double> MapReader::OptNum(std::string_view key, bool allow_zero) {
  YAML::Node v = Value(key);
  if (IsAbsent(v)) return std::nullopt;
  return ScalarNum(v, file_, key, allow_zero);
}

bool MapReader::Bool(std::string_view key) {
  std::optional<bool> v = OptBool(key);
  if (!v) FailMissing(key);
  return *v;
}

std::optional<bool> MapReader::OptBool(std::string_view key) {
  YAML::Node v = Value(key);
  if (IsAbsent(v)) return std::nullopt;
  if (v.IsScalar()) {
    const std::string& s = v.Scalar();
    if (s == "true" || s == "True" || s == "yes") return true;
    if (s == "false" || s == "False" || s == "no") return false;
  }
  FailAt(key, "expected true or false");
}

YAML::Node MapReader::Child(std::string_view key) {
  YAML::Node v = Value(key);
  if (IsAbsent(v)) FailMissing(key);
  return v;
}

void MapReader::Finish() const {
  // A key read but missing from the reader's list of fields is a bug in
  // the list. The test suite sets KVPLAN_CHECK_FIELDS (tests/main.cpp; its
  // kvplan subprocesses inherit it) so that a stale list fails there; for a
  // user the key is simply read, never an internal error on a valid file.
  static const bool check = std::getenv("KVPLAN_CHECK_FIELDS") != nullptr;
  for (const std::string& key : asked_) {
    if (check && std::find(fields_.begin(), fields_.end(), key) == fields_.end()) {
      throw std::logic_error(
          fmt::format("MapReader for {}: '{}' is read but not in its list of fields", what_, key));
    }
  }
  for (const auto& it : node_) {
    const std::string& key = it.first.Scalar();
    if (asked_.count(key) == 0) {
      // A field of the list not read here (one that only some kinds take)
      // is not its own suggestion.
      std::vector<std::string> others;
      for (const std::string& f : fields_) {
        if (f != key) others.push_back(f);
      }
      Fail("{}{}: unknown field in {}{}", PosOf(it.first, file_).Prefix(), key, what_,
           DidYouMean(key, others));
    }
  }
}

void CheckNameChars(std::string_view text, const std::string& at, std::string_view field) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0u;
    // U+0080 to U+009F are 0xc2 then the code point's own byte in UTF-8.
    const unsigned cp = b < 0x20 || b == 0x7f                       ? b
                        : b == 0xc2 && next >= 0x80 && next <= 0x9f ? next
                                                                    : 0;
    if (cp != 0 || b == 0) {
      Fail("{}{}: has a control character (U+{:04X}); a name is one line of printable text", at,
           field, cp);
    }
  }
}

std::string YamlQuote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;  // UTF-8 passes through as is
    }
  }
  return out + "\"";
}

uint64_t ScalarU64(const YAML::Node& node, const std::string& file, std::string_view field,
                   bool allow_zero) {
  return ScalarU64At(node, PosOf(node, file), field, allow_zero);
}

uint64_t ScalarU64At(const YAML::Node& node, const SourcePos& pos, std::string_view field,
                     bool allow_zero) {
  const std::string at = pos.Prefix();
  if (!node.IsScalar()) Fail("{}{}: expected an integer", at, field);
  const std::string& s = node.Scalar();
  std::string digits;
  for (char c : s) {
    if (c == '_') continue;
    if (c < '0' || c > '9') {
      if (!s.empty() && s[0] == '-') {
        Fail("{}{}: must be {}, got {}", at, field, allow_zero ? "0 or more" : "positive", s);
      }
      Fail("{}{}: expected a whole number, got '{}'", at, field, s);
    }
    digits += c;
  }
  if (digits.empty()) Fail("{}{}: expected a whole number, got '{}'", at, field, s);
  uint64_t value = 0;
  for (char c : digits) {
    if (__builtin_mul_overflow(value, 10u, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(c - '0'), &value)) {
      Fail("{}{}: {} does not fit in 64 bits", at, field, s);
    }
  }
  if (value == 0 && !allow_zero) Fail("{}{}: must be positive, got 0", at, field);
  return value;
}

double ScalarNum(const YAML::Node& node, const std::string& file, std::string_view field,
                 bool allow_zero) {
  std::string at = PosOf(node, file).Prefix();
  if (!node.IsScalar()) Fail("{}{}: expected a number", at, field);
  const std::string& s = node.Scalar();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  // ERANGE is also set on underflow (1e-308 is a denormal, 1e-400 reads as
  // 0): that is a number, only too small, which a reader's lower limit names.
  const bool overflow = errno == ERANGE && std::fabs(v) > 1;
  if (s.empty() || end != s.c_str() + s.size() || overflow) {
    Fail("{}{}: expected a number, got '{}'", at, field, s);
  }
  if (errno == ERANGE && v == 0) v = std::copysign(std::numeric_limits<double>::denorm_min(), v);
  if (!std::isfinite(v)) Fail("{}{}: must be a finite number, got '{}'", at, field, s);
  if (v < 0 || (v == 0 && !allow_zero)) Fail("{}{}: must be positive, got {}", at, field, s);
  return v;
}

}  // namespace kvplan
