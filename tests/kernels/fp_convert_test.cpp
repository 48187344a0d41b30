// fp16 / bf16 / fp8 e4m3 / int8 conversions: exhaustive over every encoding,
// and float -> format checked against a brute-force nearest-value search.
#include "kernels/fp_convert.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/decode.h"
#include "kernels/kv_cache.h"
#include "kernels/reference.h"

using namespace kvplan::kernels;

TEST_CASE("fp16: every encoding round-trips; rounding is nearest-even") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      CHECK(std::isnan(HalfToFloat(FloatToHalf(f))));
      continue;
    }
    REQUIRE(FloatToHalf(f) == h);
  }
  CHECK(HalfToFloat(0x3C00) == 1.0f);
  CHECK(HalfToFloat(0x0001) == std::ldexp(1.0f, -24));
  CHECK(HalfToFloat(0x7BFF) == 65504.0f);
  CHECK(FloatToHalf(65519.0f) == 0x7BFF);
  CHECK(FloatToHalf(65520.0f) == 0x7C00);                          // halfway to 65536 rounds to inf
  CHECK(FloatToHalf(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);      // tie -> even
  CHECK(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // tie -> even (up)
  CHECK(FloatToHalf(std::ldexp(1.0f, -25)) == 0x0000);             // tie -> zero
  CHECK(FloatToHalf(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(FloatToHalf(std::ldexp(3.0f, -25)) == 0x0002);  // 1.5 units: tie -> 2
  // Midpoints between every pair of neighbouring halves round to the even one.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const double a = HalfToFloat(static_cast<uint16_t>(h));
    const double b = HalfToFloat(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((a + b) / 2);
    REQUIRE(FloatToHalf(mid) == ((h & 1) ? h + 1 : h));
    REQUIRE(FloatToHalf(-mid) == (0x8000 | ((h & 1) ? h + 1 : h)));
  }
}

TEST_CASE("bf16: round-trip and nearest-even") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Bf16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(FloatToBf16(f) == h);
  }
  CHECK(FloatToBf16(1.0f) == 0x3F80);
  CHECK(FloatToBf16(BitsFloat(0x3F808000u)) == 0x3F80);  // tie -> even
  CHECK(FloatToBf16(BitsFloat(0x3F818000u)) == 0x3F82);  // tie -> even (up)
  CHECK(FloatToBf16(BitsFloat(0x3F808001u)) == 0x3F81);
  CHECK(std::isnan(Bf16ToFloat(FloatToBf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("fp8 e4m3: every encoding, saturation, nearest-even against brute force") {
  CHECK(Fp8E4M3ToFloat(0x7E) == 448.0f);
  CHECK(Fp8E4M3ToFloat(0x01) == std::ldexp(1.0f, -9));
  CHECK(Fp8E4M3ToFloat(0x08) == std::ldexp(1.0f, -6));
  CHECK(Fp8E4M3ToFloat(0x38) == 1.0f);
  CHECK(std::isnan(Fp8E4M3ToFloat(0x7F)));
  CHECK(std::isnan(Fp8E4M3ToFloat(0xFF)));
  CHECK(FloatToFp8E4M3(1000.0f) == 0x7E);
  CHECK(FloatToFp8E4M3(-1e30f) == 0xFE);
  for (uint32_t c = 0; c < 256; ++c) {
    const float f = Fp8E4M3ToFloat(static_cast<uint8_t>(c));
    if (std::isnan(f)) continue;
    REQUIRE(FloatToFp8E4M3(f) == c);
  }
  // Every midpoint between neighbouring positive codes goes to the even code.
  for (uint32_t c = 0; c < 0x7E; ++c) {
    const double a = Fp8E4M3ToFloat(static_cast<uint8_t>(c));
    const double b = Fp8E4M3ToFloat(static_cast<uint8_t>(c + 1));
    const float mid = static_cast<float>((a + b) / 2);
    REQUIRE(FloatToFp8E4M3(mid) == ((c & 1) ? c + 1 : c));
    // Just off the midpoint goes to the nearer code.
    REQUIRE(FloatToFp8E4M3(std::nextafter(mid, 0.0f)) == c);
    REQUIRE(FloatToFp8E4M3(std::nextafter(mid, 1e9f)) == c + 1);
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-500.0f, 500.0f);
  for (int i = 0; i < 2000; ++i) {
    const float f = u(rng) * (i % 2 ? 1.0f : 0.001f);
    const uint8_t got = FloatToFp8E4M3(f);
    const double err = std::fabs(Fp8E4M3ToFloat(got) - static_cast<double>(f));
    for (uint32_t c = 0; c < 256; ++c) {
      const float v = Fp8E4M3ToFloat(static_cast<uint8_t>(c));
      if (std::isnan(v)) continue;
      if (std::fabs(f) <= 448.0f) REQUIRE(err <= std::fabs(v - static_cast<double>(f)));
    }
  }
}

TEST_CASE("int8 rounds to nearest even and clamps to +-127") {
  CHECK(FloatToInt8(2.5f) == 2);
  CHECK(FloatToInt8(3.5f) == 4);
  CHECK(FloatToInt8(-2.5f) == -2);
  CHECK(FloatToInt8(126.6f) == 127);
  CHECK(FloatToInt8(300.0f) == 127);
  CHECK(FloatToInt8(-300.0f) == -127);
}

TEST_CASE("QuantizeRow: per-token-head scale and dequantized error bound") {
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 1.5f);
  for (KvDtype t :
       {KvDtype::kFp32, KvDtype::kFp16, KvDtype::kBf16, KvDtype::kInt8, KvDtype::kFp8E4M3}) {
    CAPTURE(KvDtypeName(t));
    std::vector<float> x(96);
    for (float& v : x) v = n(rng);
    std::vector<unsigned char> row(96 * ElementBytes(t));
    float scale = -1;
    QuantizeRow(x.data(), 96, t, row.data(), &scale);
    float amax = 0;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    if (HasScales(t)) {
      CHECK(scale == amax / (t == KvDtype::kInt8 ? 127.0f : 448.0f));
    } else {
      CHECK(scale == -1);  // untouched
    }
    const double s = HasScales(t) ? scale : 1.0;
    // Half an ulp of the format, relative (floats) or absolute in steps (int8).
    const double rel = t == KvDtype::kFp32      ? 0
                       : t == KvDtype::kFp16    ? 1.0 / 2048
                       : t == KvDtype::kBf16    ? 1.0 / 256
                       : t == KvDtype::kFp8E4M3 ? 1.0 / 16
                                                : 0;
    for (int i = 0; i < 96; ++i) {
      const double back = s * DecodeElement(row.data(), i, t);
      const double bound = t == KvDtype::kInt8
                               ? s * 0.5 * 1.0001
                               : rel * std::fabs(x[i]) * 1.0001 +
                                     (t == KvDtype::kFp8E4M3 ? s * std::ldexp(1.0, -10) : 0);
      REQUIRE(std::fabs(back - x[i]) <= bound);
    }
  }
  float zeros[8] = {};
  int8_t q[8];
  float scale = 0;
  QuantizeRow(zeros, 8, KvDtype::kInt8, q, &scale);
  CHECK(scale == 1.0f);
}
