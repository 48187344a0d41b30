// Comparing deployments side by side: the figures of each configuration and
// their ratio to the first one, so "what does fp8 / tp4 / the other model
// buy us" reads off one table. Also the rules of `--vary`: which settings
// may vary, and which engine flags belong to which engines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/capacity.h"
#include "spec/engine.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// One row of a comparison: a figure for every configuration (column).
struct CompareRow {
  std::string key;             // stable JSON/CSV key, e.g. "max_tokens"
  std::string label;           // for the text table, e.g. "tokens in cache"
  std::string unit;            // "bytes", "count", "x" (for formatting)
  std::vector<double> values;  // one per configuration
  bool higher_is_better = true;

  /// values[i] / values[0]; 0 when the first value is 0 (no meaningful ratio).
  double Ratio(size_t i) const;
};

/// One configuration of a comparison: its label ("" for a single model and
/// no varied setting; the model's name, "KEY=VALUE", or both) and its capacity.
struct CompareColumn {
  std::string label;
  ModelSpec model;
  HardwareSpec gpu;
  CapacityResult cap;
  // Why the engine would not start with it (its own words), "" when it
  // would; with `figures` false nothing was computed (a value the engine
  // refuses outright, a GPU that does not load): its figures are not shown.
  std::string refused;
  bool figures = true;
};

/// The compared figures, one value per column, in display order.
std::vector<CompareRow> CompareRows(const std::vector<CompareColumn>& cols);

/// The settings one comparison may vary (`--vary KEY=...`), in help order.
const std::vector<std::string>& VaryKeys();

/// Throws Error when `key` is not one of VaryKeys (with a did-you-mean).
void CheckVaryKey(const std::string& key);

/// A flag that belongs to some engines only. When the engine varies, each
/// applies to the columns of its engines and is left out of the others.
struct EngineFlag {
  const char* name;             // "--gpu-memory-utilization"
  std::vector<Engine> engines;  // the engines that take it
  bool except = false;          // true: every engine but those
  bool Takes(Engine e) const;
};

/// Every engine-specific flag of the deployment flags.
const std::vector<EngineFlag>& EngineFlags();

/// For `--vary engine=...`: throws Error when one of `given` (flag names,
/// as in EngineFlags) is taken by none of the engines in `values` (names as
/// written; an unknown name counts as taking it, its column reports it).
/// `vary` is the --vary text, for the message.
void CheckEngineFlagsTaken(const std::string& vary, const std::vector<std::string>& given,
                           const std::vector<std::string>& values);

/// Whether the engine sizes its cache from its memory fraction: llama.cpp
/// has none, and vLLM given kv_cache_memory_bytes ignores it.
bool FractionRead(const EngineConfig& c);

}  // namespace kvplan
