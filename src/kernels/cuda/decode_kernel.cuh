// Flash-decoding on CUDA: one decode step of decode.h, split along the
// sequence across thread blocks, merged by log-sum-exp.
//
// Grid (split, kv_head x group_chunk, batch); 128 threads. A block streams
// the tokens [split x chunk, min(len, (split+1) x chunk)) of ONE KV head and
// scores them against up to 8 query heads of that head's GQA group at once,
// so every cache byte is read from DRAM once per step:
//
//  * copy: 16-byte cp.async.cg (128-bit, L1 bypassed) from global into a
//    4-stage shared-memory ring of tiles (K tile, V tile, per-row scales);
//    TileTokens = 4096 / head_dim rows, e.g. 32 x 256 B per tensor for fp16 x
//    128. Consecutive threads copy consecutive 16 B of a row: coalesced.
//    Rows past the split end are zero-filled without being read.
//  * compute: head_dim / 8 consecutive lanes share a row, each owning 8
//    elements; q for the block's heads sits in registers (8 per head), pre-
//    multiplied by softmax_scale x log2(e) so exp2 is the softmax's exp.
//    Each thread scores 4 rows per tile (a xor-shuffle tree sums the 8-element
//    partial dots across the row's lanes), updates its own online softmax
//    (running max m, sum l, output o of its 8 elements) once per tile.
//  * end of block: the row groups' (m, l, o) are merged in shared memory
//    (reusing the ring), then written either as the final output (one split)
//    or as a normalised partial o and its log2-sum-exp for MergeSplitsKernel.
//
// Scaled dtypes (fp8): score = k_scale[row] x dot(q, k), and the row's p is
// multiplied by v_scale[row] before weighting v (l sums the unscaled p).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/decode_plan.h"

namespace kvplan::kernels::cuda {

// Cache element formats: how 8 consecutive elements in shared memory widen
// to float. Conversions are exact (fp16/bf16/fp8 all fit in float).
struct Fp16Elems {
  static constexpr int kBytes = 2;
  static constexpr bool kScaled = false;
  __device__ static void Load8(const unsigned char* p, float (&f)[8]) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 x = __half22float2(h[i]);
      f[2 * i] = x.x;
      f[2 * i + 1] = x.y;
    }
  }
};

struct Bf16Elems {
  static constexpr int kBytes = 2;
  static constexpr bool kScaled = false;
  __device__ static void Load8(const unsigned char* p, float (&f)[8]) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 x = __bfloat1622float2(h[i]);
      f[2 * i] = x.x;
      f[2 * i + 1] = x.y;
    }
  }
};

struct Fp8E4M3Elems {
  static constexpr int kBytes = 1;
  static constexpr bool kScaled = true;
  __device__ static void Load8(const unsigned char* p, float (&f)[8]) {
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    const uint32_t words[2] = {raw.x, raw.y};
#pragma unroll
    for (int w = 0; w < 2; ++w) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        // Low byte first: element 2i is the low byte of the pair.
        const auto pair = static_cast<__nv_fp8x2_storage_t>(words[w] >> (16 * half));
        const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3);
        const float2 x = __half22float2(__half2(h));
        f[4 * w + 2 * half] = x.x;
        f[4 * w + 2 * half + 1] = x.y;
      }
    }
  }
};

__device__ __forceinline__ float FastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));  // ex2(-inf) = +0
  return y;
}

