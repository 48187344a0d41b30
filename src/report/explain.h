// --explain: the derivation of a cache size with the numbers substituted, the
// classic mistakes it avoids, and what doubling the context does.
#pragma once

#include <string>

#include "plan/kv.h"
#include "spec/cache_dtype.h"
#include "spec/model_spec.h"

namespace kvplan {

/// The worked derivation for `kvplan size --explain`. `rank` is the cost on
/// one tensor-parallel rank (rank.tp == 1 when no parallelism was asked for).
std::string ExplainSize(const ModelSpec& model, const CacheDtype& dtype, const KvCost& cost,
                        uint64_t context_tokens, uint64_t batch, const KvCost& rank);

}  // namespace kvplan
