// Reading `vllm serve MODEL --flags` into a DeployConfig: ParseVllmCommand
// splits the line (vllm_args_shell.cpp), skips the launcher, then walks
// vLLM's arguments: the positional model, the CUDA-graph flags
// (vllm_args_graphs.cpp), the flags that size the cache (looked up in
// vllm_args_flags.cpp, checked and applied here) and every other flag,
// skipped and named in the notes.
#include "import/vllm_args.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstdlib>

#include "import/speculative_config.h"
#include "import/vllm_args_internal.h"
#include "plan/weights.h"
#include "spec/cache_dtype.h"
#include "spec/state_shape.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {
namespace {

/// One word of the form --flag or --flag=value.
struct FlagWord {
  std::string name;  // canonical (Canonical)
  std::string value;
  bool has_value = false;
  size_t eq = std::string::npos;  // where the word's '=' is
};

FlagWord SplitFlagWord(const std::string& word) {
  FlagWord f;
  f.name = word;
  f.eq = word.find('=');
  if (f.eq != std::string::npos) {
    f.name = word.substr(0, f.eq);
    f.value = word.substr(f.eq + 1);
    f.has_value = true;
  }
  f.name = Canonical(f.name);
  // -O3: the optimization level written onto its short flag.
  if (!f.has_value && f.name.size() > 2 && f.name.starts_with("-O") && f.name[2] != '.') {
    f.has_value = true;
    f.value = f.name.substr(2);
    f.name = "-O";
  }
  return f;
}

/// The positional arguments: the model, once, and "--". True where w[i]
/// was one (`i` advanced past what it took).
bool ReadPositional(const std::vector<std::string>& w, size_t& i, DeployConfig& d) {
  const std::string& word = w[i];
  // argparse reads every word after "--" as positional: a second model,
  // which vllm serve refuses.
  if (word == "--") {
    // One word after it is the model when none was given yet.
    if (d.model.empty() && i + 2 == w.size()) {
      d.model = w[++i];
      return true;
    }
    if (i + 1 < w.size()) {
      Fail(
          "--vllm-args: '--' ends the options: vllm serve would read '{}' as a positional "
          "argument and refuse it",
          Redacted(w[i + 1]));
    }
    return true;
  }
  if (word.empty() || word[0] != '-' || word == "-") {
    if (d.model.empty()) {
      d.model = word;
    } else {
      Fail("--vllm-args: unexpected argument '{}' (the model is already '{}')", Redacted(word),
           d.model);
    }
    return true;
  }
  return false;
}

/// Not a cache flag: skip it and the value that follows it, if any, and
/// name it in `unmodelled` (it changes memory) or `ignored`.
void SkipOtherFlag(const std::vector<std::string>& w, size_t& i, FlagWord f,
                   const std::vector<std::string>& known, std::vector<std::string>& ignored,
                   std::vector<std::string>& unmodelled) {
  const std::string& name = f.name;
  // Named without its value: --api-key and --hf-token values are
  // secrets, and the notes land in CI logs.
  std::string note = w[i].substr(0, f.eq);
  if (!f.has_value && !IsSwitch(name)) {
    // Its value (all of them for a list flag), if any follows.
    // A value may be negative (--seed -1).
    const auto value_next = [&] {
      return i + 1 < w.size() &&
             (w[i + 1].empty() || w[i + 1][0] != '-' ||
              (w[i + 1].size() > 1 && std::isdigit(static_cast<unsigned char>(w[i + 1][1]))));
    };
    while (value_next()) {
      ++i;
      f.has_value = true;
      if (!TakesList(name)) break;
    }
  }
  if (f.has_value) note += " ...";
  if (ChangesMemory(name)) {
    unmodelled.push_back(note);
  } else {
    ignored.push_back(note + (KnownHarmless(name) ? "" : DidYouMean(name, known)));
  }
}

/// A switch that sizes the cache (--enable-prefix-caching, --enforce-eager
/// and their --no- forms), bare or with =true/=false.
void ApplySwitch(const VllmFlag& flag, const FlagWord& f, DeployConfig& d) {
  bool v = flag.kind == VllmFlagKind::kFlag;
  if (f.has_value) {
    if (f.value == "true" || f.value == "True" || f.value == "1") {
    } else if (f.value == "false" || f.value == "False" || f.value == "0") {
      v = !v;
    } else {
      Fail("--vllm-args: {}: expected true or false, got '{}'", flag.name, f.value);
    }
  }
  if (std::string(flag.field) == "prefix_caching")
    d.args.prefix_caching = v;
  else if (std::string(flag.field) == "expert_parallel")
    d.args.expert_parallel = v;
  else if (std::string(flag.field) == "disable_hybrid")
    d.args.disable_hybrid = v;
  else
    d.args.enforce_eager = v;
  d.args.names[flag.field] = flag.name;
}

/// The value of `--flag value` (w[i] is the flag): the next word, which
/// must not be another flag.
std::string NextValue(const std::vector<std::string>& w, size_t& i) {
  const std::string& word = w[i];
  if (i + 1 >= w.size()) Fail("--vllm-args: {} needs a value", word);
  // The next word is another flag: this one was given no value.
  if (w[i + 1].starts_with("--") || (w[i + 1].size() > 1 && w[i + 1][0] == '-' &&
                                     std::isalpha(static_cast<unsigned char>(w[i + 1][1])))) {
    Fail("--vllm-args: {} needs a value (the next word is the flag {})", word, Redacted(w[i + 1]));
  }
  return w[++i];
}

/// A cache flag's value, checked the way vLLM checks it at startup, into
/// d.args (the model flag's into `model_flag`, the capture size's into
/// `graphs`).
void ApplyValue(const VllmFlag& flag, const std::string& name, const std::string& value,
                DeployConfig& d, GraphSizes& graphs, std::string& model_flag) {
  std::string what = std::string("--vllm-args: ") + flag.name;
  std::string field = flag.field;
  if (!field.empty()) d.args.names[field] = flag.name;
  if (field == "kv_cache_dtype" && value != "auto") {
    // Known but unsupported by vLLM (q4_0): a startup FAIL; unknown: a typo.
    try {
      FindCacheDtype(value);
    } catch (const Error& e) {
      Fail("{}: {}", what, e.what());
    }
  }
  if ((field == "weight_dtype" || field == "quantization") && value != "auto") {
    try {
      FindWeightFormat(value, 0);
    } catch (const Error& e) {
      Fail("{}: {}", what, e.what());
    }
  }
  switch (flag.kind) {
    case VllmFlagKind::kText:
      if (field.empty()) {
        model_flag = value;
      } else if (field == "kv_cache_dtype") {
        d.args.kv_cache_dtype = value;
      } else if (field == "quantization") {
        d.args.quantization = value;
      } else if (field == "mamba_ssm_dtype" || field == "mamba_cache_dtype") {
        StateDtypeBytes(value, what);  // auto, float32, bfloat16, float16
        (field == "mamba_ssm_dtype" ? d.args.mamba_ssm_dtype : d.args.mamba_cache_dtype) = value;
      } else if (field == "speculative") {
        std::vector<std::string> ignored;
        d.args.speculative = ReadSpeculativeConfig(value, "--vllm-args: " + name, ignored);
        if (!ignored.empty())
          d.notes.push_back(
              fmt::format("ignored (no effect on the KV cache): {}", fmt::join(ignored, ", ")));
      } else {
        d.args.weight_dtype = value;
      }
      break;
    case VllmFlagKind::kTokens: {
      // -1 (or auto): vLLM fits max_model_len to the cache (_auto_fit_max_model_len).
      if (field == "max_model_len" && (value == "-1" || value == "auto")) {
        d.args.max_model_len_auto = true;
        break;
      }
      // vLLM's human_readable_int: 32K, 25.6k or a plain int, never 1.5K.
      uint64_t n = ParseHumanReadableInt(value, what);
      if (n == 0) Fail("{}: must be positive, got 0", what);
      if (field == "max_model_len") CheckContextTokens(n, what);
      if (field == "max_model_len")
        d.args.max_model_len = n;
      else
        d.args.max_num_batched_tokens = n;
      break;
    }
    case VllmFlagKind::kCount: {
      if (field == "cuda_graph_max_bs") {  // a plain integer, as vLLM's int takes it
        SetMax(graphs, GraphSize(value, what, false), name);
        break;
      }
      // vLLM's int flags read the word with Python's int(): no suffix, no point.
      uint64_t n = ParsePythonInt(value, what);
      if (n == 0) Fail("{}: must be positive, got 0", what);
      CheckEngineCount(field, n, what);
      if (field == "max_num_seqs")
        d.args.max_num_seqs = n;
      else if (field == "tp")
        d.args.tp = n;
      else if (field == "pp")
        d.args.pp = n;
      else if (field == "dp")
        d.args.dp = n;
      else if (field == "num_gpu_blocks_override")
        d.args.num_gpu_blocks_override = n;
      else
        d.args.block_size = n;
      break;
    }
    case VllmFlagKind::kBytes: {
      uint64_t n = ParseBytes(value, what);
      if (n == 0) Fail("{}: must be positive, got 0", what);
      d.args.kv_cache_memory_bytes = n;
      break;
    }
    case VllmFlagKind::kFraction: {
      // Python's float() as util/units' grammar reads it: no hex float
      // (0x0.8), inf or nan.
      const std::optional<double> v = TryParseReal(value);
      if (!v || !(*v > 0 && *v <= 1)) {
        Fail("{}: expected a fraction in (0, 1], got '{}'", what, value);
      }
      d.args.memory_fraction = *v;
      break;
    }
    default:
      break;
  }
}

}  // namespace

