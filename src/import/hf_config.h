// A Hugging Face config.json as read by the importer: the JSON parsed
// through nlohmann (as Python's json module reads it: strict, NaN and
// Infinity allowed; a key given twice is an error), each value with its
// place in the file, and typed getters whose errors name file:line:col and
// the key.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "spec/json_syntax.h"
#include "util/error.h"

namespace kvplan {

struct ConfigText;  // the text and its parsed document

/// One value of a config.json, or an undefined one (a key that is absent).
class JsonNode {
 public:
  JsonNode() = default;
  JsonNode(std::shared_ptr<const ConfigText> doc, const nlohmann::ordered_json* value,
           std::string path)
      : doc_(std::move(doc)), v_(value), path_(std::move(path)) {}

  bool IsDefined() const { return v_ != nullptr; }
  bool IsNull() const { return v_ != nullptr && v_->is_null(); }
  bool IsMap() const { return v_ != nullptr && v_->is_object(); }
  bool IsSequence() const { return v_ != nullptr && v_->is_array(); }
  bool IsScalar() const { return v_ != nullptr && v_->is_primitive() && !v_->is_null(); }
  bool IsString() const { return v_ != nullptr && v_->is_string(); }
  size_t size() const { return v_ != nullptr && v_->is_structured() ? v_->size() : 0; }
  /// Item `i` of a list (undefined past its end).
  JsonNode operator[](size_t i) const;
  /// The value at `key` of a map, or an undefined node.
  JsonNode Get(const std::string& key) const;
  /// A string's text, or a number or true/false as written in the file.
  std::string Scalar() const;
  /// Where the value starts in `file`.
  SourcePos Pos(const std::string& file) const;

 private:
  std::shared_ptr<const ConfigText> doc_;
  const nlohmann::ordered_json* v_ = nullptr;
  std::string path_;  // JSON pointer
};

/// Parses a config.json. Throws Error "file:line:col: malformed JSON: ...".
JsonNode ParseConfigJson(const std::string& text, const std::string& file);

bool IsAbsent(const JsonNode& n);
inline JsonNode Lookup(const JsonNode& map, const std::string& key) {
  return map.Get(key);
}
inline SourcePos PosOf(const JsonNode& n, const std::string& file) {
  return n.Pos(file);
}
/// A whole number >= 0 (> 0 unless allow_zero), as spec/yaml_reader's ScalarU64.
uint64_t ScalarU64(const JsonNode& n, const std::string& file, std::string_view field,
                   bool allow_zero = false);

/// Read access to one config map (the root, or text_config for multimodal
/// wrappers) with typed getters whose errors name file:line:col and the key.
class Config {
 public:
  Config(JsonNode node, JsonNode root, std::string file, std::string prefix)
      : node_(std::move(node)),
        root_(std::move(root)),
        file_(std::move(file)),
        prefix_(std::move(prefix)) {}

  /// A key text_config leaves out may sit at the root; a null one is null.
  JsonNode Get(const std::string& key) const;
  bool Has(const std::string& key) const { return !IsAbsent(Get(key)); }
  /// The key as the user finds it ("text_config.head_dim" when nested).
  std::string Name(const std::string& key) const;

  std::optional<uint64_t> U(const std::string& key) const;
  uint64_t Req(const std::string& key, std::string_view arch) const;
  std::optional<bool> B(const std::string& key) const;
  std::optional<std::string> S(const std::string& key) const;
  const std::string& File() const { return file_; }

 private:
  JsonNode node_, root_;
  std::string file_, prefix_;
};

}  // namespace kvplan
