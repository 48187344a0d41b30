#include "import/hf_config.h"

#include <yaml-cpp/yaml.h>

#include "spec/yaml_reader.h"

namespace kvplan {

struct ConfigText {
  std::string text;
  JsonDocument json;
};

namespace {

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '+' || c == '-' || c == '_';
}

std::string Escaped(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

}  // namespace

JsonNode JsonNode::operator[](size_t i) const {
  if (!IsSequence() || i >= v_->size()) return {};
  return {doc_, &(*v_)[i], path_ + "/" + std::to_string(i)};
}

JsonNode JsonNode::Get(const std::string& key) const {
  if (!IsMap()) return {};
  auto it = v_->find(key);
  if (it == v_->end()) return {};
  return {doc_, &*it, path_ + "/" + Escaped(key)};
}

std::string JsonNode::Scalar() const {
  if (v_ == nullptr) return "";
  if (v_->is_string()) return v_->get<std::string>();
  if (v_->is_boolean()) return v_->get<bool>() ? "true" : "false";
  // A number as written (32.5, 1e3, NaN), as the user reads it.
  const std::string& text = doc_->text;
  const size_t begin = doc_->json.offsets.at(path_);
  size_t end = begin;
  while (end < text.size() && IsWordChar(text[end])) ++end;
  return text.substr(begin, end - begin);
}

SourcePos JsonNode::Pos(const std::string& file) const {
  if (v_ == nullptr) return SourcePos{file, 0, 0};
  const auto [line, column] = JsonLineColumn(doc_->text, doc_->json.offsets.at(path_));
  return SourcePos{file, static_cast<int>(line), static_cast<int>(column)};
}

JsonNode ParseConfigJson(const std::string& text, const std::string& file) {
  if (text.size() > YamlLimits::kMaxYamlBytes) {
    Fail("{}: {} bytes of JSON, over the {} byte limit for YAML and JSON input", file, text.size(),
         YamlLimits::kMaxYamlBytes);
  }
  auto doc = std::make_shared<ConfigText>();
  doc->text = text;
  JsonOptions options;
  options.max_depth = YamlLimits::kMaxDepth;
  options.unique_keys = true;
  options.python_constants = true;  // transformers reads config.json with Python's json
  try {
    doc->json = ParseJsonDocument(doc->text, options);
  } catch (const JsonSyntaxError& e) {
    const auto [line, column] = JsonLineColumn(text, e.offset);
    if (!e.duplicate_key.empty()) {
      Fail("{}:{}:{}: {}: duplicate key", file, line, column, e.duplicate_key);
    }
    if (e.token >= text.size() && e.depth > 0) {
      // Cut short inside a map or list: named as it always has been, at the
      // start of the last line.
      Fail("{}:{}:1: malformed JSON: end of {} flow not found", file, line,
           e.close == '}' ? "map" : "sequence");
    }
    Fail("{}:{}:{}: malformed JSON: {}", file, line, column, e.what);
  }
  const nlohmann::ordered_json* root = &doc->json.root;
  return JsonNode(std::move(doc), root, "");
}

bool IsAbsent(const JsonNode& n) {
  return !n.IsDefined() || n.IsNull();
}

uint64_t ScalarU64(const JsonNode& n, const std::string& file, std::string_view field,
                   bool allow_zero) {
  // A count written as a string ("32") is refused: transformers keeps it a
  // string, and the model code fails on it (range("32")).
  if (n.IsString()) {
    Fail("{}{}: expected an integer, got the string \"{}\"", n.Pos(file).Prefix(), field,
         n.Scalar());
  }
  // The scalar's text through the YAML reader's rule, so both read numbers
  // with the same words.
  const YAML::Node scalar = n.IsScalar() ? YAML::Node(n.Scalar()) : YAML::Node(YAML::NodeType::Map);
  return ScalarU64At(scalar, n.Pos(file), field, allow_zero);
}

JsonNode Config::Get(const std::string& key) const {
  JsonNode v = Lookup(node_, key);
  if (!v.IsDefined() && !prefix_.empty()) v = Lookup(root_, key);
  return v;
}

std::string Config::Name(const std::string& key) const {
  return (!prefix_.empty() && Lookup(node_, key).IsDefined()) ? prefix_ + key : key;
}

std::optional<uint64_t> Config::U(const std::string& key) const {
  JsonNode v = Get(key);
  if (IsAbsent(v)) return std::nullopt;
  return ScalarU64(v, file_, Name(key), true);
}

uint64_t Config::Req(const std::string& key, std::string_view arch) const {
  std::optional<uint64_t> v = U(key);
  if (!v) Fail("{}: {} config has no '{}'", file_, arch, key);
  return *v;
}

std::optional<bool> Config::B(const std::string& key) const {
  JsonNode v = Get(key);
  if (IsAbsent(v)) return std::nullopt;
  // JSON's true or false only: transformers keeps a string such as "false"
  // as it is, which Python's `if` reads as true, so no reading of it is safe.
  if (v.IsScalar() && !v.IsString() && (v.Scalar() == "true" || v.Scalar() == "false")) {
    return v.Scalar() == "true";
  }
  if (v.IsString()) {
    Fail(
        "{}{}: expected true or false, got the string \"{}\" (Python reads any non-empty "
        "string as true)",
        PosOf(v, file_).Prefix(), Name(key), v.Scalar());
  }
  Fail("{}{}: expected true or false", PosOf(v, file_).Prefix(), Name(key));
}

std::optional<std::string> Config::S(const std::string& key) const {
  JsonNode v = Get(key);
  if (IsAbsent(v)) return std::nullopt;
  if (!v.IsString()) Fail("{}{}: expected a text value", PosOf(v, file_).Prefix(), Name(key));
  return v.Scalar();
}

}  // namespace kvplan
