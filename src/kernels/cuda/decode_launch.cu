// The split kernel's launch and the log-sum-exp merge kernel. Host logic
// (checks, messages) lives in decode_cuda.cpp: fmt's compile-time format
// checks do not compile under nvcc.
#include <cuda_runtime.h>

#include "kernels/cuda/decode_cuda.h"

namespace kvplan::kernels::cuda {
namespace {

// Combines the splits of one (sequence, query head): with per-split
// normalised outputs o_s and log2-sum-exps lse_s,
//   out = sum_s 2^(lse_s - M) o_s / sum_s 2^(lse_s - M),  M = max_s lse_s,
// which is the softmax over the whole sequence. Grid (q_heads, batch).
__global__ void __launch_bounds__(kMergeThreads)
    MergeSplitsKernel(const float* partial_o, const float* partial_lse, const int32_t* seq_lens,
                      float* out, int q_heads, int head_dim, int chunk_tokens, int max_splits) {
  const int qh = blockIdx.x;
  const int b = blockIdx.y;
  const int splits = (seq_lens[b] + chunk_tokens - 1) / chunk_tokens;
  const int64_t head = int64_t{b} * q_heads + qh;
  const float* lse = partial_lse + head * max_splits;
  float lse_max = -INFINITY;
  for (int s = 0; s < splits; ++s) lse_max = fmaxf(lse_max, lse[s]);
  const float m_use = lse_max == -INFINITY ? 0.f : lse_max;
  float sum = 0.f;
  for (int s = 0; s < splits; ++s) sum += exp2f(lse[s] - m_use);
  for (int i = threadIdx.x; i < head_dim; i += blockDim.x) {
    float acc = 0.f;
    for (int s = 0; s < splits; ++s) {
      acc += exp2f(lse[s] - m_use) * partial_o[(head * max_splits + s) * head_dim + i];
    }
    out[head * head_dim + i] = sum > 0.f ? acc / sum : 0.f;
  }
}

// Keeps one SM busy for `cycles` clocks.
__global__ void SpinKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

cudaError_t EnqueueSpin(int64_t cycles, cudaStream_t stream) {
  SpinKernel<<<1, 1, 0, stream>>>(static_cast<long long>(cycles));
  return cudaGetLastError();
}

cudaError_t EnqueueDecode(DecodeKernelFn kernel, int64_t smem_bytes, const DeviceDecodeArgs& args,
                          unsigned y_blocks, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(args.max_splits), y_blocks,
                  static_cast<unsigned>(args.batch));
  kernel<<<grid, kDecodeThreads, static_cast<size_t>(smem_bytes), stream>>>(args);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess || args.max_splits == 1) return err;
  const dim3 merge_grid(static_cast<unsigned>(args.q_heads), static_cast<unsigned>(args.batch));
  MergeSplitsKernel<<<merge_grid, kMergeThreads, 0, stream>>>(
      args.partial_o, args.partial_lse, args.seq_lens, args.out, args.q_heads, args.head_dim,
      args.chunk_tokens, args.max_splits);
  return cudaGetLastError();
}

}  // namespace kvplan::kernels::cuda
