// KV-cache element formats and their real storage cost.
//
// A format is described by how many bytes one head vector of d elements takes,
// because block formats (ggml, NVFP4) and per-vector scales do not reduce to a
// whole number of bytes per element.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

struct CacheDtype {
  std::string name;         // canonical name, e.g. "fp8_e4m3"
  uint64_t block_elems;     // elements per storage block (1 for plain types)
  uint64_t block_bytes;     // bytes per block, scales included
  uint64_t vector_extra;    // bytes added once per head vector (per-token-head scale)
  std::string description;  // what is stored, for --explain and `kvplan dtypes`
  std::string source;       // where the byte count comes from

  /// Bytes one head vector of `d` elements occupies: d/block * block_bytes + extra.
  /// Requires d % block_elems == 0 (checked by ValidateHeadDim).
  uint64_t VectorBytes(uint64_t d) const { return d / block_elems * block_bytes + vector_extra; }

  /// True for formats stored in blocks of several elements.
  bool IsBlock() const { return block_elems > 1; }

  /// Bytes per element when that is a whole number (plain types), else 0.
  uint64_t PlainBytes() const { return block_elems == 1 && vector_extra == 0 ? block_bytes : 0; }
};

/// Every supported cache dtype, in a stable order.
const std::vector<CacheDtype>& AllCacheDtypes();

/// Looks a dtype up by name or alias ("fp16", "half", "fp8" = fp8_e4m3, "auto"
/// is resolved by the caller). Throws Error listing the valid names.
const CacheDtype& FindCacheDtype(std::string_view name);

/// Throws Error when vectors of `d` elements cannot be stored in `dtype`
/// (ggml blocks need d % 32 == 0, NVFP4 d % 16 == 0). `what` names the vector.
void ValidateHeadDim(const CacheDtype& dtype, uint64_t d, std::string_view what);

/// The cache dtype a model's weight dtype implies ("auto" in the engines).
std::string_view AutoCacheDtype(std::string_view weight_dtype);

}  // namespace kvplan
