// kvplan size: bytes per token, per sequence and in total, per layer group
// and per tensor-parallel rank, with --explain for the derivation.
#include <fmt/format.h>

#include <optional>

#include "cli/commands.h"
#include "cli/model_route.h"
#include "import/resolve.h"
#include "plan/kv.h"
#include "report/explain.h"
#include "report/json.h"
#include "report/table.h"
#include "report/terminal.h"
#include "spec/catalog.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct SizeOptions {
  std::string model;
  std::string revision = "main";
  std::optional<std::string> context;  // default: the model's max context
  std::string batch = "1";
  std::string dtype = "auto";
  uint64_t tp = 1;
  std::string format = "text";
  bool explain = false;
};

std::string GroupLabel(const GroupCost& g, const LayerGroup& lg) {
  std::string s(LayerKindName(g.kind));
  if (g.kind == LayerKind::kSliding) s += fmt::format(" ({})", WithCommas(lg.window));
  if (g.kind == LayerKind::kChunked) s += fmt::format(" ({})", WithCommas(lg.window));
  return s;
}

Json ByteKeys(const KvCost& cost, uint64_t n, uint64_t batch) {
  Json j;
  j.Set("bytes_per_token", cost.per_token_bytes);
  j.Set("bytes_per_sequence", cost.SequenceBytes(n));
  j.Set("bytes_total", cost.TotalBytes(n, batch));
  return j;
}

Json ToJson(const ModelSpec& m, const KvCost& cost, const KvCost& rank, uint64_t n,
            uint64_t batch) {
  Json j;
  j.Set("model", m.name);
  j.Set("hf_repo", m.hf_repo);
  j.Set("attention", m.AttentionKind());
  j.Set("kv_cache_dtype", cost.dtype);
  j.Set("context_tokens", n);
  j.Set("batch", batch);
  j.Set("bytes_per_token", cost.per_token_bytes);
  j.Set("bytes_per_sequence", cost.SequenceBytes(n));
  j.Set("bytes_total", cost.TotalBytes(n, batch));
  j.Set("fixed_bytes_per_sequence", cost.fixed_bytes);
  Json groups = Json::MakeArray();
  for (size_t i = 0; i < cost.groups.size(); ++i) {
    const GroupCost& g = cost.groups[i];
    Json o;
    o.Set("kind", std::string(LayerKindName(g.kind)));
    o.Set("layers", g.layers);
    o.Set("kv_heads", g.kv_heads);
    o.Set("head_dim", g.head_dim);
    o.Set("v_head_dim", g.v_head_dim);
    o.Set("window", g.cap_tokens);
    o.Set("tokens_held", g.TokensHeld(n));
    o.Set("bytes_per_token", g.per_token_bytes);
    o.Set("fixed_bytes", g.fixed_bytes);
    o.Set("bytes_per_sequence", g.SequenceBytes(n));
    o.Set("bytes_total", CheckedMul(g.SequenceBytes(n), batch));
    groups.Push(std::move(o));
  }
  j.Set("groups", std::move(groups));
  Json per_rank = ByteKeys(rank, n, batch);
  per_rank.Set("tp", rank.tp);
  // The KV heads of the first group that keeps tokens (0: attention-free).
  uint64_t kv_heads_per_rank = 0;
  for (size_t i = 0; i < rank.groups.size() && kv_heads_per_rank == 0; ++i) {
    if (rank.groups[i].per_token_bytes != 0) kv_heads_per_rank = rank.groups[i].kv_heads;
  }
  per_rank.Set("kv_heads_per_rank", kv_heads_per_rank);
  per_rank.Set("bytes_all_ranks", CheckedMul(rank.TotalBytes(n, batch), rank.tp));
  j.Set("per_rank", std::move(per_rank));
  return j;
}

