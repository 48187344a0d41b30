// The bf16 instantiations of the decode kernel (one file per cache dtype so
// nvcc compiles them in parallel).
#include "kernels/cuda/decode_kernel.cuh"
#include "kernels/cuda/decode_select.h"

namespace kvplan::kernels::cuda {

DecodeKernelFn DecodeKernelBf16(int head_dim, int gp) {
  return SelectDecodeKernel<Bf16Elems>(head_dim, gp);
}

}  // namespace kvplan::kernels::cuda
