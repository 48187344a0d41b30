// Checked 64-bit arithmetic: byte counts are exact, and a result that would
// not fit in 64 bits is an Error, never a wrapped number.
#pragma once

#include <cstdint>
#include <string_view>

#include "util/error.h"

namespace kvplan {

/// a * b, or Error("overflow: <what> ...") when it does not fit in uint64.
inline uint64_t CheckedMul(uint64_t a, uint64_t b, std::string_view what = "byte count") {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    Fail("overflow: {} = {} x {} does not fit in 64 bits", what, a, b);
  }
  return r;
}

/// a + b, or Error on overflow.
inline uint64_t CheckedAdd(uint64_t a, uint64_t b, std::string_view what = "byte count") {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    Fail("overflow: {} = {} + {} does not fit in 64 bits", what, a, b);
  }
  return r;
}

/// ceil(a / b) for b > 0.
constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// a rounded up to a multiple of b (b > 0), with overflow checked.
inline uint64_t RoundUp(uint64_t a, uint64_t b, std::string_view what = "rounded count") {
  return CheckedMul(CeilDiv(a, b), b, what);
}

}  // namespace kvplan
