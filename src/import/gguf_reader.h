// Reading a GGUF file's header, metadata and tensor infos (llama.cpp's model
// format, versions 2 and 3, little-endian), never its tensor data.
//
// Every length, count and offset is checked against the bytes that remain
// before it is used, so a hostile file costs at most its own size in work and
// a bounded amount of memory; every error is one line naming the file, the
// byte offset and the key or field. docs/gguf.md describes what is read.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

/// GGUF metadata value types, as the file stores them (u32).
enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

/// "u32", "string", "array"...
std::string_view GgufTypeName(GgufType type);

/// One number (or bool) from the metadata: `is_float` for f32/f64 (in `f`),
/// else an integer in `i` (signed types, and unsigned ones up to INT64_MAX)
/// with `u` holding unsigned values whole.
struct GgufNumber {
  bool is_float = false;
  bool negative = false;
  uint64_t u = 0;  // the value when !is_float && !negative
  double f = 0;
};

/// One metadata key and its value.
struct GgufKv {
  std::string key;
  uint64_t offset = 0;  // byte offset of the key in the file
  GgufType type = GgufType::kU8;
  GgufNumber number;  // numeric and bool scalars
  std::string text;   // string scalars (kept whole up to GgufLimits::kMaxKeptString)
  bool text_cut = false;
  GgufType elem = GgufType::kU8;  // arrays: the element type
  uint64_t count = 0;             // arrays: the element count
  bool kept = false;              // arrays: numeric items kept in `items`
  std::vector<GgufNumber> items;
};

/// The ggml tensor types: block size (elements) and bytes per block.
struct GgmlType {
  uint32_t id = 0;
  std::string_view name;  // "Q4_K", "F16"...
  uint64_t block = 0;     // elements per block
  uint64_t bytes = 0;     // bytes per block
};

/// The type with ggml id `id`, or nullptr when ggml has no such type (or it
/// was removed from the format).
const GgmlType* FindGgmlType(uint32_t id);

struct GgufTensor {
  std::string name;
  uint64_t info_offset = 0;    // byte offset of its tensor info
  std::vector<uint64_t> dims;  // ne[0] (the row) first, at most 4
  const GgmlType* type = nullptr;
  uint64_t offset = 0;  // data offset, relative to the data section
  uint64_t elements = 0;
  uint64_t bytes = 0;  // bytes its data takes, from its type and dims
};

struct GgufFile {
  std::string path;  // names the file in messages
  uint32_t version = 0;
  uint64_t file_size = 0;
  uint64_t alignment = 32;
  uint64_t data_offset = 0;   // where the tensor data starts (aligned)
  uint64_t tensor_bytes = 0;  // sum of every tensor's bytes
  std::vector<GgufKv> kvs;
  std::map<std::string, size_t, std::less<>> index;  // key -> kvs position
  std::vector<GgufTensor> tensors;

  /// The key's entry, or nullptr.
  const GgufKv* Find(std::string_view key) const;
};

struct GgufLimits {
  // Header, metadata and tensor infos together (the tokenizer of a 256k-word
  // vocabulary takes about 10 MiB).
  static constexpr uint64_t kMaxHeaderBytes = 64ull << 20;
  static constexpr uint64_t kMaxKeyBytes = 65535;      // the GGUF spec's key limit
  static constexpr uint64_t kMaxKeptString = 1 << 16;  // longer strings are skipped
  static constexpr uint64_t kMaxKeptArray = 1 << 16;   // longer arrays: count only
  static constexpr uint64_t kMaxKeptItems = 1 << 20;   // numbers kept over all arrays
  static constexpr uint64_t kMaxTensors = 1 << 20;
  static constexpr uint64_t kMaxDims = 4;  // GGML_MAX_DIMS
};

/// Reads `n` bytes at `offset` into `out`; the reader has checked that they
/// lie within the file's size.
using GgufReadAt = std::function<void(uint64_t offset, uint64_t n, char* out)>;

/// Parses a GGUF file of `file_size` bytes read through `read`; `path` names
/// it in messages. Checks the tensor data lies within the file (without
/// reading it). Throws Error ("<path>: byte <offset>: <key or field>: ...").
GgufFile ParseGguf(const GgufReadAt& read, uint64_t file_size, const std::string& path);

/// ParseGguf over bytes in memory (the fuzz harness's entry).
GgufFile ParseGgufBytes(std::string_view bytes, const std::string& path);

/// ParseGguf over a file on disk (read in pieces, never the tensor data).
GgufFile ReadGgufFile(const std::string& path);

}  // namespace kvplan
