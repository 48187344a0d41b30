// kvplan models [NAME]: the bundled model catalog, or one model in full.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/model_route.h"
#include "cli/models_verify.h"
#include "import/hf_cache.h"
#include "import/resolve.h"
#include "plan/kv.h"
#include "plan/weights.h"
#include "report/json.h"
#include "report/table.h"
#include "report/terminal.h"
#include "spec/catalog.h"
#include "spec/state_shape.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct ModelsOptions {
  std::string name;
  std::string format = "text";
  std::string verify, against;  // --verify SPEC --against config.json
  std::string resolve;          // --resolve MODEL: the route and the geometry
  std::string revision = "main";
  bool cached = false;  // --cached: the repo ids in the local HF cache
};

uint64_t Fp16BytesPerToken(const ModelSpec& m) {
  return ComputeKvCost(m, FindCacheDtype("fp16"), 1).per_token_bytes;
}

// "21 sliding (4,096 (4K)) + 21 full"; `csv`: "21 sliding window 4096 + 21
// full", the window a plain number a script can split out.
std::string GroupsSummary(const ModelSpec& m, bool csv = false) {
  std::string s;
  for (const LayerGroup& g : m.groups) {
    if (!s.empty()) s += " + ";
    s += fmt::format("{} {}", g.layers, LayerKindName(g.kind));
    if (g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked) {
      s += csv ? fmt::format(" window {}", g.window) : fmt::format(" ({})", FormatTokens(g.window));
    }
    if (g.kind == LayerKind::kState && g.state_form != StateForm::kGiven) {
      s += fmt::format(" ({}{})", StateFormName(g.state_form), g.parallel ? ", beside" : "");
    }
  }
  return s;
}

// What one group keeps, one line: per token, per sequence, or nothing.
std::string CacheForm(const ModelSpec& m, const LayerGroup& g) {
  const std::string n = fmt::format("{} {}", g.layers, LayerKindName(g.kind));
  switch (g.kind) {
    case LayerKind::kFull:
      return fmt::format("{}: K and V of every token ({} KV heads x {}{})", n, g.kv_heads,
                         g.head_dim, g.k_eq_v ? "; V from the key projection" : "");
    case LayerKind::kSliding:
    case LayerKind::kChunked:
      return fmt::format("{}: K and V of at most {} tokens ({} {})", n, WithCommas(g.window),
                         g.kind == LayerKind::kSliding ? "window" : "chunk",
                         FormatTokens(g.window));
    case LayerKind::kMla:
      return fmt::format("{}: one latent of {} per token{}", n, m.mla->LatentDim(),
                         m.mla->index_head_dim != 0
                             ? fmt::format(" + an indexer key of {} B (decode reads the top {})",
                                           IndexerKeyBytes(*m.mla), WithCommas(m.mla->index_topk))
                             : "");
    case LayerKind::kState: {
      const StateShape st = LayerState(m, g, 1);
      return fmt::format("{}: {} per sequence and layer, fixed ({}: {}){}", n,
                         FormatGiB(st.Bytes()), StateFormName(st.form), st.Arithmetic(),
                         g.parallel ? ", beside the attention of the same layers" : "");
    }
    case LayerKind::kShared:
      return n + ": nothing (reads another layer's K and V)";
    case LayerKind::kNone:
      return n + ": nothing (MLP only)";
  }
  return n;
}

// "fp8 (128x128 blocks)" for a quantized checkpoint, "" for the rest.
std::string QuantLabel(const ModelSpec& m) {
  return m.quantization ? WeightFormatLabel(CheckpointWeightFormat(*m.quantization)) : "";
}

Json ModelJson(const ModelSpec& m) {
  Json j;
  j.Set("name", m.name);
  j.Set("hf_repo", m.hf_repo);
  j.Set("source", m.source);
  j.Set("architecture", m.architecture);
  j.Set("attention", m.AttentionKind());
  j.Set("layers", m.layers);
  j.Set("hidden_size", m.hidden_size);
  j.Set("query_heads", m.query_heads);
  j.Set("kv_heads", m.kv_heads);
  j.Set("head_dim", m.head_dim);
  j.Set("v_head_dim", m.v_head_dim);
  j.Set("max_context", m.max_context);
  j.Set("params", m.params);
  j.Set("weight_dtype", m.weight_dtype);
  if (m.quantization) {
    const QuantSpec& qs = *m.quantization;
    Json q;
    q.Set("format", qs.format);
    q.Set("block", qs.block);
    q.Set("group_size", qs.group_size);
    Json parts = Json::MakeArray();
    for (const std::string& p : qs.parts) parts.Push(p);
    q.Set("parts", std::move(parts));
    q.Set("label", QuantLabel(m));
    j.Set("quantization", std::move(q));
  } else {
    j.Set("quantization", nullptr);
  }
  j.Set("bytes_per_token_fp16", Fp16BytesPerToken(m));
  Json groups = Json::MakeArray();
  for (const LayerGroup& g : m.groups) {
    Json o;
    o.Set("kind", std::string(LayerKindName(g.kind)));
    o.Set("layers", g.layers);
    if (g.window) o.Set("window", g.window);
    if (g.state_bytes) o.Set("state_bytes", g.state_bytes);
    if (g.kind == LayerKind::kState) {
      o.Set("state_form", std::string(StateFormName(g.state_form)));
      o.Set("parallel", g.parallel);
    }
    if (!g.at.empty()) {
      Json at = Json::MakeArray();
      for (uint64_t i : g.at) at.Push(i);
      o.Set("at", std::move(at));
    }
    groups.Push(std::move(o));
  }
  j.Set("layer_groups", std::move(groups));
  return j;
}

