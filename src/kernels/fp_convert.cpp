#include "kernels/fp_convert.h"

#include <algorithm>
#include <cmath>

namespace kvplan::kernels {

void QuantizeRow(const float* x, int64_t d, KvDtype dtype, void* dst, float* scale) {
  switch (dtype) {
    case KvDtype::kFp32:
      std::memcpy(dst, x, static_cast<size_t>(d) * sizeof(float));
      return;
    case KvDtype::kFp16: {
      auto* o = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < d; ++i) o[i] = FloatToHalf(x[i]);
      return;
    }
    case KvDtype::kBf16: {
      auto* o = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < d; ++i) o[i] = FloatToBf16(x[i]);
      return;
    }
    case KvDtype::kInt8:
    case KvDtype::kFp8E4M3: {
      float amax = 0;
      for (int64_t i = 0; i < d; ++i) amax = std::max(amax, std::fabs(x[i]));
      const float top = dtype == KvDtype::kInt8 ? 127.0f : kFp8E4M3Max;
      const float s = amax > 0 ? amax / top : 1.0f;
      *scale = s;
      if (dtype == KvDtype::kInt8) {
        auto* o = static_cast<int8_t*>(dst);
        for (int64_t i = 0; i < d; ++i) o[i] = FloatToInt8(x[i] / s);
      } else {
        auto* o = static_cast<uint8_t*>(dst);
        for (int64_t i = 0; i < d; ++i) o[i] = FloatToFp8E4M3(x[i] / s);
      }
      return;
    }
  }
}

float DecodeElement(const void* row, int64_t i, KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kFp32:
      return static_cast<const float*>(row)[i];
    case KvDtype::kFp16:
      return HalfToFloat(static_cast<const uint16_t*>(row)[i]);
    case KvDtype::kBf16:
      return Bf16ToFloat(static_cast<const uint16_t*>(row)[i]);
    case KvDtype::kInt8:
      return static_cast<float>(static_cast<const int8_t*>(row)[i]);
    case KvDtype::kFp8E4M3:
      return Fp8E4M3ToFloat(static_cast<const uint8_t*>(row)[i]);
  }
  return 0;
}

}  // namespace kvplan::kernels
