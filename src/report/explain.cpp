#include "report/explain.h"

#include <fmt/format.h>

#include <algorithm>

#include "plan/latency.h"
#include "spec/state_shape.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

std::string B(uint64_t bytes) {
  return WithCommas(bytes) + " B";
}

// "2 bytes" or "34 B per 32-element block" — how the dtype's bytes read.
std::string ElementBytes(const CacheDtype& d) {
  if (d.PlainBytes())
    return fmt::format("{} byte{}", d.PlainBytes(), d.PlainBytes() == 1 ? "" : "s");
  if (d.IsBlock()) return fmt::format("({} B per {} elements)", d.block_bytes, d.block_elems);
  return fmt::format("{} byte{} + {} B scale per vector", d.block_bytes,
                     d.block_bytes == 1 ? "" : "s", d.vector_extra);
}

// One vector of d elements, spelled out: "128 dims x 2 bytes" or "128 dims -> 136 B".
std::string VectorTerm(const CacheDtype& d, uint64_t dims) {
  if (d.PlainBytes()) return fmt::format("{} dims x {}", dims, ElementBytes(d));
  return fmt::format("{} dims {} = {} B", dims, ElementBytes(d), d.VectorBytes(dims));
}

std::string Ratio(double r) {
  return fmt::format("{:.1f}x", r);
}

// An MLA layer's bytes per token: the latent (vLLM's fp8_ds_mla layout
// spelled out), plus the sparse indexer's key where there is one.
std::string MlaTerm(const ModelSpec& m, const CacheDtype& dtype, const GroupCost& g) {
  const bool ds = dtype.name == "fp8_ds_mla";
  std::string term = ds ? std::string("656 B (512 fp8 + 4 fp32 scales + 64 bf16 rope)")
                        : VectorTerm(dtype, g.head_dim);
  if (g.index_bytes_per_token_layer != 0) {
    term += fmt::format(" + indexer key {} fp8 + {} B scale", m.mla->index_head_dim,
                        g.index_bytes_per_token_layer - m.mla->index_head_dim);
  } else if (ds) {
    return term;
  }
  return term + " = " + B(g.bytes_per_token_layer);
}

// One layer group's bytes per token and per sequence, spelled out.
std::string GroupLines(const ModelSpec& m, const CacheDtype& dtype, const GroupCost& g,
                       const LayerGroup& lg, const std::string& label, uint64_t n) {
  std::string out;
  switch (g.kind) {
    case LayerKind::kFull:
    case LayerKind::kSliding:
    case LayerKind::kChunked: {
      std::string kv =
          g.head_dim == g.v_head_dim
              ? fmt::format("2 (K and V) x {} KV heads x {}", g.kv_heads,
                            VectorTerm(dtype, g.head_dim))
              : fmt::format("{} KV heads x (K {} + V {})", g.kv_heads,
                            VectorTerm(dtype, g.head_dim), VectorTerm(dtype, g.v_head_dim));
      out +=
          fmt::format("  {}: {} = {} per token per layer\n", label, kv, B(g.bytes_per_token_layer));
      out += fmt::format("    x {} layers = {} per token\n", g.layers, B(g.per_token_bytes));
      if (g.kind == LayerKind::kFull) {
        out += fmt::format("    x {} tokens = {}\n", WithCommas(n), B(g.SequenceBytes(n)));
      } else {
        out +=
            fmt::format("    x min({} tokens, {} {}) = {} tokens held = {}\n", WithCommas(n),
                        g.kind == LayerKind::kSliding ? "window" : "chunk", WithCommas(lg.window),
                        WithCommas(g.TokensHeld(n)), B(g.SequenceBytes(n)));
      }
      break;
    }
    case LayerKind::kMla:
      out += fmt::format(
          "  {} (MLA): one latent of kv_lora_rank {} + rope {} = {} per token per layer "
          "(no factor 2: K and V are both rebuilt from it)\n",
          label, m.mla->kv_lora_rank, m.mla->qk_rope_head_dim, MlaTerm(m, dtype, g));
      out += fmt::format("    x {} layers = {} per token\n", g.layers, B(g.per_token_bytes));
      out += fmt::format("    x {} tokens = {}\n", WithCommas(n), B(g.SequenceBytes(n)));
      break;
    case LayerKind::kState: {
      const StateShape shape = LayerState(m, lg, 1);
      out += fmt::format(
          "  {} (attention-free, {}): a fixed state of {} = {} per layer per sequence, whatever "
          "the length",
          label, StateFormName(shape.form), shape.Arithmetic(), B(shape.Bytes()));
      out += fmt::format("{}\n    x {} layers = {}\n",
                         lg.parallel ? " (beside the attention of the same layers)" : "", g.layers,
                         B(g.fixed_bytes));
      break;
    }
    case LayerKind::kShared:
      out += fmt::format("  {} (share another layer's KV): 0 B\n", label);
      break;
    case LayerKind::kNone:
      out += fmt::format("  {}: nothing cached (no attention, no state: MLP only) = 0 B\n", label);
      break;
  }
  return out;
}

