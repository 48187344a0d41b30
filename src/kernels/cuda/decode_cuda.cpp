#include "kernels/cuda/decode_cuda.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/decode_select.h"
#include "util/error.h"

namespace kvplan::kernels::cuda {

PreparedDecode PrepareDecode(KvDtype dtype, int64_t head_dim, int64_t group) {
  if (!SupportedDtype(dtype)) {
    Fail("the CUDA decode kernel supports fp16, bf16 and fp8 caches, not {}", KvDtypeName(dtype));
  }
  if (!SupportedHeadDim(head_dim)) {
    Fail("the CUDA decode kernel supports head_dim 64, 128 and 256, not {}", head_dim);
  }
  if (group < 1) Fail("the CUDA decode kernel needs a GQA group of at least 1, not {}", group);
  PreparedDecode p;
  p.gp = GroupPerBlock(group);
  p.group_chunks = GroupChunks(group);
  const int d = static_cast<int>(head_dim);
  switch (dtype) {
    case KvDtype::kFp16:
      p.kernel = DecodeKernelFp16(d, p.gp);
      break;
    case KvDtype::kBf16:
      p.kernel = DecodeKernelBf16(d, p.gp);
      break;
    case KvDtype::kFp8E4M3:
      p.kernel = DecodeKernelFp8(d, p.gp);
      break;
    default:
      break;
  }
  if (p.kernel == nullptr)
    Fail("no CUDA decode kernel for head_dim {} and group {}", head_dim, group);
  p.smem_bytes =
      DecodeSharedBytes(d, static_cast<int>(ElementBytes(dtype)), HasScales(dtype), p.gp);
  KVPLAN_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(p.kernel),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(p.smem_bytes)));
  KVPLAN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &p.blocks_per_sm, reinterpret_cast<const void*>(p.kernel), kDecodeThreads,
      static_cast<size_t>(p.smem_bytes)));
  if (p.blocks_per_sm < 1) {
    Fail("the CUDA decode kernel cannot run on this device ({} bytes of shared memory per block)",
         p.smem_bytes);
  }
  int device = 0;
  KVPLAN_CUDA_CHECK(cudaGetDevice(&device));
  KVPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&p.sm_count, cudaDevAttrMultiProcessorCount, device));
  return p;
}

SplitPlan PlanSplits(const PreparedDecode& prepared, const std::vector<int64_t>& seq_lens,
                     int64_t kv_heads) {
  return ChooseSplits(seq_lens, kv_heads * prepared.group_chunks, prepared.sm_count,
                      prepared.blocks_per_sm);
}

void LaunchDecode(const PreparedDecode& prepared, const DeviceDecodeArgs& args, int64_t group,
                  cudaStream_t stream) {
  const int64_t y_blocks = int64_t{args.kv_heads} * GroupChunks(group);
  if (args.max_splits < 1 || y_blocks > 65535 || args.batch > 65535) {
    Fail("CUDA decode grid out of range: {} splits, {} head blocks, batch {}", args.max_splits,
         y_blocks, args.batch);
  }
  KVPLAN_CUDA_CHECK(EnqueueDecode(prepared.kernel, prepared.smem_bytes, args,
                                  static_cast<unsigned>(y_blocks), stream));
}

}  // namespace kvplan::kernels::cuda