// 16-byte global -> shared copy; src_bytes 0 zero-fills without reading.
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, bool valid) {
  const auto dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void CpAsync4(void* smem, const void* gmem, bool valid) {
  const auto dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void CpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

template <typename Elems, int kHeadDim, int kGp>
__global__ void __launch_bounds__(kDecodeThreads) DecodeSplitKernel(const DeviceDecodeArgs a) {
  constexpr int kTpr = ThreadsPerRow(kHeadDim);  // lanes per row
  constexpr int kGroups = RowGroups(kHeadDim);   // rows side by side
  constexpr int kTile = TileTokens(kHeadDim);    // rows per tile
  constexpr int kRowBytes = kHeadDim * Elems::kBytes;
  constexpr int kVecPerRow = kRowBytes / 16;
  constexpr int kVecPerThread = kTile * kVecPerRow / kDecodeThreads;
  constexpr int kTileBytes = kTile * kRowBytes;
  constexpr int kStageBytes = static_cast<int>(StageBytes(kHeadDim, Elems::kBytes, Elems::kScaled));
  constexpr float kLog2e = 1.4426950408889634f;
  static_assert(kTpr <= 32 && 32 % kTpr == 0, "a row's lanes must sit inside one warp");
  static_assert(kRowBytes % 16 == 0 && (kTile * kVecPerRow) % kDecodeThreads == 0);
  static_assert(2 * kTile <= kDecodeThreads, "one thread per scale row");

  extern __shared__ __align__(16) unsigned char smem[];

  const int split = blockIdx.x;
  const int group = a.q_heads / a.kv_heads;
  const int group_chunks = (group + kGp - 1) / kGp;
  const int kvh = blockIdx.y / group_chunks;
  const int g_first = (blockIdx.y % group_chunks) * kGp;  // within the group
  const int g_count = min(kGp, group - g_first);
  const int b = blockIdx.z;
  const int len = a.seq_lens[b];
  const int start = split * a.chunk_tokens;
  // Block-uniform exit before any barrier. Split 0 of an empty sequence
  // still runs to write its zero output.
  if (start >= len && !(len == 0 && split == 0)) return;
  const int end = min(len, start + a.chunk_tokens);
  const int num_tiles = (end - start + kTile - 1) / kTile;

  const int tid = threadIdx.x;
  const int rg = tid / kTpr;                      // this thread's row group
  const int e0 = (tid % kTpr) * kElemsPerThread;  // its first element
  const int qh0 = kvh * group + g_first;          // first query head served

  float q[kGp][kElemsPerThread];
  const float q_mul = a.softmax_scale * kLog2e;
#pragma unroll
  for (int g = 0; g < kGp; ++g) {
    if (g < g_count) {
      const float4* src =
          reinterpret_cast<const float4*>(a.q + (int64_t{b} * a.q_heads + qh0 + g) * kHeadDim + e0);
      const float4 lo = src[0];
      const float4 hi = src[1];
      q[g][0] = lo.x * q_mul;
      q[g][1] = lo.y * q_mul;
      q[g][2] = lo.z * q_mul;
      q[g][3] = lo.w * q_mul;
      q[g][4] = hi.x * q_mul;
      q[g][5] = hi.y * q_mul;
      q[g][6] = hi.z * q_mul;
      q[g][7] = hi.w * q_mul;
    } else {
#pragma unroll
      for (int j = 0; j < kElemsPerThread; ++j) q[g][j] = 0.f;  // padding head: never written
    }
  }

  const unsigned char* k_base = static_cast<const unsigned char*>(a.k);
  const unsigned char* v_base = static_cast<const unsigned char*>(a.v);

  // Starts the copy of tile `tile` into ring slot `stage`.
  auto issue = [&](int tile, int stage) {
    unsigned char* ks = smem + stage * kStageBytes;
    unsigned char* vs = ks + kTileBytes;
    const int t0 = start + tile * kTile;
#pragma unroll
    for (int j = 0; j < kVecPerThread; ++j) {
      const int vec = tid + j * kDecodeThreads;
      const int row = vec / kVecPerRow;
      const int col = vec % kVecPerRow;
      const int t = t0 + row;
      const bool valid = t < end;
      const int64_t byte = valid ? KvRowIndex(a.layout, b, kvh, t) * kRowBytes + col * 16 : 0;
      CpAsync16(ks + row * kRowBytes + col * 16, k_base + byte, valid);
      CpAsync16(vs + row * kRowBytes + col * 16, v_base + byte, valid);
    }
    if constexpr (Elems::kScaled) {
      float* scales = reinterpret_cast<float*>(vs + kTileBytes);  // [2][kTile]: k then v
      if (tid < 2 * kTile) {
        const int row = tid % kTile;
        const int t = t0 + row;
        const bool valid = t < end;
        const int64_t idx = valid ? KvRowIndex(a.layout, b, kvh, t) : 0;
        const float* src = (tid < kTile ? a.k_scale : a.v_scale) + idx;
        CpAsync4(scales + tid, src, valid);
      }
    }
  };

  float m[kGp];
  float l[kGp];
  float o[kGp][kElemsPerThread];
#pragma unroll
  for (int g = 0; g < kGp; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int j = 0; j < kElemsPerThread; ++j) o[g][j] = 0.f;
  }

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_tiles) issue(s, s);
    CpAsyncCommit();  // empty groups keep the wait count uniform
  }

  for (int tile = 0; tile < num_tiles; ++tile) {
    // Groups committed so far: kStages - 1 + tile; at most kStages - 2 may
    // still be pending, so this tile's group has landed (for this thread).
    CpAsyncWait<kStages - 2>();
    // ... and for every thread; also, all threads are done with tile - 1,
    // whose slot the next issue overwrites.
    __syncthreads();
    if (tile + kStages - 1 < num_tiles) issue(tile + kStages - 1, (tile + kStages - 1) % kStages);
    CpAsyncCommit();

    const unsigned char* ks = smem + (tile % kStages) * kStageBytes;
    const unsigned char* vs = ks + kTileBytes;
    const float* scales = reinterpret_cast<const float*>(vs + kTileBytes);
    const int t0 = start + tile * kTile;

    float s[kRowsPerThread][kGp];
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int row = r * kGroups + rg;
      float kf[kElemsPerThread];
      Elems::Load8(ks + row * kRowBytes + e0 * Elems::kBytes, kf);
#pragma unroll
      for (int g = 0; g < kGp; ++g) {
        float acc = 0.f;
#pragma unroll
        for (int j = 0; j < kElemsPerThread; ++j) acc = fmaf(q[g][j], kf[j], acc);
        s[r][g] = acc;
      }
    }
    // Sum the partial dots over the row's kTpr lanes (aligned, contiguous
    // lanes, so xor offsets below kTpr stay inside the row group).
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
#pragma unroll
      for (int g = 0; g < kGp; ++g) {
#pragma unroll
        for (int off = kTpr / 2; off >= 1; off /= 2) {
          s[r][g] += __shfl_xor_sync(0xffffffffu, s[r][g], off);
        }
      }
    }
    float p_scale[kRowsPerThread];  // v_scale of each row (1 when unscaled)
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int row = r * kGroups + rg;
      const bool valid = t0 + row < end;
      float k_mul = 1.f;
      p_scale[r] = 1.f;
      if constexpr (Elems::kScaled) {
        k_mul = scales[row];
        p_scale[r] = scales[kTile + row];
      }
