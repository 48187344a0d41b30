// A tiny decoder-only transformer on the CPU, for `kvplan demo`: random
// weights from a fixed seed, real matrix-vector products, greedy decoding.
// It generates the same tokens three ways so the cost of each can be timed:
//
//   kNoCache  recompute every position of the whole sequence at every step:
//             step t costs O(t * d^2) linear + O(t^2 * d) attention, so n
//             tokens cost O(n^3) once attention dominates;
//   kConcat   keep K/V, but grow the cache by allocating a new buffer and
//             copying the old one each step (torch.cat-style): O(t * d)
//             extra per step, O(n^2) in all on top of the attention;
//   kAppend   keep K/V in a preallocated cache, O(1) append per token:
//             step t costs O(d^2) + O(t * d), so n tokens cost O(n^2).
//
// All three run each row through the same functions in the same order, so
// the logits agree to the last bit; tests check that they agree.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace kvplan::demo {

struct TinyConfig {
  int layers = 2;
  int d_model = 16;
  int heads = 4;  // head_dim = d_model / heads
  int mlp_hidden = 32;
  int vocab = 32;
  uint64_t seed = 20260;  // weights are a pure function of the config and this seed
};

enum class CacheMode { kNoCache, kConcat, kAppend };

/// "no cache (recompute)", "cache, concat per step", "cache, O(1) append".
const char* CacheModeName(CacheMode mode);

struct Generation {
  std::vector<int> tokens;    // the prompt token, then one generated token per step
  std::vector<float> logits;  // [steps][vocab]: the logits each step decoded from
};

class TinyTransformer {
 public:
  /// Random weights (uniform, scaled 1/sqrt(fan_in)) from `config.seed`.
  explicit TinyTransformer(const TinyConfig& config);

  const TinyConfig& config() const { return cfg_; }

  /// Called after each generated token with the number generated so far.
  using StepHook = std::function<void(int generated)>;

  /// Greedily generates `steps` tokens after `prompt_token` with `mode`;
  /// `after_step` (may be empty) lets a caller time the first n of them.
  Generation Generate(CacheMode mode, int prompt_token, int steps,
                      const StepHook& after_step = {}) const;

 private:
  struct Layer {
    std::vector<float> wq, wk, wv, wo;  // [d_model][d_model], row-major (out, in)
    std::vector<float> w1;              // [mlp_hidden][d_model]
    std::vector<float> w2;              // [d_model][mlp_hidden]
  };

  // Appends the next sinusoidal position row to `table` ([positions][d_model]).
  void AppendPosition(std::vector<float>& table) const;
  // The input row of `token`: its embedding + its position row.
  void Embed(int token, const float* position, float* x) const;
  // x += Wo * attention(q over keys/values rows 0..t-1); k, v are [t][d_model].
  void AttentionRow(const Layer& layer, const float* q, const float* k, const float* v, int t,
                    float* x, std::vector<float>& scratch) const;
  // x += W2 * relu(W1 * norm(x)).
  void MlpRow(const Layer& layer, float* x, std::vector<float>& scratch) const;
  // logits = Wout * norm(x).
  void Logits(const float* x, float* logits) const;

  // The prompt token, and room for every step's logits.
  Generation StartGeneration(int prompt_token, int steps) const;
  Generation GenerateCached(bool concat, int prompt_token, int steps,
                            const StepHook& after_step) const;
  Generation GenerateNoCache(int prompt_token, int steps, const StepHook& after_step) const;

  TinyConfig cfg_;
  std::vector<float> embed_;  // [vocab][d_model]
  std::vector<Layer> layers_;
  std::vector<float> wout_;          // [vocab][d_model]
  std::vector<double> frequencies_;  // [d_model] of the sinusoidal positions
};

}  // namespace kvplan::demo
