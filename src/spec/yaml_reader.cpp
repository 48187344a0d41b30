#include "spec/yaml_reader.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/suggest.h"

namespace kvplan {
namespace {

// Rejects input that would make the recursive parser go too deep, before
// parsing: flow brackets nested past the limit, or block indentation so deep
// that no real spec needs it.
void CheckNestingBeforeParse(const std::string& text, const std::string& file) {
  int flow = 0, line = 1, column = 0;
  bool in_single = false, in_double = false, in_comment = false, at_line_start = true;
  int indent = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      in_comment = false;
      in_single = in_double = in_double && flow > 0;  // quoted scalars may span lines in flow
      at_line_start = true;
      indent = 0;
      continue;
    }
    if (at_line_start) {
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
    if (c == '#') in_comment = true;
    else if (c == '"') in_double = true;
    else if (c == '\'' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '[' ||
                           text[i - 1] == '{' || text[i - 1] == ',' || text[i - 1] == ':'))
      in_single = true;
    else if (c == '[' || c == '{') {
      if (++flow > YamlLimits::kMaxDepth) {
        Fail("{}:{}:{}: nesting deeper than {} levels", file, line, column,
             YamlLimits::kMaxDepth);
      }
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    }
  }
}

void CheckDepth(const YAML::Node& node, const std::string& file, int depth) {
  if (depth > YamlLimits::kMaxDepth) {
    SourcePos p = PosOf(node, file);
    Fail("{}nesting deeper than {} levels", p.Prefix(), YamlLimits::kMaxDepth);
  }
  if (node.IsMap() || node.IsSequence()) {
    for (const auto& it : node) {
      if (node.IsMap()) {
        CheckDepth(it.second, file, depth + 1);
      } else {
        CheckDepth(it, file, depth + 1);
      }
    }
  }
}

bool IsAbsent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

}  // namespace

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("{}: cannot open file: {}", path, std::strerror(errno));
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) Fail("{}: cannot read file (is it a directory?)", path);
  if (static_cast<uint64_t>(size) > YamlLimits::kMaxFileBytes) {
    Fail("{}: file is {} bytes, over the {} byte limit for input files", path, size,
         YamlLimits::kMaxFileBytes);
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) Fail("{}: cannot read file", path);
  return text;
}

YAML::Node ParseYaml(const std::string& text, const std::string& file) {
  if (text.size() > YamlLimits::kMaxFileBytes) {
    Fail("{}: input is {} bytes, over the {} byte limit", file, text.size(),
         YamlLimits::kMaxFileBytes);
  }
  if (text.find('\0') != std::string::npos) Fail("{}: input contains a NUL byte", file);
  CheckNestingBeforeParse(text, file);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) Fail("{}: malformed YAML: {}", file, e.msg);
    Fail("{}:{}:{}: malformed YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (IsAbsent(root)) Fail("{}: empty document", file);
  CheckDepth(root, file, 0);
  return root;
}

SourcePos PosOf(const YAML::Node& node, const std::string& file) {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return SourcePos{file, 0, 0};
  return SourcePos{file, m.line + 1, m.column + 1};
}

MapReader::MapReader(const YAML::Node& node, std::string file, std::string what)
    : node_(node), file_(std::move(file)), what_(std::move(what)), pos_(PosOf(node, file_)) {
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

SourcePos MapReader::Pos(std::string_view key) const {
  for (const auto& it : node_) {
    if (it.first.Scalar() == key) {
      SourcePos p = PosOf(it.second, file_);
      return p.line > 0 ? p : PosOf(it.first, file_);
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
  // A missing field is most often a typo of it: point at the typo instead.
  for (const auto& it : node_) {
    const std::string& other = it.first.Scalar();
    if (asked_.count(other) != 0 || other == key) continue;
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
  std::vector<std::string> known(asked_.begin(), asked_.end());
  for (const auto& it : node_) {
    const std::string& key = it.first.Scalar();
    if (asked_.count(key) == 0) {
      Fail("{}{}: unknown field in {}{}", PosOf(it.first, file_).Prefix(), key, what_,
           DidYouMean(key, known));
    }
  }
}

uint64_t ScalarU64(const YAML::Node& node, const std::string& file, std::string_view field,
                   bool allow_zero) {
  std::string at = PosOf(node, file).Prefix();
  if (!node.IsScalar()) Fail("{}{}: expected an integer", at, field);
  const std::string& s = node.Scalar();
  std::string digits;
  for (char c : s) {
    if (c == '_') continue;
    if (c < '0' || c > '9') {
      if (!s.empty() && s[0] == '-') Fail("{}{}: must be positive, got {}", at, field, s);
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
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) {
    Fail("{}{}: expected a number, got '{}'", at, field, s);
  }
  if (!std::isfinite(v)) Fail("{}{}: must be a finite number, got '{}'", at, field, s);
  if (v < 0 || (v == 0 && !allow_zero)) Fail("{}{}: must be positive, got {}", at, field, s);
  return v;
}

}  // namespace kvplan
