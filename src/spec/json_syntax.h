// Strict JSON (RFC 8259) through nlohmann-json, for every place kvplan reads
// JSON: a Hugging Face config.json, the lines of a JSONL request mix, and
// vLLM's --compilation-config / -cc (a pydantic JSON parse). yaml-cpp reads
// JSON too, but as YAML: trailing commas, single quotes, unquoted keys,
// anchors and tags would pass there and fail at the engine's startup.
//
// nlohmann finds the error; this file names it the way kvplan always has
// ("a trailing ',' before '}'", "invalid number: a leading zero") at the
// byte where the user has to look, which nlohmann's own message does not.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kvplan {

/// A syntax error at byte `offset` of the text.
struct JsonSyntaxError {
  /// What the parser wanted where it stopped: readers that parse one shape
  /// (a JSONL line is one object) word the outermost level themselves.
  enum class Expected {
    kToken,         // inside a token: `what` says why (a bad escape, a bad number)
    kValue,         // a value
    kKey,           // a "quoted" key
    kColon,         // ':' after a key
    kCommaOrClose,  // ',' or the container's close
    kEnd,           // nothing: text after the JSON value
  };
  size_t offset = 0;
  std::string what;  // "a trailing ',' before '}'", "invalid escape '\q'", ...
  Expected expected = Expected::kToken;
  size_t token = 0;   // where the unexpected token starts (a trailing comma's offset is the ',')
  std::string found;  // that token as named in `what`: "'x'", "byte 0xef", "the end"
  int depth = 0;      // containers open around the error
  char close = 0;     // the innermost open container's close ('}' or ']'), 0 at the top
  std::string duplicate_key;  // set for a key given twice (JsonOptions::unique_keys)
};

struct JsonOptions {
  int max_depth = 64;        // containers, counted inside the outer ones
  int outer_levels = 0;      // containers around the counted ones (a JSONL line's object)
  bool unique_keys = false;  // a key given twice in one object is an error
  /// NaN, Infinity and -Infinity as values, as Python's json module writes
  /// and reads them (a config.json saved by transformers may hold them).
  bool python_constants = false;
};

/// Receives the parts of a JSON text in document order, with byte offsets:
/// `begin` is the value's (or key's) first byte, `end` the byte past it;
/// `depth` counts the containers around it.
class JsonVisitor {
 public:
  virtual ~JsonVisitor() = default;
  virtual void Key(const std::string& key, size_t begin, size_t end, int depth) = 0;
  virtual void Scalar(nlohmann::ordered_json value, size_t begin, size_t end, int depth) = 0;
  virtual void Open(bool object, size_t begin, int depth) = 0;
  virtual void Close(size_t end, int depth) = 0;
};

/// Parses `text`, one JSON value with optional whitespace around it, calling
/// `visitor` as it goes. Throws JsonSyntaxError at the first error (what the
/// visitor throws passes through). With python_constants, a text that holds
/// one is parsed again from its start: the visitor sees a new depth-0 value.
void VisitJson(std::string_view text, JsonVisitor& visitor, const JsonOptions& options = {});

/// A parsed JSON document that remembers where each value is.
struct JsonDocument {
  nlohmann::ordered_json root;
  /// Offset of each value's first byte, by JSON pointer ("" is the root,
  /// "/text_config/layer_types/3" a list item).
  std::map<std::string, size_t> offsets;
};

/// Parses `text` into a JsonDocument. Throws JsonSyntaxError.
JsonDocument ParseJsonDocument(std::string_view text, const JsonOptions& options = {});

/// 1-based line and column of byte `offset` of `text`.
std::pair<size_t, size_t> JsonLineColumn(std::string_view text, size_t offset);

/// Throws kvplan::Error "`what`: not valid JSON (column C: reason)" (text of
/// several lines: "its line L, column C", counted in the text, not the file
/// it came from) unless `text` is one JSON value with
/// optional whitespace around it. Lines and columns count from 1.
void CheckJsonSyntax(std::string_view text, const std::string& what);

}  // namespace kvplan
