// Private to gguf_model.cpp and gguf_layers.cpp: typed access to a GGUF
// file's metadata under its architecture's prefix, every error naming the
// file, the key's byte offset and the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "import/gguf_reader.h"
#include "spec/model_spec.h"

namespace kvplan {

class GgufMeta {
 public:
  explicit GgufMeta(const GgufFile& f);

  const GgufFile& File() const { return f_; }
  const std::string& Arch() const { return arch_; }

  /// "{arch}.{suffix}"'s entry, or nullptr.
  const GgufKv* Kv(std::string_view suffix) const;
  /// An unsigned integer under "{arch}.{suffix}"; nullopt when absent.
  std::optional<uint64_t> U(std::string_view suffix) const;
  /// U(), or an Error saying the key is missing.
  uint64_t Req(std::string_view suffix) const;
  /// One value per layer: a number (every layer) or an array of `layers`.
  std::optional<std::vector<uint64_t>> PerLayer(std::string_view suffix, uint64_t layers) const;
  /// A string key (full name); nullopt when absent or not a string.
  std::optional<std::string> Str(std::string_view key) const;

  const GgufTensor* Tensor(std::string_view name) const;
  /// True when some tensor's name contains `part`.
  bool HasTensorPart(std::string_view part) const;

  /// "file: byte N: key" for the spec's field positions (just the file when absent).
  SourcePos PosOf(std::string_view suffix) const;
  [[noreturn]] void FailKey(const GgufKv& kv, std::string_view msg) const;
  /// A number as an unsigned integer, or an Error naming `kv`.
  uint64_t Number(const GgufKv& kv, const GgufNumber& n) const;

 private:
  const GgufFile& f_;
  std::string arch_;
};

/// Heads, head dims, MLA, sliding windows and SSM state, as layer groups.
void ReadAttention(const GgufMeta& m, ModelSpec& s);

}  // namespace kvplan