// One paragraph per cache form beyond plain attention that the model has:
// what it keeps per token, what per sequence, and whether that grows.
std::string FormNotes(const ModelSpec& m) {
  std::string out;
  bool chunked = false, state = false, none = false, sparse = false, k_eq_v = false;
  for (const LayerGroup& g : m.groups) {
    k_eq_v |= g.k_eq_v;
    chunked |= g.kind == LayerKind::kChunked;
    state |= g.kind == LayerKind::kState;
    none |= g.kind == LayerKind::kNone;
    sparse |= g.kind == LayerKind::kMla && m.mla->index_head_dim != 0;
  }
  if (k_eq_v) {
    out +=
        "\nValues from the key projection (k_eq_v, Gemma 4's attention_k_eq_v): those layers "
        "have no v_proj, yet the cache still keeps a key and a value per token: the key gets "
        "its norm and rotary position, the value only a plain norm, so they differ and both "
        "are stored. The saving is in the weights, not in the cache.\n";
  }
  if (chunked) {
    out +=
        "\nChunked local attention: a chunked layer attends only within its own chunk of "
        "tokens, so it keeps K and V for at most one chunk per sequence; past the chunk its "
        "cache stops growing, and only the full-attention layers keep every token.\n";
  }
  if (state) {
    switch (ModelStateForm(m)) {
      case StateForm::kGiven:
        out +=
            "\nState layers keep no keys or values: each sequence holds one fixed state per "
            "layer (state_bytes), updated in place as tokens arrive, so it does not grow with "
            "context.\n";
        break;
      case StateForm::kMamba:
      case StateForm::kMamba2:
        out += fmt::format(
            "\n{} layers keep no keys or values: per sequence and layer they hold the last "
            "d_conv - 1 inputs of a short convolution and an SSM state of d_state values per "
            "channel{}, rewritten in place each token. Nothing is kept per token, so the state "
            "costs the same at 10 tokens as at 1M; it is paid per running sequence.\n",
            m.mamba->version == 2 ? "Mamba-2" : "Mamba",
            m.mamba->version == 2 ? " (head_dim x d_state per head)" : "");
        break;
      case StateForm::kGatedDeltaNet:
        out +=
            "\nGated DeltaNet (linear attention) layers keep no keys or values: per sequence "
            "and layer they hold a key_head_dim x value_head_dim matrix per value head (the "
            "keys' and values' outer products, summed with a decay and a delta-rule "
            "correction) and a short convolution's last conv_kernel - 1 inputs. The matrix is "
            "rewritten each token, so it does not grow with context.\n";
        break;
      case StateForm::kLightning:
        out +=
            "\nLightning (linear) attention layers keep no keys or values: per sequence and "
            "layer they hold one head_dim x head_dim matrix per head, the decayed sum of "
            "k^T v over all tokens so far, so the state does not grow with context.\n";
        break;
    }
  }
  if (sparse) {
    out += fmt::format(
        "\nSparse attention (DeepSeek-V3.2): beside each token's MLA latent, every layer keeps "
        "the indexer's key ({} fp8 values and a scale). Both grow with context; a decode step "
        "scores every cached indexer key but reads only the top {} latents, so the cache held "
        "grows linearly while the attention read stops at {} tokens.\n",
        m.mla->index_head_dim, WithCommas(m.mla->index_topk), WithCommas(m.mla->index_topk));
  }
  if (none) {
    out +=
        "\nMLP-only layers have no attention and no state: they cache nothing, but still "
        "count in the layer total (and in pipeline stages).\n";
  }
  return out;
}

