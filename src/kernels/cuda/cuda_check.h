// KVPLAN_CUDA_CHECK(call): every CUDA runtime call and every kernel launch
// (via cudaGetLastError) goes through it, so a failure surfaces as one
// kvplan::Error line naming the call site and CUDA's own explanation.
#pragma once

#include <cuda_runtime_api.h>

namespace kvplan::kernels::cuda {

/// Throws kvplan::Error "file:line: CUDA error <name>: <cudaGetErrorString> (in <expr>)".
[[noreturn]] void ThrowCudaError(cudaError_t err, const char* expr, const char* file, int line);

}  // namespace kvplan::kernels::cuda

#define KVPLAN_CUDA_CHECK(call)                                                             \
  do {                                                                                      \
    const cudaError_t kvplan_cuda_err_ = (call);                                            \
    if (kvplan_cuda_err_ != cudaSuccess) {                                                  \
      ::kvplan::kernels::cuda::ThrowCudaError(kvplan_cuda_err_, #call, __FILE__, __LINE__); \
    }                                                                                       \
  } while (0)

/// After a <<<...>>> launch: configuration errors surface at once.
#define KVPLAN_CUDA_CHECK_LAUNCH() KVPLAN_CUDA_CHECK(cudaGetLastError())
