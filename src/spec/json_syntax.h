// Strict JSON syntax (RFC 8259), for the places where kvplan reads text that
// the engine itself parses as JSON: vLLM's --compilation-config / -cc (a
// pydantic JSON parse) and the values of a JSONL request mix. yaml-cpp reads
// JSON too, but as YAML: trailing commas, single quotes, unquoted keys,
// anchors and tags would pass here and fail at the engine's startup.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kvplan {

/// A syntax error at byte `offset` of the text.
struct JsonSyntaxError {
  size_t offset = 0;
  std::string what;  // "a trailing ',' before '}'", "invalid escape '\q'", ...
};

/// The offset just past the JSON value that starts at `start` (no leading
/// whitespace skipped). Nesting deeper than 64 is an error. Throws
/// JsonSyntaxError.
size_t JsonValueEnd(std::string_view text, size_t start);

/// The JSON string at `i` (a `"`), its escapes decoded; `i` moves past it.
/// Throws JsonSyntaxError when it is no valid JSON string.
std::string JsonStringValue(std::string_view text, size_t& i);

/// Throws kvplan::Error "`what`: not valid JSON (column C: reason)" (text of
/// several lines: "its line L, column C", counted in the text, not the file
/// it came from) unless `text` is one JSON value with
/// optional whitespace around it. Lines and columns count from 1.
void CheckJsonSyntax(std::string_view text, const std::string& what);

}  // namespace kvplan
