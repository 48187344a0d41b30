// A checkpoint's exact weight bytes, read from its safetensors metadata
// without touching the weights: the index's metadata.total_size, else the
// JSON header of each shard (dtype size x shape per tensor, so packed int4
// and its scales count exactly as stored).
//
// A safetensors file is an 8-byte little-endian length N, an N-byte JSON
// header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {...}}, then the tensor data. A `.safetensors.header` file
// is the first 8 + N bytes of one shard alone, as the Hub serves them to a
// range request (import/resolve stores them so).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvplan {

/// The weight bytes of a checkpoint and where they were read, e.g.
/// "model.safetensors.index.json total_size" or "safetensors headers (4 files)".
struct CheckpointBytes {
  uint64_t bytes = 0;
  std::string from;
};

/// What one safetensors header describes.
struct SafetensorsHeader {
  uint64_t tensor_bytes = 0;  // the sum of every tensor's bytes
  uint64_t tensors = 0;       // how many tensors
  uint64_t data_end = 0;      // the largest data_offsets end (the data section's length)
};

/// The most header bytes kvplan reads (the safetensors library's own limit).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

/// Bits per element of a safetensors dtype name ("BF16" -> 16, "F4" -> 4),
/// or 0 for a name safetensors does not define.
uint64_t SafetensorsDtypeBits(std::string_view dtype);

/// Parses the JSON header (the N bytes after the length) of `file`: every
/// tensor's dtype, shape and data_offsets are checked (the offsets' span
/// equals dtype size x shape, tensors neither overlap nor leave holes), and
/// when `data_size` is given no tensor ends past it. Throws Error
/// "<file>: safetensors header: <what is wrong>".
SafetensorsHeader ParseSafetensorsHeader(std::string_view json, const std::string& file,
                                         std::optional<uint64_t> data_size);

/// Reads the header of a `.safetensors` file (checked against the file's
/// data) or of a `.safetensors.header` piece: the length, then the JSON.
/// Throws Error naming the file.
SafetensorsHeader ReadSafetensorsHeader(const std::string& path);

/// The weight bytes of the checkpoint in `folder` (a checkpoint folder or a
/// Hugging Face snapshot folder): model.safetensors.index.json's
/// metadata.total_size when present, else the sum of the headers of the
/// shards the index names (or of every *.safetensors file without an index),
/// each read from the shard or its `.safetensors.header` piece. nullopt when
/// the folder holds no safetensors metadata or a named shard is absent.
/// Throws Error for a file that is present and malformed.
std::optional<CheckpointBytes> ReadCheckpointBytes(const std::string& folder);

}  // namespace kvplan
