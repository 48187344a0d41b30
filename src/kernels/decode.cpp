#include "kernels/decode.h"

#include <cmath>

#include "util/checked.h"
#include "util/error.h"

namespace kvplan::kernels {

std::string_view KvDtypeName(KvDtype t) {
  switch (t) {
    case KvDtype::kFp32:
      return "fp32";
    case KvDtype::kFp16:
      return "fp16";
    case KvDtype::kBf16:
      return "bf16";
    case KvDtype::kInt8:
      return "int8";
    case KvDtype::kFp8E4M3:
      return "fp8";
  }
  return "?";
}

KvDtype ParseKvDtype(std::string_view name) {
  if (name == "fp32" || name == "float32") return KvDtype::kFp32;
  if (name == "fp16" || name == "float16" || name == "half") return KvDtype::kFp16;
  if (name == "bf16" || name == "bfloat16") return KvDtype::kBf16;
  if (name == "int8" || name == "int8_pth") return KvDtype::kInt8;
  if (name == "fp8" || name == "fp8_e4m3" || name == "fp8_pth") return KvDtype::kFp8E4M3;
  Fail("unknown kernel cache dtype '{}' (known: fp32, fp16, bf16, int8, fp8)", name);
}

float DecodeArgs::Scale() const {
  return softmax_scale != 0
             ? softmax_scale
             : static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
}

void ValidateDecodeArgs(const DecodeArgs& a) {
  const DecodeShape& s = a.shape;
  if (s.batch < 1 || s.q_heads < 1 || s.kv_heads < 1 || s.head_dim < 1) {
    Fail("decode shape: batch {}, q_heads {}, kv_heads {}, head_dim {} must all be >= 1", s.batch,
         s.q_heads, s.kv_heads, s.head_dim);
  }
  if (s.q_heads % s.kv_heads != 0) {
    Fail("decode shape: kv_heads {} does not divide q_heads {}", s.kv_heads, s.q_heads);
  }
  if (a.seq_lens == nullptr || a.q == nullptr || a.out == nullptr || a.cache.k == nullptr ||
      a.cache.v == nullptr) {
    Fail("decode args: seq_lens, q, out, k and v must all be set");
  }
  if (HasScales(a.cache.dtype) && (a.cache.k_scale == nullptr || a.cache.v_scale == nullptr)) {
    Fail("decode args: a {} cache needs k_scale and v_scale", KvDtypeName(a.cache.dtype));
  }
  const KvLayout& l = a.cache.layout;
  if (l.kind == KvLayoutKind::kContiguous) {
    if (l.capacity < 1) Fail("decode layout: capacity {} must be >= 1", l.capacity);
  } else {
    if (l.block_tokens < 1 || l.block_table == nullptr || l.max_blocks_per_seq < 1) {
      Fail(
          "decode layout: paged needs block_tokens >= 1, a block table and max_blocks_per_seq >= "
          "1");
    }
  }
  const int64_t limit = l.kind == KvLayoutKind::kContiguous
                            ? l.capacity
                            : CheckedMul(static_cast<uint64_t>(l.block_tokens),
                                         static_cast<uint64_t>(l.max_blocks_per_seq));
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t n = a.seq_lens[b];
    if (n < 0 || n > limit) {
      Fail("decode args: seq_lens[{}] = {} is outside 0..{}", b, n, limit);
    }
    if (l.kind == KvLayoutKind::kPaged) {
      for (int64_t j = 0; j * l.block_tokens < n; ++j) {
        if (l.block_table[b * l.max_blocks_per_seq + j] < 0) {
          Fail("decode args: block_table[{}][{}] is negative but holds tokens", b, j);
        }
      }
    }
  }
}

namespace {
uint64_t TotalTokens(const DecodeShape& shape, const int64_t* seq_lens) {
  uint64_t tokens = 0;
  for (int64_t b = 0; b < shape.batch; ++b)
    tokens = CheckedAdd(tokens, static_cast<uint64_t>(seq_lens[b]));
  return tokens;
}
}  // namespace

uint64_t DecodeCacheBytes(const DecodeShape& shape, const int64_t* seq_lens, KvDtype dtype) {
  const uint64_t row = static_cast<uint64_t>(shape.head_dim) * ElementBytes(dtype) +
                       (HasScales(dtype) ? sizeof(float) : 0);
  return CheckedMul(CheckedMul(TotalTokens(shape, seq_lens), static_cast<uint64_t>(shape.kv_heads)),
                    2 * row);
}

uint64_t DecodeFlops(const DecodeShape& shape, const int64_t* seq_lens) {
  return CheckedMul(CheckedMul(TotalTokens(shape, seq_lens), static_cast<uint64_t>(shape.q_heads)),
                    4 * static_cast<uint64_t>(shape.head_dim));
}

}  // namespace kvplan::kernels