std::string ToText(const ModelSpec& m, const CacheDtype& dtype, const KvCost& cost,
                   const KvCost& rank, uint64_t n, uint64_t batch, size_t width) {
  std::string out;
  out += fmt::format("{}{} · {} · {} · {} / {} · head_dim {}\n", m.name,
                     m.hf_repo.empty() ? "" : " (" + m.hf_repo + ")", m.AttentionKind(),
                     Plural(m.layers, "layer"), Plural(m.query_heads, "query head"),
                     Plural(m.kv_heads, "KV head"), m.head_dim);
  out += fmt::format("KV cache {} · context {} {} · batch {}\n\n", dtype.name, FormatTokens(n),
                     n == 1 ? "token" : "tokens", batch);
  Table totals({"", "bytes", "binary", "decimal"});
  auto row = [&](const std::string& label, uint64_t bytes) {
    totals.AddRow({label, WithCommas(bytes), FormatGiB(bytes), FormatGB(bytes)});
  };
  row("per token", cost.per_token_bytes);
  if (cost.fixed_bytes) row("fixed per sequence", cost.fixed_bytes);
  row("per sequence", cost.SequenceBytes(n));
  row(fmt::format("total (batch {})", batch), cost.TotalBytes(n, batch));
  totals.SetDropOrder(1, 2);
  totals.SetDropOrder(3, 1);
  out += totals.Text("  ", width);
  out += "\n";
  Table groups({"layer group", "layers", "kv heads", "head dim", "tokens held", "per token",
                "per sequence"});
  for (size_t i = 0; i < cost.groups.size(); ++i) {
    const GroupCost& g = cost.groups[i];
    std::string dims =
        g.kind == LayerKind::kMla
            ? fmt::format("{} latent", g.head_dim)
            : (g.head_dim == g.v_head_dim ? std::to_string(g.head_dim)
                                          : fmt::format("{}/{}", g.head_dim, g.v_head_dim));
    bool holds = g.bytes_per_token_layer != 0;
    groups.AddRow({GroupLabel(g, m.groups[i]), std::to_string(g.layers),
                   holds && g.kind != LayerKind::kMla ? std::to_string(g.kv_heads) : "-",
                   holds ? dims : "-", holds ? WithCommas(g.TokensHeld(n)) : "-",
                   WithCommas(g.per_token_bytes),
                   g.kind == LayerKind::kState ? FormatGiB(g.SequenceBytes(n)) + " (fixed)"
                                               : FormatGiB(g.SequenceBytes(n))});
  }
  groups.SetDropOrder(2, 2);
  groups.SetDropOrder(3, 2);
  groups.SetDropOrder(4, 1);
  out += groups.Text("  ", width);
  if (rank.tp > 1) {
    out += fmt::format(
        "\nper rank (tensor parallel {}): {} per token, {} per sequence, {} for the batch;\n"
        "  all {} ranks together hold {}{}\n",
        rank.tp, WithCommas(rank.per_token_bytes) + " B", FormatBoth(rank.SequenceBytes(n)),
        FormatBoth(rank.TotalBytes(n, batch)), rank.tp,
        FormatBoth(CheckedMul(rank.TotalBytes(n, batch), rank.tp)),
        CheckedMul(rank.TotalBytes(n, batch), rank.tp) > cost.TotalBytes(n, batch)
            ? " (KV heads or the MLA latent are replicated across ranks)"
            : "");
  }
  return WrapText(out, width);
}

// One row per layer group and a total; the per-rank columns are the
// tensor-parallel split's (equal to the whole at tp 1).
std::string ToCsv(const ModelSpec& m, const KvCost& cost, const KvCost& rank, uint64_t n,
                  uint64_t batch) {
  Table t({"model", "kv_cache_dtype", "group", "kind", "layers", "kv_heads", "head_dim",
           "tokens_held", "bytes_per_token", "bytes_per_sequence", "bytes_total", "tp",
           "kv_heads_per_rank", "bytes_per_token_per_rank", "bytes_per_sequence_per_rank",
           "bytes_total_per_rank"});
  for (size_t i = 0; i < cost.groups.size(); ++i) {
    const GroupCost& g = cost.groups[i];
    const GroupCost& r = rank.groups.at(i);
    t.AddRow({m.name, cost.dtype, std::to_string(i), std::string(LayerKindName(g.kind)),
              std::to_string(g.layers), std::to_string(g.kv_heads), std::to_string(g.head_dim),
              std::to_string(g.TokensHeld(n)), std::to_string(g.per_token_bytes),
              std::to_string(g.SequenceBytes(n)),
              std::to_string(CheckedMul(g.SequenceBytes(n), batch)), std::to_string(rank.tp),
              std::to_string(r.kv_heads), std::to_string(r.per_token_bytes),
              std::to_string(r.SequenceBytes(n)),
              std::to_string(CheckedMul(r.SequenceBytes(n), batch))});
  }
  t.AddRow({m.name, cost.dtype, "total", "", std::to_string(m.layers), "", "", std::to_string(n),
            std::to_string(cost.per_token_bytes), std::to_string(cost.SequenceBytes(n)),
            std::to_string(cost.TotalBytes(n, batch)), std::to_string(rank.tp), "",
            std::to_string(rank.per_token_bytes), std::to_string(rank.SequenceBytes(n)),
            std::to_string(rank.TotalBytes(n, batch))});
  return t.Csv();
}

