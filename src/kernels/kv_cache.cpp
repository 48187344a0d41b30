#include "kernels/kv_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>

#include "kernels/fp_convert.h"
#include "util/checked.h"
#include "util/error.h"

namespace kvplan::kernels {

namespace {

constexpr uint64_t kHugePage = 2ull << 20;

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Fills one head vector with random valid encodings of dtype (see FillRandom).
void RandomRow(void* dst, int64_t d, KvDtype dtype, uint64_t seed, float* scale) {
  uint64_t state = seed;
  uint64_t r = 0;
  for (int64_t i = 0; i < d; ++i) {
    if (i % 2 == 0) r = SplitMix64(state);
    const uint32_t x = static_cast<uint32_t>(r >> (i % 2 == 0 ? 0 : 32));
    const uint32_t expo = (x >> 16) % 3;  // three binades: [0.25, 2)
    switch (dtype) {
      case KvDtype::kFp32:
        static_cast<uint32_t*>(dst)[i] =
            (x & 0x8000FFFFu) | ((x & 0x7Fu) << 16) | ((125 + expo) << 23);
        break;
      case KvDtype::kFp16:
        static_cast<uint16_t*>(dst)[i] = static_cast<uint16_t>((x & 0x83FFu) | ((13 + expo) << 10));
        break;
      case KvDtype::kBf16:
        static_cast<uint16_t*>(dst)[i] = static_cast<uint16_t>((x & 0x807Fu) | ((125 + expo) << 7));
        break;
      case KvDtype::kInt8:
        static_cast<int8_t*>(dst)[i] = static_cast<int8_t>(static_cast<int>(x % 255) - 127);
        break;
      case KvDtype::kFp8E4M3: {
        uint8_t b = static_cast<uint8_t>(x);
        if ((b & 0x7F) == 0x7F) b ^= 1;  // never NaN
        static_cast<uint8_t*>(dst)[i] = b;
        break;
      }
    }
  }
  if (HasScales(dtype)) {
    const float top = dtype == KvDtype::kInt8 ? 127.0f : kFp8E4M3Max;
    *scale = (0.5f + 1.5f * static_cast<float>(SplitMix64(state) >> 40) / 16777216.0f) / top;
  }
}

}  // namespace

AlignedBuffer::AlignedBuffer(uint64_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const uint64_t align = bytes >= kHugePage ? kHugePage : 64;
  const uint64_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  std::memset(p, 0, rounded);
  data_.reset(p);
}

void AlignedBuffer::Free::operator()(void* p) const {
  std::free(p);
}

KvCache KvCache::Contiguous(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t capacity,
                            KvDtype dtype) {
  if (batch < 1 || kv_heads < 1 || head_dim < 1 || capacity < 1) {
    Fail("kv cache: batch {}, kv_heads {}, head_dim {}, capacity {} must all be >= 1", batch,
         kv_heads, head_dim, capacity);
  }
  KvCache c;
  c.dtype_ = dtype;
  c.kind_ = KvLayoutKind::kContiguous;
  c.batch_ = batch;
  c.kv_heads_ = kv_heads;
  c.head_dim_ = head_dim;
  c.capacity_ = capacity;
  c.lengths_.assign(static_cast<size_t>(batch), 0);
  c.Allocate(batch, capacity);
  return c;
}

KvCache KvCache::Paged(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t block_tokens,
                       int64_t num_blocks, int64_t max_tokens, KvDtype dtype,
                       uint64_t shuffle_seed) {
  if (batch < 1 || kv_heads < 1 || head_dim < 1 || block_tokens < 1 || num_blocks < 1 ||
      max_tokens < 1 || num_blocks > INT32_MAX) {
    Fail(
        "kv cache: batch {}, kv_heads {}, head_dim {}, block_tokens {}, num_blocks {}, max_tokens "
        "{} must all be >= 1 (num_blocks < 2^31)",
        batch, kv_heads, head_dim, block_tokens, num_blocks, max_tokens);
  }
  KvCache c;
  c.dtype_ = dtype;
  c.kind_ = KvLayoutKind::kPaged;
  c.batch_ = batch;
  c.kv_heads_ = kv_heads;
  c.head_dim_ = head_dim;
  c.block_tokens_ = block_tokens;
  c.max_blocks_ = (max_tokens + block_tokens - 1) / block_tokens;
  c.lengths_.assign(static_cast<size_t>(batch), 0);
  c.block_table_.assign(static_cast<size_t>(batch * c.max_blocks_), -1);
  for (int64_t i = num_blocks - 1; i >= 0; --i) c.free_blocks_.push_back(static_cast<int32_t>(i));
  if (shuffle_seed != 0) {
    std::mt19937_64 rng(shuffle_seed);
    std::shuffle(c.free_blocks_.begin(), c.free_blocks_.end(), rng);
  }
  c.Allocate(num_blocks, block_tokens);
  return c;
}

void KvCache::Allocate(int64_t blocks, int64_t block_tokens) {
  const uint64_t rows =
      CheckedMul(CheckedMul(static_cast<uint64_t>(blocks), static_cast<uint64_t>(kv_heads_)),
                 static_cast<uint64_t>(block_tokens));
  const uint64_t bytes =
      CheckedMul(CheckedMul(rows, static_cast<uint64_t>(head_dim_)), ElementBytes(dtype_));
  k_ = AlignedBuffer(bytes);
  v_ = AlignedBuffer(bytes);
  if (HasScales(dtype_)) {
    k_scale_ = AlignedBuffer(CheckedMul(rows, sizeof(float)));
    v_scale_ = AlignedBuffer(CheckedMul(rows, sizeof(float)));
  }
}

void KvCache::ReserveToken(int64_t b, int64_t t) {
  if (kind_ == KvLayoutKind::kContiguous) {
    if (t >= capacity_) Fail("kv cache: sequence {} is full ({} tokens)", b, capacity_);
    return;
  }
  const int64_t j = t / block_tokens_;
  if (j >= max_blocks_)
    Fail("kv cache: sequence {} is full ({} tokens)", b, max_blocks_ * block_tokens_);
  int32_t& slot = block_table_[static_cast<size_t>(b * max_blocks_ + j)];
  if (slot >= 0) return;
  if (free_blocks_.empty()) Fail("kv cache: no free block left for sequence {}", b);
  slot = free_blocks_.back();
  free_blocks_.pop_back();
}

void KvCache::Append(int64_t b, const float* k, const float* v) {
  if (b < 0 || b >= batch_) Fail("kv cache: sequence {} is outside 0..{}", b, batch_ - 1);
  const int64_t t = lengths_[static_cast<size_t>(b)];
  ReserveToken(b, t);
  const KvCacheView view = View();
  const uint64_t esize = ElementBytes(dtype_);
  for (int64_t h = 0; h < kv_heads_; ++h) {
    const int64_t row = view.layout.Row(b, h, t, kv_heads_);
    auto* kd =
        static_cast<unsigned char*>(k_.data()) + static_cast<uint64_t>(row * head_dim_) * esize;
    auto* vd =
        static_cast<unsigned char*>(v_.data()) + static_cast<uint64_t>(row * head_dim_) * esize;
    float* ks = HasScales(dtype_) ? static_cast<float*>(k_scale_.data()) + row : nullptr;
    float* vs = HasScales(dtype_) ? static_cast<float*>(v_scale_.data()) + row : nullptr;
    QuantizeRow(k + h * head_dim_, head_dim_, dtype_, kd, ks);
    QuantizeRow(v + h * head_dim_, head_dim_, dtype_, vd, vs);
  }
  ++lengths_[static_cast<size_t>(b)];
}

void KvCache::FillRandom(const std::vector<int64_t>& lengths, uint64_t seed) {
  if (static_cast<int64_t>(lengths.size()) != batch_) {
    Fail("kv cache: {} lengths for a batch of {}", lengths.size(), batch_);
  }
  for (int64_t b = 0; b < batch_; ++b) {
    const int64_t n = lengths[static_cast<size_t>(b)];
    if (n < lengths_[static_cast<size_t>(b)])
      Fail("kv cache: FillRandom cannot shrink sequence {}", b);
    if (n > 0) {
      for (int64_t t = lengths_[static_cast<size_t>(b)]; t < n;
           t += (kind_ == KvLayoutKind::kPaged ? block_tokens_ : n)) {
        ReserveToken(b, t);
      }
      ReserveToken(b, n - 1);
    }
  }
  const KvCacheView view = View();
  const uint64_t esize = ElementBytes(dtype_);
  auto* kbase = static_cast<unsigned char*>(k_.data());
  auto* vbase = static_cast<unsigned char*>(v_.data());
  auto* ksc = static_cast<float*>(k_scale_.data());
  auto* vsc = static_cast<float*>(v_scale_.data());
  for (int64_t b = 0; b < batch_; ++b) {
    const int64_t t0 = lengths_[static_cast<size_t>(b)];
    const int64_t n = lengths[static_cast<size_t>(b)];
    for (int64_t h = 0; h < kv_heads_; ++h) {
#pragma omp parallel for schedule(static)
      for (int64_t t = t0; t < n; ++t) {
        const int64_t row = view.layout.Row(b, h, t, kv_heads_);
        const uint64_t key =
            ((seed * 1000003u + static_cast<uint64_t>(b)) * 1000033u + static_cast<uint64_t>(h)) *
                0x100000001B3ull +
            static_cast<uint64_t>(t);
        const uint64_t off = static_cast<uint64_t>(row * head_dim_) * esize;
        RandomRow(kbase + off, head_dim_, dtype_, key * 2 + 1, ksc ? ksc + row : nullptr);
        RandomRow(vbase + off, head_dim_, dtype_, key * 2 + 2, vsc ? vsc + row : nullptr);
      }
    }
    lengths_[static_cast<size_t>(b)] = n;
  }
}

KvCacheView KvCache::View() const {
  KvCacheView v;
  v.dtype = dtype_;
  v.layout.kind = kind_;
  v.layout.capacity = capacity_;
  v.layout.block_tokens = block_tokens_;
  v.layout.block_table = block_table_.empty() ? nullptr : block_table_.data();
  v.layout.max_blocks_per_seq = max_blocks_;
  v.k = k_.data();
  v.v = v_.data();
  v.k_scale = static_cast<const float*>(k_scale_.data());
  v.v_scale = static_cast<const float*>(v_scale_.data());
  return v;
}

uint64_t KvCache::AllocatedBytes() const {
  return k_.size() + v_.size() + k_scale_.size() + v_scale_.size();
}

}  // namespace kvplan::kernels
