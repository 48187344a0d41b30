#include "demo/tiny_transformer.h"

#include <algorithm>
#include <cmath>

namespace kvplan::demo {
namespace {

// splitmix64: a tiny generator whose output is the same on every platform
// (std::uniform_real_distribution is not), so the demo's tokens are too.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Uniform() {
    return static_cast<float>(static_cast<double>(Next() >> 11) * 0x1.0p-52 - 1.0);
  }
};

std::vector<float> RandomMatrix(Rng& rng, int rows, int cols) {
  std::vector<float> w(static_cast<size_t>(rows) * cols);
  const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
  for (float& x : w) x = rng.Uniform() * scale;
  return w;
}

// y = W x for W [rows][cols] row-major.
void MatVec(const std::vector<float>& w, const float* x, int rows, int cols, float* y) {
  for (int r = 0; r < rows; ++r) {
    const float* row = w.data() + static_cast<size_t>(r) * cols;
    float acc = 0;
    for (int c = 0; c < cols; ++c) acc += row[c] * x[c];
    y[r] = acc;
  }
}

// RMSNorm without a learned gain.
void RmsNorm(const float* x, int d, float* y) {
  float ss = 0;
  for (int i = 0; i < d; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + 1e-6f);
  for (int i = 0; i < d; ++i) y[i] = x[i] * inv;
}

int ArgMax(const float* v, int n) {
  return static_cast<int>(std::max_element(v, v + n) - v);
}

}  // namespace

const char* CacheModeName(CacheMode mode) {
  switch (mode) {
    case CacheMode::kNoCache:
      return "no cache (recompute)";
    case CacheMode::kConcat:
      return "cache, concat per step";
    case CacheMode::kAppend:
      return "cache, O(1) append";
  }
  return "?";
}

TinyTransformer::TinyTransformer(const TinyConfig& config) : cfg_(config) {
  Rng rng{cfg_.seed};
  const int d = cfg_.d_model;
  embed_ = RandomMatrix(rng, cfg_.vocab, d);
  for (float& x : embed_) x *= std::sqrt(static_cast<float>(d));  // unit-scale rows
  layers_.resize(static_cast<size_t>(cfg_.layers));
  for (Layer& l : layers_) {
    l.wq = RandomMatrix(rng, d, d);
    l.wk = RandomMatrix(rng, d, d);
    l.wv = RandomMatrix(rng, d, d);
    l.wo = RandomMatrix(rng, d, d);
    l.w1 = RandomMatrix(rng, cfg_.mlp_hidden, d);
    l.w2 = RandomMatrix(rng, d, cfg_.mlp_hidden);
  }
  wout_ = RandomMatrix(rng, cfg_.vocab, d);
  for (int i = 0; i < d; ++i) {
    frequencies_.push_back(std::pow(10000.0, -static_cast<double>(i - i % 2) / d));
  }
}

void TinyTransformer::AppendPosition(std::vector<float>& table) const {
  // Sinusoidal positions, so attention has an order to work with. Each
  // method computes each row once, as it first needs it, so no fixed cost
  // is paid up front for tokens not yet generated.
  const int d = cfg_.d_model;
  const double pos = static_cast<double>(table.size() / static_cast<size_t>(d));
  for (int i = 0; i < d; ++i) {
    const double angle = pos * frequencies_[static_cast<size_t>(i)];
    table.push_back(static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle)));
  }
}

void TinyTransformer::Embed(int token, const float* position, float* x) const {
  const int d = cfg_.d_model;
  const float* e = embed_.data() + static_cast<size_t>(token) * d;
  for (int i = 0; i < d; ++i) x[i] = e[i] + position[i];
}

void TinyTransformer::AttentionRow(const Layer& layer, const float* q, const float* k,
                                   const float* v, int t, float* x,
                                   std::vector<float>& scratch) const {
  const int d = cfg_.d_model;
  const int hd = d / cfg_.heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  scratch.resize(static_cast<size_t>(t) + 2 * d);
  float* scores = scratch.data();
  float* out = scores + t;
  float* proj = out + d;
  for (int h = 0; h < cfg_.heads; ++h) {
    const int off = h * hd;
    float mx = -INFINITY;
    for (int j = 0; j < t; ++j) {
      const float* kj = k + static_cast<size_t>(j) * d + off;
      float s = 0;
      for (int c = 0; c < hd; ++c) s += q[off + c] * kj[c];
      scores[j] = s * scale;
      mx = std::max(mx, scores[j]);
    }
    float sum = 0;
    for (int j = 0; j < t; ++j) {
      scores[j] = std::exp(scores[j] - mx);
      sum += scores[j];
    }
    for (int c = 0; c < hd; ++c) out[off + c] = 0;
    for (int j = 0; j < t; ++j) {
      const float* vj = v + static_cast<size_t>(j) * d + off;
      const float p = scores[j] / sum;
      for (int c = 0; c < hd; ++c) out[off + c] += p * vj[c];
    }
  }
  MatVec(layer.wo, out, d, d, proj);
  for (int i = 0; i < d; ++i) x[i] += proj[i];
}