// The fields the text and CSV views of one model print alike.
template <class Add>
void AddIdentity(const ModelSpec& m, Add& add) {
  add("name", m.name);
  add("hf_repo", m.hf_repo);
  add("architecture", m.architecture);
  add("attention", m.AttentionKind());
  add("layers", std::to_string(m.layers));
  add("hidden_size", std::to_string(m.hidden_size));
  add("query_heads", std::to_string(m.query_heads));
  add("kv_heads", std::to_string(m.kv_heads));
}

// One model as field,value rows for machines: plain numbers, the unit in
// the field name (the text's "163,840 (160K)" and "4,096 B (4.00 KiB)" do
// not parse). Words stay words (attention kind, the groups summary).
std::string OneCsv(const ModelSpec& m) {
  Table t({"field", "value"});
  auto add = [&](std::string k, std::string v) { t.AddRow({std::move(k), std::move(v)}); };
  AddIdentity(m, add);
  add("head_dim", std::to_string(m.head_dim));
  add("v_head_dim", std::to_string(m.v_head_dim));
  if (m.mla) {
    add("kv_lora_rank", std::to_string(m.mla->kv_lora_rank));
    add("qk_rope_head_dim", std::to_string(m.mla->qk_rope_head_dim));
  }
  add("layer_groups", GroupsSummary(m, true));
  add("max_context_tokens", std::to_string(m.max_context));
  add("params", std::to_string(m.params));
  add("weight_dtype", m.weight_dtype);
  add("quantization", QuantLabel(m));
  if (m.moe) {
    add("moe_experts", std::to_string(m.moe->experts));
    add("moe_experts_per_token", std::to_string(m.moe->experts_per_token));
    add("moe_shared_experts", std::to_string(m.moe->shared_experts));
  }
  add("kv_bytes_per_token_fp16", std::to_string(Fp16BytesPerToken(m)));
  add("source", m.source);
  return t.Csv();
}

void ShowOne(const ModelSpec& m, Format format) {
  if (format == Format::kJson) {
    Print(ModelJson(m).Dump() + "\n");
    return;
  }
  if (format == Format::kCsv) {
    Print(OneCsv(m));
    return;
  }
  Table t({"field", "value"});
  t.SetAlign(1, Table::Align::kLeft);
  auto add = [&](std::string k, std::string v) { t.AddRow({std::move(k), std::move(v)}); };
  AddIdentity(m, add);
  add("head_dim", m.head_dim == m.v_head_dim
                      ? std::to_string(m.head_dim)
                      : fmt::format("{} (v_head_dim {})", m.head_dim, m.v_head_dim));
  if (m.mla) {
    add("mla", fmt::format("kv_lora_rank {} + qk_rope_head_dim {} = {} cached per token-layer",
                           m.mla->kv_lora_rank, m.mla->qk_rope_head_dim, m.mla->LatentDim()));
  }
  add("layer groups", GroupsSummary(m));
  for (const LayerGroup& g : m.groups) add("  cache form", CacheForm(m, g));
  add("max_context", FormatTokens(m.max_context));
  add("params", WithCommas(m.params));
  add("weight_dtype", m.weight_dtype);
  if (m.quantization) {
    add("quantized weights", QuantLabel(m));
  }
  if (m.moe) {
    add("moe", fmt::format(
                   "{} experts, {} per token{}", m.moe->experts, m.moe->experts_per_token,
                   m.moe->shared_experts ? fmt::format(", {} shared", m.moe->shared_experts) : ""));
  }
  uint64_t bpt = Fp16BytesPerToken(m);
  add("KV bytes/token (fp16)", fmt::format("{} B ({})", WithCommas(bpt), FormatGiB(bpt)));
  add("source", m.source);
  Print(WrapText(t.Text("", OutputWidth()), OutputWidth()));
}

