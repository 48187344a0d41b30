// `kvplan paging` rendered: the three allocation policies side by side with
// the mix's figures and what a shared prefix saves (text), every figure
// (JSON), and one row per policy (CSV).
#pragma once

#include <cstdint>
#include <string>

#include "plan/capacity.h"
#include "plan/paging.h"
#include "report/json.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/request_mix.h"

namespace kvplan {

/// `r` is the analysis of `mix` on `cap`'s KV budget with an S-token
/// `shared_prefix` (0: none asked for). Fits `width` columns (0: any).
std::string PagingText(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                       const RequestMix& mix, const PagingResult& r, uint64_t shared_prefix,
                       size_t width);

Json PagingJson(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                const RequestMix& mix, const PagingResult& r, uint64_t shared_prefix);

/// One row per allocation policy, plain numbers.
std::string PagingCsv(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                      const PagingResult& r);

}  // namespace kvplan
