// Paging on a deployment: the PagingConfig that a capacity result gives (its
// KV budget, blocks and, for a vLLM hybrid model, its KV-cache groups), and
// the rule that a shared prompt prefix fits inside every prompt of the mix.
#pragma once

#include <cstdint>

#include "plan/capacity.h"
#include "plan/paging.h"
#include "spec/request_mix.h"

namespace kvplan {

/// Throws Error when `shared_prefix` tokens (> 0) are more than the shortest
/// prompt of `mix`: every prompt starts with the shared prefix.
void CheckSharedPrefix(const RequestMix& mix, uint64_t shared_prefix);

/// The paging configuration of `cap`'s tightest stage with an S-token shared
/// prefix (0: none analysed).
PagingConfig PagingConfigFor(const CapacityResult& cap, uint64_t shared_prefix);

}  // namespace kvplan
