// The decode kernel instantiations, one getter per cache dtype (defined in
// decode_<dtype>.cu); each returns null for a head_dim or group it lacks.
#pragma once

#include "kernels/cuda/decode_plan.h"

namespace kvplan::kernels::cuda {

DecodeKernelFn DecodeKernelFp16(int head_dim, int gp);
DecodeKernelFn DecodeKernelBf16(int head_dim, int gp);
DecodeKernelFn DecodeKernelFp8(int head_dim, int gp);

}  // namespace kvplan::kernels::cuda