// --resolve MODEL: the route the resolution took, its notes, then the
// model in full (as `kvplan models NAME` shows it).
void ShowResolved(const ModelsOptions& o, Format format) {
  ResolveOptions options;
  options.revision = o.revision;
  const ResolvedModel r = ResolveModel(o.resolve, options);
  if (format == Format::kJson) {
    Json j;
    j.Set("route", std::string(ModelRouteName(r.kind)));
    j.Set("route_line", r.route);
    Json notes = Json::MakeArray();
    for (const std::string& n : r.notes) notes.Push(n);
    j.Set("notes", std::move(notes));
    j.Set("folder", r.folder);
    j.Set("checkpoint_bytes", r.spec.checkpoint_bytes);
    j.Set("checkpoint_bytes_from", r.spec.checkpoint_bytes_from);
    j.Set("model", ModelJson(r.spec));
    Print(j.Dump() + "\n");
    return;
  }
  if (format == Format::kText) {
    std::string head = r.route + "\n";
    for (const std::string& n : r.notes) head += "note: " + n + "\n";
    Print(WrapText(head, OutputWidth()) + "\n");
  }
  ShowOne(r.spec, format);
}

void Run(const ModelsOptions& o) {
  Format format = ToFormat(o.format);
  if (o.cached) {
    for (const std::string& id : CachedRepoIds(HfHubCacheDir())) Print(id + "\n");
    return;
  }
  if (!o.resolve.empty()) {
    ShowResolved(o, format);
    return;
  }
  if (!o.name.empty()) {
    ShowOne(LoadModel(o.name), format);
    return;
  }
  const std::vector<ModelSpec>& models = CatalogModels();
  if (format == Format::kJson) {
    Json arr = Json::MakeArray();
    for (const ModelSpec& m : models) arr.Push(ModelJson(m));
    Print(arr.Dump() + "\n");
    return;
  }
  if (format == Format::kCsv) {
    // Plain numbers for machines: the text's "131,072" and "128K" do not parse.
    Table c({"name", "layers", "query_heads", "kv_heads", "head_dim", "attention", "layer_groups",
             "kv_bytes_per_token_fp16", "max_context_tokens"});
    for (const ModelSpec& m : models) {
      c.AddRow({m.name, std::to_string(m.layers), std::to_string(m.query_heads),
                std::to_string(m.kv_heads), std::to_string(m.head_dim), m.AttentionKind(),
                GroupsSummary(m, true), std::to_string(Fp16BytesPerToken(m)),
                std::to_string(m.max_context)});
    }
    Print(c.Csv());
    return;
  }
  Table t({"name", "layers", "heads", "kv heads", "head dim", "attention", "layer groups",
           "KV bytes/token fp16", "max context"});
  t.SetAlign(6, Table::Align::kLeft);
  // Left out first when too wide: what the KV bytes are made of.
  t.SetDropOrder(6, 3);
  t.SetDropOrder(4, 2);
  t.SetDropOrder(2, 2);
  t.SetDropOrder(1, 1);
  for (const ModelSpec& m : models) {
    t.AddRow({m.name, std::to_string(m.layers), std::to_string(m.query_heads),
              std::to_string(m.kv_heads), std::to_string(m.head_dim), m.AttentionKind(),
              GroupsSummary(m), WithCommas(Fp16BytesPerToken(m)), FormatTokens(m.max_context)});
  }
  Print(t.Text("", OutputWidth()));
}

}  // namespace

void SetupModelsCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ModelsOptions>();
  CLI::App* sub = app.add_subcommand("models", "List the bundled model catalog, or show one model");
  sub->add_option("name", o->name, "A catalog name, HF repo id or spec file to show in full");
  AddFormatOption(sub, o->format);
  sub->add_option("--verify", o->verify,
                  "A spec YAML to compare with --against (exit 1 if any field differs)");
  sub->add_option("--against", o->against, "The Hugging Face config.json to compare --verify with");
  sub->add_option("--resolve", o->resolve,
                  "Show how a MODEL argument resolves (path, catalog, local Hugging Face cache, "
                  "Hub, derivative name) and the geometry it gives");
  AddRevisionOption(sub, o->revision);
  sub->add_flag("--cached", o->cached,
                "List the repo ids in the local Hugging Face cache (for shell completion)");
  sub->footer(
      "Examples:\n  kvplan models\n  kvplan models deepseek-v3\n  kvplan models --format json\n"
      "  kvplan models --resolve meta-llama/Llama-3.1-8B-Instruct\n"
      "  kvplan models --verify models/llama-3.1-8b.yaml --against ./Llama-3.1-8B/config.json");
  sub->callback([o, &exit_code] {
    if (!o->verify.empty() || !o->against.empty()) {
      if (o->verify.empty()) Fail("--against needs --verify SPEC.yaml");
      exit_code = RunModelsVerify(o->verify, o->against, o->format);
      return;
    }
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