// What one tensor-parallel rank holds, and why the heads split as they do.
std::string TensorParallelLine(const ModelSpec& m, const KvCost& rank, uint64_t n, uint64_t batch) {
  std::string out;
  uint64_t rank_total = rank.TotalBytes(n, batch);
  out += fmt::format("\n  tensor parallel {}: each rank holds {} = {}", rank.tp, B(rank_total),
                     FormatBoth(rank_total));
  const GroupCost& g0 = rank.groups.front();
  if (g0.kind == LayerKind::kMla) {
    out += " (the MLA latent is not split by heads: every rank keeps all of it)\n";
  } else if (m.kv_heads < rank.tp) {
    out += fmt::format(" ({} over {} ranks: each head is replicated {}x)\n",
                       Plural(m.kv_heads, "KV head"), rank.tp, rank.tp / m.kv_heads);
  } else {
    out += fmt::format(" ({} of the {} KV heads each)\n", g0.kv_heads, m.kv_heads);
  }
  return out;
}

// True when some windowed layer holds fewer than n tokens.
bool Windowed(const KvCost& cost, uint64_t n) {
  bool windowed = false;
  for (const GroupCost& g : cost.groups) {
    if (g.cap_tokens != 0 && g.cap_tokens < n) windowed = true;
  }
  return windowed;
}

// The sizing mistakes that apply to this model, one line each.
std::string Mistakes(const ModelSpec& m, const CacheDtype& dtype, const KvCost& cost, uint64_t n,
                     uint64_t batch, uint64_t seq, uint64_t total) {
  std::string mistakes;
  const GroupCost* attn = nullptr;
  for (const GroupCost& g : cost.groups) {
    if (g.kind == LayerKind::kFull || g.kind == LayerKind::kSliding ||
        g.kind == LayerKind::kChunked) {
      attn = &g;
      break;
    }
  }
  if (attn && m.kv_heads < m.query_heads) {
    mistakes += fmt::format(
        "  - query heads instead of KV heads: {} share {} ({}); sizing with "
        "{} heads would give {} ({}x too much)\n",
        Plural(m.query_heads, "query head"), Plural(m.kv_heads, "KV head"), m.AttentionKind(),
        m.query_heads,
        FormatBoth(
            static_cast<uint64_t>(static_cast<double>(seq) * m.query_heads / m.kv_heads * batch)),
        m.query_heads / m.kv_heads);
  }
  if (attn && m.hidden_size != m.kv_heads * m.head_dim) {
    mistakes += fmt::format(
        "  - hidden size instead of kv_heads x head_dim: a layer's K is {} x {} = {} wide, not "
        "hidden_size {} ({})\n",
        m.kv_heads, m.head_dim, m.kv_heads * m.head_dim, m.hidden_size,
        Ratio(static_cast<double>(m.hidden_size) / static_cast<double>(m.kv_heads * m.head_dim)) +
            " off");
  }
  if (attn && m.head_dim * m.query_heads != m.hidden_size) {
    mistakes += fmt::format(
        "  - head_dim from hidden/heads: the config states head_dim {}, but {} / {} = {}\n",
        m.head_dim, m.hidden_size, m.query_heads, m.hidden_size / m.query_heads);
  }
  uint64_t uncapped = CheckedMul(cost.per_token_bytes, n);
  uncapped = CheckedAdd(uncapped, cost.fixed_bytes);
  if (Windowed(cost, n)) {
    mistakes += fmt::format(
        "  - ignoring the window: charging windowed layers the whole {} tokens would give {} per "
        "sequence ({} too much)\n",
        WithCommas(n), FormatBoth(uncapped),
        Ratio(static_cast<double>(uncapped) / static_cast<double>(seq)));
  }
  if (m.mla) {
    uint64_t per_head = CheckedMul(
        CheckedMul(CheckedMul(m.query_heads, m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim +
                                                 m.mla->v_head_dim),
                   dtype.PlainBytes() ? dtype.PlainBytes() : 1),
        CheckedMul(m.layers, n));
    mistakes += fmt::format(
        "  - MLA sized per head: {} heads x (K {} + V {}) per token-layer would give {} per "
        "sequence ({} too much)\n",
        m.query_heads, m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim, m.mla->v_head_dim,
        FormatBoth(per_head), Ratio(static_cast<double>(per_head) / static_cast<double>(seq)));
  }
  if (dtype.IsBlock()) {
    mistakes += fmt::format(
        "  - block bytes as element bytes: {} stores {} elements in {} B; reading {} B per "
        "element would be {}x too much\n",
        dtype.name, dtype.block_elems, dtype.block_bytes, dtype.block_bytes, dtype.block_elems);
  }
  if (cost.fixed_bytes) {
    mistakes +=
        "  - attention-free layers charged per token: their state does not grow with "
        "the context\n";
  }
  mistakes += fmt::format("  - GiB vs GB: {} is {} (1 GiB = 1.074 GB; 1 MiB = 1.049 MB)\n",
                          FormatGiB(total), FormatGB(total));
  return mistakes;
}