#pragma unroll
      for (int g = 0; g < kGp; ++g) s[r][g] = valid ? s[r][g] * k_mul : -INFINITY;
    }
    // Online softmax, one rescale per tile.
#pragma unroll
    for (int g = 0; g < kGp; ++g) {
      float tile_max = s[0][g];
#pragma unroll
      for (int r = 1; r < kRowsPerThread; ++r) tile_max = fmaxf(tile_max, s[r][g]);
      const float m_new = fmaxf(m[g], tile_max);
      const float m_use = m_new == -INFINITY ? 0.f : m_new;  // no valid row yet: keep zeros
      const float rescale = FastExp2(m[g] - m_use);
      l[g] *= rescale;
#pragma unroll
      for (int j = 0; j < kElemsPerThread; ++j) o[g][j] *= rescale;
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
        const float p = FastExp2(s[r][g] - m_use);
        l[g] += p;
        s[r][g] = p * p_scale[r];
      }
      m[g] = m_new;
    }
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int row = r * kGroups + rg;
      float vf[kElemsPerThread];
      Elems::Load8(vs + row * kRowBytes + e0 * Elems::kBytes, vf);
#pragma unroll
      for (int g = 0; g < kGp; ++g) {
#pragma unroll
        for (int j = 0; j < kElemsPerThread; ++j) o[g][j] = fmaf(s[r][g], vf[j], o[g][j]);
      }
    }
  }

  // Merge the kGroups row groups' states; the ring is free once every
  // thread's copies (only empty groups by now) and reads are done.
  CpAsyncWait<0>();
  __syncthreads();
  float* sm_o = reinterpret_cast<float*>(smem);   // [kGroups][kGp][kHeadDim]
  float* sm_m = sm_o + kGroups * kGp * kHeadDim;  // [kGroups][kGp]
  float* sm_l = sm_m + kGroups * kGp;             // [kGroups][kGp]
  if (e0 == 0) {
#pragma unroll
    for (int g = 0; g < kGp; ++g) {
      sm_m[rg * kGp + g] = m[g];
      sm_l[rg * kGp + g] = l[g];
    }
  }
  __syncthreads();
