#include "kernels/cuda/cuda_check.h"

#include <cstring>

#include "util/error.h"

namespace kvplan::kernels::cuda {

void ThrowCudaError(cudaError_t err, const char* expr, const char* file, int line) {
  // Trim the path to what follows src/ so messages read the same on every machine.
  const char* src = std::strstr(file, "src/");
  Fail("{}:{}: CUDA error {}: {} (in {})", src != nullptr ? src : file, line, cudaGetErrorName(err),
       cudaGetErrorString(err), expr);
}

}  // namespace kvplan::kernels::cuda
