// The two checks that the YAML document parser (yaml_reader.cpp) and the
// map reader (yaml_map_reader.cpp) share. Nothing outside
// src/spec/yaml_*.cpp includes it; the public API is spec/yaml_reader.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string_view>

namespace kvplan {

/// Offset of the first byte of `text` that does not start a well-formed
/// UTF-8 sequence (no overlong forms, no surrogates, nothing past
/// U+10FFFF), or npos when every byte does.
size_t FirstNonUtf8(std::string_view text);

/// No value: the key is missing or written as `key:` / null.
inline bool IsAbsent(const YAML::Node& n) {
  return !n.IsDefined() || n.IsNull();
}

}  // namespace kvplan
