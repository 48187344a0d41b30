// Strict YAML reading for kvplan's input files. Only files in spec/ include
// yaml-cpp. Every error names file:line:col and the field, and unknown or
// duplicate keys are errors (a typo must not silently fall back to a default).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace kvplan {

/// Limits enforced before and while parsing (see docs/reliability.md). Each
/// is far above any real input (a model spec is ~2 KB, 3 levels, ~150
/// nodes) and low enough that a hostile file costs milliseconds and a few MB.
struct YamlLimits {
  static constexpr size_t kMaxFileBytes =
      4 * 1024 * 1024;                                  // any input file, checked before reading
  static constexpr size_t kMaxYamlBytes = 1024 * 1024;  // YAML or JSON text, before parsing
  static constexpr int kMaxDepth = 32;                  // nesting of maps and lists
  /// Nodes visited when walking the parsed tree, counting every alias use
  /// again: yaml-cpp shares aliased nodes, so a "billion laughs" file is small
  /// in memory but exponential for any reader that walks it.
  static constexpr size_t kMaxNodes = 100'000;
  static constexpr size_t kMaxScalarBytes = 16 * 1024;  // one key or value
};

/// Reads a whole file, pipe or device (at most `max_bytes`), a lone CR read as
/// a line break (LF). Throws Error "file: ...".
std::string ReadTextFile(const std::string& path, size_t max_bytes = YamlLimits::kMaxFileBytes);

/// Parses `text` as one YAML (or JSON) document named `file`. Throws Error with
/// file:line:col on malformed input, bytes that are not UTF-8, an empty
/// document, more than one document, or any YamlLimits exceeded.
YAML::Node ParseYaml(const std::string& text, const std::string& file);

/// Position of a node in `file` (1-based line and column).
SourcePos PosOf(const YAML::Node& node, const std::string& file);

/// Reads the fields of one YAML map, checking types, ranges, duplicate and
/// unknown keys. Call Finish() after reading every field you know.
class MapReader {
 public:
  /// `what` names the map in messages ("model spec", "layer_groups[2]").
  /// `fields` lists every key the caller may ask for, so that a missing
  /// required field is never blamed on a valid key not read yet (v_head_dim
  /// is no typo of a missing head_dim); asking for a key not listed is a bug
  /// that Finish() reports.
  MapReader(const YAML::Node& node, std::string file, std::string what,
            std::vector<std::string> fields);

  bool Has(std::string_view key) const;       // present with a value (not null)
  bool Written(std::string_view key) const;   // present, even as `key:` with no value
  SourcePos Pos(std::string_view key) const;  // the key's value position
  SourcePos Pos() const { return pos_; }      // the map's own position
  const YAML::Node& Node() const { return node_; }

  std::string Str(std::string_view key);
  std::optional<std::string> OptStr(std::string_view key);
  /// A positive integer (> 0) unless allow_zero.
  uint64_t U64(std::string_view key, bool allow_zero = false);
  std::optional<uint64_t> OptU64(std::string_view key, bool allow_zero = false);
  /// A finite number > 0 unless allow_zero; accepts 989.4e12.
  double Num(std::string_view key, bool allow_zero = false);
  std::optional<double> OptNum(std::string_view key, bool allow_zero = false);
  bool Bool(std::string_view key);
  std::optional<bool> OptBool(std::string_view key);
  /// A child map or list; Error if absent (use Has() first for optional ones).
  YAML::Node Child(std::string_view key);
  /// Marks `key` as read whatever its value: a key the caller accepts and
  /// only names (an engine flag kvplan does not model).
  void Skip(std::string_view key) { Value(key); }

  /// Error on the first key that was never asked for, suggesting the closest field.
  void Finish() const;

 private:
  YAML::Node Value(std::string_view key);
  [[noreturn]] void FailMissing(std::string_view key) const;
  [[noreturn]] void FailAt(std::string_view key, const std::string& message) const;

  YAML::Node node_;
  std::string file_;
  std::string what_;
  std::vector<std::string> fields_;
  SourcePos pos_;
  std::set<std::string, std::less<>> asked_;
};

/// Error "AT FIELD: has a control character (U+000A); ..." when a name
/// holds one (C0, DEL or C1: a newline, a tab, \u0001), which would break
/// the tables it is printed in and the YAML it is written back to.
void CheckNameChars(std::string_view text, const std::string& at, std::string_view field);

/// `text` as a double-quoted YAML scalar that ParseYaml reads back unchanged
/// (quotes, backslashes and control characters escaped), for writers.
std::string YamlQuote(std::string_view text);

/// Parses a scalar as a positive integer (digits and '_' only).
uint64_t ScalarU64(const YAML::Node& node, const std::string& file, std::string_view field,
                   bool allow_zero = false);
/// The same, with errors at `pos` rather than the node's own position (a
/// node parsed from a string inside a file, whose marks are the string's).
uint64_t ScalarU64At(const YAML::Node& node, const SourcePos& pos, std::string_view field,
                     bool allow_zero = false);

/// Parses a scalar as a finite number.
double ScalarNum(const YAML::Node& node, const std::string& file, std::string_view field,
                 bool allow_zero = false);

}  // namespace kvplan
