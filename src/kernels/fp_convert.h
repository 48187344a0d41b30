// Exact, portable conversions between float and the 16- and 8-bit cache
// formats, and the per-token-head quantizer for int8 / fp8 caches.
//
// Integer-only (no dependence on the FPU rounding mode, flush-to-zero or
// F16C), round-to-nearest-even, usable from host and CUDA device code. The
// kernels' SIMD paths must agree bit for bit with the *ToFloat functions
// (widening is exact); the tests check all 65,536 / 256 encodings.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/decode.h"

namespace kvplan::kernels {

KVPLAN_HD inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

KVPLAN_HD inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Rounds m >> shift to nearest, ties to even (1 <= shift <= 31).
KVPLAN_HD inline uint32_t ShiftRoundEven(uint32_t m, uint32_t shift) {
  const uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
}

/// IEEE binary16 bits nearest to f (ties to even); overflow gives +-inf, NaN a quiet NaN.
KVPLAN_HD inline uint16_t FloatToHalf(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);
  if (ax >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 -> inf
  const uint32_t e = ax >> 23;
  if (e >= 113) {  // normal half: 2^-14 and up; rebias 127 -> 15, round 13 bits
    const uint32_t r = ax - (112u << 23);
    return static_cast<uint16_t>(sign | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13));
  }
  if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25: rounds to zero
  const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;  // value = m * 2^(e-150); unit 2^-24
  return static_cast<uint16_t>(sign | ShiftRoundEven(m, 126 - e));
}

/// The float an IEEE binary16 encodes (exact).
KVPLAN_HD inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  if (e == 0x1F) return BitsFloat(sign | 0x7F800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return BitsFloat(sign);
    e = 113;  // subnormal: normalise the mantissa
    while ((m & 0x400u) == 0) {
      m <<= 1;
      --e;
    }
    return BitsFloat(sign | (e << 23) | ((m & 0x3FFu) << 13));
  }
  return BitsFloat(sign | ((e + 112) << 23) | (m << 13));
}

/// bfloat16 bits nearest to f (ties to even); NaN stays a quiet NaN.
KVPLAN_HD inline uint16_t FloatToBf16(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/// The float a bfloat16 encodes (exact).
KVPLAN_HD inline float Bf16ToFloat(uint16_t b) {
  return BitsFloat(static_cast<uint32_t>(b) << 16);
}

/// Largest finite fp8 e4m3fn value.
inline constexpr float kFp8E4M3Max = 448.0f;

/// fp8 e4m3fn bits nearest to f (ties to even), saturating to +-448; NaN -> 0x7F.
KVPLAN_HD inline uint8_t FloatToFp8E4M3(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t sign = (x >> 24) & 0x80u;
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return static_cast<uint8_t>(sign | 0x7Fu);
  if (ax >= 0x43E00000u) return static_cast<uint8_t>(sign | 0x7Eu);  // >= 448: saturate
  const uint32_t e = ax >> 23;
  if (e >= 121) {  // normal fp8: 2^-6 and up; rebias 127 -> 7, round 20 bits
    const uint32_t r = ax - (120u << 23);
    return static_cast<uint8_t>(sign | ((r + 0x7FFFFu + ((r >> 20) & 1u)) >> 20));
  }
  if (e < 117) return static_cast<uint8_t>(sign);   // below 2^-10: rounds to zero
  const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;  // unit 2^-9
  return static_cast<uint8_t>(sign | ShiftRoundEven(m, 141 - e));
}

/// The float an fp8 e4m3fn byte encodes (exact; 0x7F/0xFF are NaN).
KVPLAN_HD inline float Fp8E4M3ToFloat(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t e = (b >> 3) & 0xFu;
  const uint32_t m = b & 0x7u;
  if (e == 0xF && m == 0x7) return BitsFloat(sign | 0x7FC00000u);
  if (e == 0) return BitsFloat(sign | FloatBits(static_cast<float>(m) * 0.001953125f));  // m * 2^-9
  return BitsFloat(sign | ((e + 120) << 23) | (m << 20));
}

/// int8 nearest to f (ties to even), clamped to [-127, 127].
KVPLAN_HD inline int8_t FloatToInt8(float f) {
  if (!(f == f)) return 0;
  const float c = f > 127.0f ? 127.0f : (f < -127.0f ? -127.0f : f);
  return static_cast<int8_t>(std::nearbyint(c));
}

/// Stores one head vector x[0..d) in `dtype` at dst (d elements) and, for
/// int8/fp8, its scale: max|x| / 127 (int8) or max|x| / 448 (fp8), 1 when x
/// is all zeros. Dequantized element i is then scale * decode(dst[i]).
void QuantizeRow(const float* x, int64_t d, KvDtype dtype, void* dst, float* scale);

/// The float element i of a row stored in `dtype` decodes to, before the
/// per-token-head scale (exact).
float DecodeElement(const void* row, int64_t i, KvDtype dtype);

}  // namespace kvplan::kernels