void Run(const SizeOptions& o) {
  ModelSpec m = LoadModelAndSay(o.model, o.revision);
  const uint64_t n = o.context ? ParseTokens(*o.context, "--context") : m.max_context;
  if (n == 0) Fail("--context: must be at least 1 token");
  uint64_t batch = ParseTokens(o.batch, "--batch");
  if (batch == 0) Fail("--batch: must be at least 1");
  const CacheDtype& dtype = ResolveCacheDtype(m, o.dtype);
  CheckKvConfig(m, dtype, 1);
  CheckKvConfig(m, dtype, o.tp);
  KvCost cost = ComputeKvCost(m, dtype, 1);
  KvCost rank = ComputeKvCost(m, dtype, o.tp);
  // Compute every figure once up front so overflow is reported before output.
  cost.TotalBytes(n, batch);
  CheckedMul(rank.TotalBytes(n, batch), rank.tp);
  if (m.max_context > 0 && n > m.max_context) {
    // A fair question (what would a longer context cost?), so answered, but
    // not silently: no engine serves it without overriding the model's limit.
    WriteStderr(fmt::format(
        "kvplan: note: {} tokens is beyond {}'s max_context of {}; the figures extrapolate\n",
        WithCommas(n), OneLine(m.name), WithCommas(m.max_context)));
  }
  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(ToJson(m, cost, rank, n, batch).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(ToCsv(m, cost, rank, n, batch));
      break;
    case Format::kText:
      Print(o.explain ? WrapText(ExplainSize(m, dtype, cost, n, batch, rank), OutputWidth())
                      : ToText(m, dtype, cost, rank, n, batch, OutputWidth()));
      break;
  }
}

}  // namespace

void SetupSizeCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SizeOptions>();
  CLI::App* sub = app.add_subcommand(
      "size", "KV-cache bytes per token, per sequence and in total, per layer group and rank");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json")
      ->required();
  AddRevisionOption(sub, o->revision);
  sub->add_option("-c,--context,--max-model-len", o->context,
                  "Tokens per sequence (4096, 4k = 4000, 4K = 4096; default: the model's max)");
  sub->add_option("-b,--batch", o->batch, "Sequences held at once")->capture_default_str();
  sub->add_option("--kv-cache-dtype", o->dtype,
                  "Cache dtype: auto (= weights), fp32, fp16, bf16, fp8 (e4m3), fp8_e5m2, int8, "
                  "int8_pth, fp8_pth, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1, nvfp4, fp8_ds_mla")
      ->capture_default_str();
  sub->add_option("--tp,--tensor-parallel-size", o->tp, "Tensor-parallel ranks (also -tp)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  AddFormatOption(sub, o->format);
  sub->add_flag("--explain", o->explain,
                "Show the derivation with the numbers substituted, and the mistakes it avoids");
  sub->footer(R"(Examples:
  kvplan size llama-3.1-70b -c 4K --explain
  kvplan size deepseek-v3 -c 128K -b 4 --kv-cache-dtype fp8_ds_mla
  kvplan size gemma-3-27b -c 32k --format json
  kvplan size meta-llama/Llama-3.1-8B -c 8K -tp 2)");
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
