// The fp16 instantiations of the decode kernel (one file per cache dtype so
// nvcc compiles them in parallel).
#include "kernels/cuda/decode_kernel.cuh"
#include "kernels/cuda/decode_select.h"

namespace kvplan::kernels::cuda {

DecodeKernelFn DecodeKernelFp16(int head_dim, int gp) {
  return SelectDecodeKernel<Fp16Elems>(head_dim, gp);
}

}  // namespace kvplan::kernels::cuda