// What doubling the context does to the cache, prefill and decode.
std::string Doubling(const ModelSpec& m, const KvCost& cost, uint64_t n, uint64_t seq) {
  std::string out;
  const bool windowed = Windowed(cost, n);
  const uint64_t n2 = CheckedMul(n, 2);
  uint64_t seq2 = cost.SequenceBytes(n2);
  const double grows = static_cast<double>(seq2) / static_cast<double>(seq);
  out += fmt::format(
      "\nDoubling the context to {} tokens:\n"
      "  - the cache grows {} -> {} per sequence ({}): linear in context{}\n",
      WithCommas(n2), FormatGiB(seq), FormatGiB(seq2), Ratio(grows),
      windowed || cost.fixed_bytes
          ? " where layers keep every token; windows and fixed state do not grow"
          : "");
  // The prefill figure from the same causal pairs `kvplan latency` uses, so
  // a window (attend to at most w earlier tokens: quadratic only up to w,
  // linear past it) shows here as it does there.
  const ModelCost attention = AttentionCost(m, 1);
  const double work = PrefillAttentionFlops(attention, n);
  const double work2 = PrefillAttentionFlops(attention, n2);
  if (work == 0) {
    out +=
        "  - prefill has no attention over a cache (attention-free layers): its work, the "
        "matmuls, only doubles\n";
  } else if (std::none_of(attention.windowed.begin(), attention.windowed.end(),
                          [&](const ModelCost::WindowedGroup& g) { return g.window < n2; })) {
    // No window cuts in before 2n tokens. (Not a ratio test: causal pairs
    // grow (4n + 2) / (n + 1) < 4 times, under 3.99 for n < 199.)
    out +=
        "  - prefill attention work quadruples (every token attends to every earlier one: "
        "quadratic), while the weight matmuls of prefill only double\n";
  } else {
    out += fmt::format(
        "  - prefill attention work grows {}, not 4x: in windowed layers a token attends to at "
        "most its window (quadratic up to the window, linear past it); the weight matmuls of "
        "prefill double\n",
        Ratio(work2 / work));
  }
  if (seq2 == seq) {
    out +=
        "  - each decode step reads the whole cache, which does not grow here, so time per "
        "output token stays about the same\n";
  } else if (seq2 < 2 * seq) {
    out += fmt::format(
        "  - each decode step reads the whole cache, so the KV a step reads grows {} with it (the "
        "weights' read does not grow)\n",
        Ratio(grows));
  } else {
    out += "  - each decode step reads the whole cache, so time per output token grows with it\n";
  }
  return out;
}

}  // namespace

std::string ExplainSize(const ModelSpec& m, const CacheDtype& dtype, const KvCost& cost, uint64_t n,
                        uint64_t batch, const KvCost& rank) {
  std::string out;
  out += fmt::format("How big is the KV cache of {} ({}), {} cache, {} tokens, batch {}?\n\n",
                     m.name, m.AttentionKind(), dtype.name, FormatTokens(n), batch);
  out +=
      "Every layer keeps, for each cached token, one key and one value vector per KV head\n"
      "(the query is never cached: only the new token's query is ever needed).\n\n";

  uint64_t seq = cost.SequenceBytes(n);
  for (size_t i = 0; i < cost.groups.size(); ++i) {
    const GroupCost& g = cost.groups[i];
    const LayerGroup& lg = m.groups[i];
    std::string label = cost.groups.size() > 1
                            ? fmt::format("{} layers ({})", g.layers, LayerKindName(g.kind))
                            : fmt::format("{} layers", g.layers);
    out += GroupLines(m, dtype, g, lg, label, n);
  }
  out += FormNotes(m);
  out += "\n";
  out += fmt::format("  per sequence = {} = {} = {}\n", B(seq), FormatGiB(seq), FormatGB(seq));
  uint64_t total = cost.TotalBytes(n, batch);
  out += fmt::format("  total        = {} x {} sequence{} = {} = {} = {}\n", B(seq), batch,
                     batch == 1 ? "" : "s", B(total), FormatGiB(total), FormatGB(total));
  out += "  (GiB = 2^30 bytes, what memory tools show; GB = 10^9 bytes, what datasheets print)\n";

  if (rank.tp > 1) out += TensorParallelLine(m, rank, n, batch);

  // The mistakes that apply to this model.
  out += "\nMistakes this avoids:\n" + Mistakes(m, dtype, cost, n, batch, seq, total);

  out += Doubling(m, cost, n, seq);
  return out;
}

}  // namespace kvplan
