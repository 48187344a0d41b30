// A GGUF file (llama.cpp's model format) as a kvplan model spec: the
// geometry from its metadata ({arch}.block_count, .attention.head_count_kv as
// a number or per layer, sliding windows, experts, ssm.* state) and the exact
// weight bytes from its tensor infos, summed tensor by tensor in each one's
// ggml type (K-quant mixes such as Q4_K_M included). docs/gguf.md.
#pragma once

#include <string>
#include <string_view>

#include "import/gguf_reader.h"
#include "spec/model_spec.h"

namespace kvplan {

/// The validated spec a parsed GGUF file describes; its path names it in
/// `source`, `origin` and every message. Throws Error ("<file>: byte <offset>:
/// <key>: ...") for metadata kvplan cannot turn into a spec.
ModelSpec GgufToModel(const GgufFile& file);

/// Reads `path` (header, metadata and tensor infos only) and returns its spec.
ModelSpec LoadGgufModel(const std::string& path);

/// GgufToModel(ParseGgufBytes(bytes, path)): the fuzz harness's entry.
ModelSpec GgufModelFromBytes(std::string_view bytes, const std::string& path);

/// "Q4_K_M" for llama.cpp's general.file_type 15, "" when unknown.
std::string_view GgufFileTypeName(uint64_t file_type);

}  // namespace kvplan
