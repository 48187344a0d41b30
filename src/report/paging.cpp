#include "report/paging.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "report/capacity.h"
#include "report/table.h"
#include "report/terminal.h"
#include "util/units.h"

namespace kvplan {
namespace {

std::string Count(uint64_t v) {
  return v == UINT64_MAX ? "unbounded" : WithCommas(v);
}

Json AllocationJson(const AllocationResult& a, const CapacityResult& cap) {
  Json j;
  j.Set("concurrency", a.concurrency);
  j.Set("max_running", cap.RunningAtOnce(a.concurrency));
  j.Set("mean_request_bytes", a.mean_request_bytes);
  j.Set("allocated_bytes", a.allocated_bytes);
  j.Set("used_bytes", a.used_bytes);
  j.Set("waste_percent", a.WastePercent());
  j.Set("whole_mix_fits", a.whole_mix_fits);
  return j;
}

Json MixJson(const RequestMix& mix, const MixStats& st) {
  Json mj;
  mj.Set("source", mix.source);
  mj.Set("requests", st.count);
  mj.Set("mean_prompt_tokens", st.mean_prompt);
  mj.Set("mean_output_tokens", st.mean_output);
  mj.Set("p50_tokens", st.p50_tokens);
  mj.Set("p90_tokens", st.p90_tokens);
  mj.Set("p99_tokens", st.p99_tokens);
  mj.Set("max_tokens", st.max_tokens);
  return mj;
}

// The deployment and the mix, above the table.
std::string TextHeader(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                       const RequestMix& mix, const PagingResult& r) {
  const MixStats st = ComputeMixStats(mix);
  return fmt::format(
      "{} on {} · {} · KV cache {} · block {}\n"
      "KV budget {} per GPU = {}; max-model-len {}\n"
      "Request mix {}: {}, mean {} prompt + {} output tokens; "
      "length p50 {}, p90 {}, max {}\n\n",
      m.name, hw.name, EngineLabel(cap.config), cap.kv_cache_dtype, Plural(cap.block_size, "token"),
      FormatBoth(cap.kv_budget_bytes), Plural(r.budget_blocks, "block"),
      FormatTokens(cap.max_model_len), mix.source, Plural(st.count, "request"),
      WithCommas(static_cast<uint64_t>(st.mean_prompt + 0.5)),
      WithCommas(static_cast<uint64_t>(st.mean_output + 0.5)), WithCommas(st.p50_tokens),
      WithCommas(st.p90_tokens), WithCommas(st.max_tokens));
}

// One column per policy, one row per figure.
std::string PolicyTable(const CapacityResult& cap, const PagingResult& r, uint64_t shared_prefix,
                        size_t width) {
  std::vector<std::string> headers = {"", "contiguous (max-model-len)",
                                      fmt::format("paged ({}-token blocks)", cap.block_size)};
  if (r.has_prefix) headers.push_back(fmt::format("paged + {}-token shared prefix", shared_prefix));
  Table t(headers);
  std::vector<const AllocationResult*> cols = {&r.contiguous, &r.paged};
  if (r.has_prefix) cols.push_back(&r.prefix);
  auto add = [&](const std::string& label, auto cell) {
    std::vector<std::string> row = {label};
    for (const AllocationResult* a : cols) row.push_back(cell(*a));
    t.AddRow(row);
  };
  add("concurrent requests", [](const AllocationResult& a) { return Count(a.concurrency); });
  // What fits in memory, and what the scheduler runs of it at once.
  bool capped = false;
  for (const AllocationResult* a : cols)
    capped = capped || cap.RunningAtOnce(a->concurrency) < a->concurrency;
  if (capped) {
    add(fmt::format("  runs at once (max-num-seqs {})", WithCommas(cap.config.max_num_seqs)),
        [&cap](const AllocationResult& a) { return Count(cap.RunningAtOnce(a.concurrency)); });
  }
  add("memory per request", [](const AllocationResult& a) {
    return FormatGiB(static_cast<uint64_t>(a.mean_request_bytes));
  });
  add("whole mix at once", [](const AllocationResult& a) { return FormatGiB(a.allocated_bytes); });
  add("wasted (reserved, unused)",
      [](const AllocationResult& a) { return fmt::format("{:.1f} %", a.WastePercent()); });
  add("whole mix fits", [](const AllocationResult& a) { return a.whole_mix_fits ? "yes" : "no"; });
  return t.Text("  ", width);
}

// The sentences below the table: paging's gain and the shared prefix's.
std::string Conclusions(const PagingResult& r, uint64_t shared_prefix) {
  std::string out;
  if (r.contiguous.concurrency != 0 && r.contiguous.concurrency != UINT64_MAX &&
      r.paged.concurrency != UINT64_MAX) {
    out += fmt::format(
        "\nPaging holds {:.2f}x the requests of contiguous reservation.\n",
        static_cast<double>(r.paged.concurrency) / static_cast<double>(r.contiguous.concurrency));
  } else if (r.contiguous.concurrency == 0) {
    out += "\nNot one max-model-len reservation fits: a contiguous server could not start.\n";
  }
  if (r.has_prefix) {
    out += fmt::format(
        "Shared prefix: {} full blocks ({} tokens) stored once = {}; a request reuses {:.1f} "
        "blocks on average (the partial last block of the prefix stays private);\n"
        "  holding the whole mix needs {} less.\n",
        r.prefix_blocks, WithCommas(r.prefix_blocks * r.prefix_block_tokens),
        FormatGiB(r.prefix.shared_bytes), r.saved_blocks_per_request,
        FormatGiB(r.saved_bytes_whole_mix));
  } else if (shared_prefix > 0) {
    out +=
        "Shared prefix: no layer of this model keeps a prefix (sliding windows and state "
        "layers do not share), so nothing is saved.\n";
  }
  return out;
}

}  // namespace

std::string PagingText(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                       const RequestMix& mix, const PagingResult& r, uint64_t shared_prefix,
                       size_t width) {
  std::string out = TextHeader(m, hw, cap, mix, r);
  out += PolicyTable(cap, r, shared_prefix, width);
  out += Conclusions(r, shared_prefix);
  return width == 0 ? out : WrapText(out, width);
}

Json PagingJson(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                const RequestMix& mix, const PagingResult& r, uint64_t shared_prefix) {
  Json j;
  j.Set("model", m.name);
  j.Set("gpu", hw.name);
  SetEngineJson(j, cap);
  j.Set("kv_cache_dtype", cap.kv_cache_dtype);
  j.Set("kv_budget_bytes", cap.kv_budget_bytes);
  j.Set("block_size", cap.block_size);
  j.Set("block_bytes", r.block_bytes);
  j.Set("budget_blocks", r.budget_blocks);
  j.Set("max_model_len", cap.max_model_len);
  j.Set("mix", MixJson(mix, ComputeMixStats(mix)));
  const std::optional<uint64_t> limit = cap.RunningCap();
  j.Set("max_num_seqs", limit ? Json(*limit) : Json(nullptr));
  j.Set("contiguous", AllocationJson(r.contiguous, cap));
  j.Set("paged", AllocationJson(r.paged, cap));
  if (r.has_prefix) {
    Json pj = AllocationJson(r.prefix, cap);
    pj.Set("shared_prefix_tokens", shared_prefix);
    pj.Set("shared_blocks", r.prefix_blocks);
    pj.Set("shared_bytes", r.prefix.shared_bytes);
    pj.Set("saved_blocks_per_request", r.saved_blocks_per_request);
    pj.Set("saved_bytes_whole_mix", r.saved_bytes_whole_mix);
    j.Set("prefix_sharing", std::move(pj));
  }
  return j;
}

std::string PagingCsv(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                      const PagingResult& r) {
  Table t({"model", "gpu", "policy", "concurrency", "max_running", "mean_request_bytes",
           "allocated_bytes", "used_bytes", "waste_percent", "whole_mix_fits"});
  auto row = [&](const char* name, const AllocationResult& a) {
    t.AddRow({m.name, hw.name, name, std::to_string(a.concurrency),
              std::to_string(cap.RunningAtOnce(a.concurrency)),
              fmt::format("{:.0f}", a.mean_request_bytes), std::to_string(a.allocated_bytes),
              std::to_string(a.used_bytes), fmt::format("{:.2f}", a.WastePercent()),
              a.whole_mix_fits ? "true" : "false"});
  };
  row("contiguous", r.contiguous);
  row("paged", r.paged);
  if (r.has_prefix) row("paged_shared_prefix", r.prefix);
  return t.Csv();
}

}  // namespace kvplan
