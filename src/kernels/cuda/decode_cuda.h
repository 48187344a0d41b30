// Running the CUDA decode kernel on data already on the device: pick the
// instantiation, configure its shared memory, size the split-KV plan, launch
// the split kernel and, when a sequence has several splits, the merge.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "kernels/cuda/decode_plan.h"
#include "kernels/decode.h"

namespace kvplan::kernels::cuda {

/// A configured kernel instantiation for one (dtype, head_dim, group).
struct PreparedDecode {
  DecodeKernelFn kernel = nullptr;
  int gp = 0;                // query heads per block
  int64_t group_chunks = 0;  // blocks per KV head along its query heads
  int64_t smem_bytes = 0;    // dynamic shared memory per block
  int blocks_per_sm = 0;     // occupancy reported by the runtime
  int sm_count = 0;
};

/// Chooses and configures the kernel on the current device. Throws
/// kvplan::Error for a dtype or head_dim the CUDA kernel is not built for.
PreparedDecode PrepareDecode(KvDtype dtype, int64_t head_dim, int64_t group);

/// The split plan for this kernel on this device (ChooseSplits with the
/// kernel's occupancy).
SplitPlan PlanSplits(const PreparedDecode& prepared, const std::vector<int64_t>& seq_lens,
                     int64_t kv_heads);

/// Launches one decode step on `stream`; args.chunk_tokens and
/// args.max_splits come from the plan, and args.partial_* must hold
/// batch x q_heads x max_splits (x head_dim) floats when max_splits > 1.
/// Every launch is checked.
void LaunchDecode(const PreparedDecode& prepared, const DeviceDecodeArgs& args, int64_t group,
                  cudaStream_t stream);

}  // namespace kvplan::kernels::cuda

namespace kvplan::kernels::cuda {

/// Enqueues a one-thread kernel that spins for `cycles` SM clocks: put
/// before a timed region so the GPU is still busy while the host enqueues
/// it, and the CUDA events time the GPU work, not the launch overhead.
cudaError_t EnqueueSpin(int64_t cycles, cudaStream_t stream);

/// Enqueues the split kernel and, when args.max_splits > 1, the merge
/// kernel; returns the first launch error (decode_launch.cu).
cudaError_t EnqueueDecode(DecodeKernelFn kernel, int64_t smem_bytes, const DeviceDecodeArgs& args,
                          unsigned y_blocks, cudaStream_t stream);

}  // namespace kvplan::kernels::cuda