void TinyTransformer::MlpRow(const Layer& layer, float* x, std::vector<float>& scratch) const {
  const int d = cfg_.d_model;
  const int f = cfg_.mlp_hidden;
  scratch.resize(static_cast<size_t>(2 * d + f));
  float* h = scratch.data();
  float* u = h + d;
  float* y = u + f;
  RmsNorm(x, d, h);
  MatVec(layer.w1, h, f, d, u);
  for (int i = 0; i < f; ++i) u[i] = std::max(u[i], 0.0f);
  MatVec(layer.w2, u, d, f, y);
  for (int i = 0; i < d; ++i) x[i] += y[i];
}

void TinyTransformer::Logits(const float* x, float* logits) const {
  std::vector<float> h(static_cast<size_t>(cfg_.d_model));
  RmsNorm(x, cfg_.d_model, h.data());
  MatVec(wout_, h.data(), cfg_.vocab, cfg_.d_model, logits);
}

Generation TinyTransformer::Generate(CacheMode mode, int prompt_token, int steps,
                                     const StepHook& after_step) const {
  switch (mode) {
    case CacheMode::kNoCache:
      return GenerateNoCache(prompt_token, steps, after_step);
    case CacheMode::kConcat:
      return GenerateCached(true, prompt_token, steps, after_step);
    case CacheMode::kAppend:
      return GenerateCached(false, prompt_token, steps, after_step);
  }
  return {};
}

Generation TinyTransformer::StartGeneration(int prompt_token, int steps) const {
  Generation g;
  g.tokens.push_back(prompt_token);
  g.logits.resize(static_cast<size_t>(steps) * cfg_.vocab);
  return g;
}

Generation TinyTransformer::GenerateCached(bool concat, int prompt_token, int steps,
                                           const StepHook& after_step) const {
  const int d = cfg_.d_model;
  const size_t row = static_cast<size_t>(d);
  Generation g = StartGeneration(prompt_token, steps);
  // Per layer K and V, [tokens][d_model]. Append: sized once for every step.
  std::vector<std::vector<float>> kc(layers_.size()), vc(layers_.size());
  if (!concat) {
    for (size_t l = 0; l < layers_.size(); ++l) {
      kc[l].resize(row * steps);
      vc[l].resize(row * steps);
    }
  }
  std::vector<float> positions;
  std::vector<float> x(row), h(row), q(row), scratch;
  for (int t = 0; t < steps; ++t) {
    AppendPosition(positions);
    Embed(g.tokens.back(), positions.data() + row * t, x.data());
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Layer& layer = layers_[l];
      if (concat) {
        // What `cache = torch.cat([cache, new])` does: a new buffer one row
        // longer, the whole old cache copied into it.
        for (auto* c : {&kc[l], &vc[l]}) {
          std::vector<float> grown(c->size() + row);
          std::copy(c->begin(), c->end(), grown.begin());
          c->swap(grown);
        }
      }
      float* krow = kc[l].data() + row * t;
      float* vrow = vc[l].data() + row * t;
      RmsNorm(x.data(), d, h.data());
      MatVec(layer.wq, h.data(), d, d, q.data());
      MatVec(layer.wk, h.data(), d, d, krow);
      MatVec(layer.wv, h.data(), d, d, vrow);
      AttentionRow(layer, q.data(), kc[l].data(), vc[l].data(), t + 1, x.data(), scratch);
      MlpRow(layer, x.data(), scratch);
    }
    float* logits = g.logits.data() + static_cast<size_t>(t) * cfg_.vocab;
    Logits(x.data(), logits);
    g.tokens.push_back(ArgMax(logits, cfg_.vocab));
    if (after_step) after_step(t + 1);
  }
  return g;
}

Generation TinyTransformer::GenerateNoCache(int prompt_token, int steps,
                                            const StepHook& after_step) const {
  const int d = cfg_.d_model;
  const size_t row = static_cast<size_t>(d);
  Generation g = StartGeneration(prompt_token, steps);
  std::vector<float> positions;
  std::vector<float> x, q, k, v, h(row), scratch;
  for (int t = 0; t < steps; ++t) {
    AppendPosition(positions);
    // Forget everything: run the whole sequence so far through the model.
    const int len = t + 1;
    x.assign(row * len, 0.0f);
    q.assign(row * len, 0.0f);
    k.assign(row * len, 0.0f);
    v.assign(row * len, 0.0f);
    for (int i = 0; i < len; ++i) {
      Embed(g.tokens[static_cast<size_t>(i)], positions.data() + row * i, x.data() + row * i);
    }
    for (const Layer& layer : layers_) {
      for (int i = 0; i < len; ++i) {
        RmsNorm(x.data() + row * i, d, h.data());
        MatVec(layer.wq, h.data(), d, d, q.data() + row * i);
        MatVec(layer.wk, h.data(), d, d, k.data() + row * i);
        MatVec(layer.wv, h.data(), d, d, v.data() + row * i);
      }
      for (int i = 0; i < len; ++i) {
        // Causal: position i sees positions 0..i.
        AttentionRow(layer, q.data() + row * i, k.data(), v.data(), i + 1, x.data() + row * i,
                     scratch);
        MlpRow(layer, x.data() + row * i, scratch);
      }
    }
    float* logits = g.logits.data() + static_cast<size_t>(t) * cfg_.vocab;
    Logits(x.data() + row * t, logits);
    g.tokens.push_back(ArgMax(logits, cfg_.vocab));
    if (after_step) after_step(t + 1);
  }
  return g;
}

}  // namespace kvplan::demo
