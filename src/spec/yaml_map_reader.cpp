// Reading the fields of a parsed YAML map strictly (MapReader: types,
// ranges, missing, duplicate and unknown keys with a did-you-mean), the
// scalar parsers behind it, and the checks and quoting for names written
// back to YAML. Parsing the document itself is yaml_reader.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "spec/yaml_reader.h"
#include "spec/yaml_reader_internal.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {

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
      Fail("{}{}: unknown field in {} (did you mean '{}'?)", PosOf(it.first, file_).Prefix(), other,
           what_, key);
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
    FailAt(key,
           "an escape decodes to a byte that is not UTF-8 (\\N and \\_ are not supported; "
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
  // util/units' one number grammar: decimal only, so a hex float (0x0.8),
  // .inf, .nan and 1e400 are refused here as on the command line.
  const std::optional<double> parsed = TryParseReal(s);
  if (!parsed) Fail("{}{}: expected a number, got '{}'", at, field, s);
  double v = *parsed;
  // An underflow (1e-400) reads as 0: a number, only too small, which a
  // reader's lower limit names.
  if (v == 0 && s.find_first_of("123456789") != std::string::npos) {
    v = std::copysign(std::numeric_limits<double>::denorm_min(), s.front() == '-' ? -1.0 : 1.0);
  }
  if (v < 0 || (v == 0 && !allow_zero)) Fail("{}{}: must be positive, got {}", at, field, s);
  return v;
}

}  // namespace kvplan