#pragma unroll
  for (int g = 0; g < kGp; ++g) {
    float block_max = -INFINITY;
    for (int r = 0; r < kGroups; ++r) block_max = fmaxf(block_max, sm_m[r * kGp + g]);
    const float f = FastExp2(m[g] - (block_max == -INFINITY ? 0.f : block_max));
    float* dst = sm_o + (rg * kGp + g) * kHeadDim + e0;
#pragma unroll
    for (int j = 0; j < kElemsPerThread; ++j) dst[j] = o[g][j] * f;
  }
  __syncthreads();
  const bool single = a.max_splits == 1;
  for (int idx = tid; idx < kGp * kHeadDim; idx += kDecodeThreads) {
    const int g = idx / kHeadDim;
    const int i = idx % kHeadDim;
    if (g >= g_count) continue;
    float block_max = -INFINITY;
    for (int r = 0; r < kGroups; ++r) block_max = fmaxf(block_max, sm_m[r * kGp + g]);
    const float m_use = block_max == -INFINITY ? 0.f : block_max;
    float sum_l = 0.f;
    float acc = 0.f;
    for (int r = 0; r < kGroups; ++r) {
      sum_l += sm_l[r * kGp + g] * FastExp2(sm_m[r * kGp + g] - m_use);
      acc += sm_o[(r * kGp + g) * kHeadDim + i];
    }
    const float value = sum_l > 0.f ? acc / sum_l : 0.f;
    const int64_t head = int64_t{b} * a.q_heads + qh0 + g;
    if (single) {
      a.out[head * kHeadDim + i] = value;
    } else {
      a.partial_o[(head * a.max_splits + split) * kHeadDim + i] = value;
      if (i == 0) {
        a.partial_lse[head * a.max_splits + split] =
            sum_l > 0.f ? m_use + __log2f(sum_l) : -INFINITY;
      }
    }
  }
}

}  // namespace kvplan::kernels::cuda

namespace kvplan::kernels::cuda {

template <typename Elems, int kHeadDim>
DecodeKernelFn SelectForGroup(int gp) {
  switch (gp) {
    case 1:
      return &DecodeSplitKernel<Elems, kHeadDim, 1>;
    case 2:
      return &DecodeSplitKernel<Elems, kHeadDim, 2>;
    case 4:
      return &DecodeSplitKernel<Elems, kHeadDim, 4>;
    case 8:
      return &DecodeSplitKernel<Elems, kHeadDim, 8>;
    default:
      return nullptr;
  }
}

/// The instantiation for (head_dim, heads per block), or null when none is compiled.
template <typename Elems>
DecodeKernelFn SelectDecodeKernel(int head_dim, int gp) {
  switch (head_dim) {
    case 64:
      return SelectForGroup<Elems, 64>(gp);
    case 128:
      return SelectForGroup<Elems, 128>(gp);
    case 256:
      return SelectForGroup<Elems, 256>(gp);
    default:
      return nullptr;
  }
}

}  // namespace kvplan::kernels::cuda