DeployConfig ParseVllmCommand(std::string_view line) {
  return ParseVllmWords(ShellSplit(line));
}

DeployConfig ParseVllmWords(const std::vector<std::string>& w) {
  DeployConfig d;
  d.engine = "vllm";
  d.name = "vllm-args";
  std::vector<std::string> ignored, unmodelled;
  size_t i = SkipLauncher(w, d, ignored);
  std::vector<std::string> known;
  for (const VllmFlag& f : VllmFlags()) known.emplace_back(f.name);
  std::string model_flag;  // --model; d.model holds the positional one
  GraphSizes graphs;
  for (; i < w.size(); ++i) {
    if (ReadPositional(w, i, d)) continue;
    const std::string& word = w[i];
    FlagWord f = SplitFlagWord(word);
    // The CUDA graphs: vLLM captures them up to the largest batch size, and
    // from 0.21 takes their memory out of the cache's budget.
    if (IsGraphFlag(f.name)) {
      const std::string shown = f.name == "-O" ? f.name : word.substr(0, f.eq);
      ReadGraphFlag(w, i, f.name, shown, f.has_value, f.value, graphs, ignored);
      continue;
    }
    // vLLM reads more arguments from this file, which kvplan does not: a
    // gate would check other settings than the server runs with.
    if (f.name == "--config") {
      Fail(
          "--vllm-args: --config FILE is not read: give its settings as flags, or write them in a "
          "deploy config (kvplan check FILE)");
    }
    const VllmFlag* flag = nullptr;
    for (const VllmFlag& candidate : VllmFlags()) {
      if (f.name == candidate.name) flag = &candidate;
    }
    if (flag == nullptr) {
      SkipOtherFlag(w, i, f, known, ignored, unmodelled);
      continue;
    }
    if (flag->kind == VllmFlagKind::kFlag || flag->kind == VllmFlagKind::kNegFlag) {
      ApplySwitch(*flag, f, d);
      continue;
    }
    if (!f.has_value) f.value = NextValue(w, i);
    ApplyValue(*flag, f.name, f.value, d, graphs, model_flag);
  }
  ApplyGraphSizes(graphs, d);
  // As `vllm serve` does: the positional model wins over --model.
  if (d.model.empty()) d.model = model_flag;
  if (d.model.empty()) Fail("--vllm-args: no model (expected `vllm serve MODEL ...` or --model)");
  if (!ignored.empty()) {
    d.notes.push_back(
        fmt::format("ignored (no effect on the KV cache): {}", fmt::join(ignored, ", ")));
  }
  d.unmodelled = unmodelled;
  if (!unmodelled.empty()) {
    d.notes.push_back(fmt::format(
        "not modelled (they change the memory left for the KV cache; the figures assume them "
        "absent): {}",
        fmt::join(unmodelled, ", ")));
  }
  return d;
}

}  // namespace kvplan
