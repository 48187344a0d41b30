#include "report/compare.h"

#include <fmt/format.h>

#include "report/capacity.h"
#include "report/table.h"
#include "report/terminal.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

std::string FormatValue(double v, const std::string& unit) {
  if (unit == "bytes") return FormatGiB(static_cast<uint64_t>(v));
  if (unit == "x") return fmt::format("{:.2f}x", v);
  return WithCommas(static_cast<uint64_t>(v));
}

}  // namespace

std::string CompareText(const std::vector<CompareColumn>& cols, const std::vector<CompareRow>& rows,
                        const std::string& vary_key, size_t width) {
  std::vector<std::string> headers = {""};
  for (const CompareColumn& c : cols) headers.push_back(c.label);
  Table t(headers);
  auto text_row = [&](const std::string& label, auto cell) {
    std::vector<std::string> r = {label};
    for (const CompareColumn& c : cols) r.push_back(cell(c));
    t.AddRow(r);
  };
  text_row("model", [](const CompareColumn& c) { return c.model.name; });
  text_row("gpu", [](const CompareColumn& c) { return c.gpu.name; });
  text_row("engine · KV dtype", [](const CompareColumn& c) {
    return fmt::format("{} · {}", EngineLabel(c.cap.config), c.cap.kv_cache_dtype);
  });
  if (vary_key == "engine") {
    // Each engine's own fraction, given or its default, so columns
    // sized by different rules can be read side by side.
    text_row("memory fraction", [](const CompareColumn& c) {
      return !FractionRead(c.cap.config) ? std::string("-")
                                         : fmt::format("{:g}", c.cap.config.memory_fraction);
    });
  }
  text_row("weights", [](const CompareColumn& c) { return c.cap.weight_format; });
  text_row("tp x pp", [](const CompareColumn& c) {
    return fmt::format("{} x {}", c.cap.config.tp, c.cap.config.pp);
  });
  text_row("engine starts", [](const CompareColumn& c) {
    return c.refused.empty() ? std::string("yes") : std::string("no (below)");
  });
  for (const CompareRow& row : rows) {
    std::vector<std::string> r = {row.label};
    for (size_t i = 0; i < cols.size(); ++i) {
      if (!cols[i].figures) {
        r.push_back("-");
        continue;
      }
      std::string cell = FormatValue(row.values[i], row.unit);
      if (i > 0 && row.values[0] != 0 && cols[0].figures) {
        cell += fmt::format(" ({:.2f}x)", row.Ratio(i));
      }
      r.push_back(cell);
    }
    t.AddRow(r);
  }
  std::string out = t.Text("  ", width);
  out += fmt::format("\nRatios in parentheses are against the first column ({}).\n", cols[0].label);
  for (const CompareColumn& c : cols) {
    if (c.refused.empty()) continue;
    out += OneLine(fmt::format("{}: the engine would not start: {}",
                               c.label.empty() ? c.model.name : c.label, c.refused)) +
           "\n";
  }
  if (vary_key == "engine") {
    out +=
        "Memory fraction: each engine's own, given or its default: vLLM "
        "--gpu-memory-utilization and SGLang --mem-fraction-static of the GPU's memory, "
        "TRT-LLM --free-gpu-memory-fraction of what is free after loading; '-': none is read "
        "(llama.cpp, or vLLM given --kv-cache-memory-bytes).\n";
  }
  return width == 0 ? out : WrapText(out, width, 0);
}

std::string CompareCsv(const std::vector<CompareColumn>& cols, const std::vector<CompareRow>& rows,
                       const std::string& vary_key) {
  Table t({"metric", "configuration", "model", "gpu", "value", "ratio_to_first"});
  if (vary_key == "engine") {
    // As the text's row: each engine's own fraction (empty where none
    // is read); no ratio, the engines apply them to different bases.
    for (const CompareColumn& c : cols) {
      t.AddRow({"memory_fraction", c.label, c.model.name, c.gpu.name,
                FractionRead(c.cap.config) ? fmt::format("{:g}", c.cap.config.memory_fraction) : "",
                ""});
    }
  }
  for (const CompareColumn& c : cols) {
    t.AddRow(
        {"engine_starts", c.label, c.model.name, c.gpu.name, c.refused.empty() ? "1" : "0", ""});
  }
  for (const CompareRow& row : rows) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (!cols[i].figures) {  // nothing computed: empty cells
        t.AddRow({row.key, cols[i].label, cols[i].model.name, cols[i].gpu.name, "", ""});
        continue;
      }
      t.AddRow({row.key, cols[i].label, cols[i].model.name, cols[i].gpu.name,
                row.unit == "x" ? fmt::format("{:.4f}", row.values[i])
                                : fmt::format("{:.0f}", row.values[i]),
                cols[0].figures ? fmt::format("{:.4f}", row.Ratio(i)) : ""});
    }
  }
  return t.Csv();
}

Json CompareJson(const std::vector<CompareColumn>& cols, const std::vector<CompareRow>& rows) {
  Json arr = Json::MakeArray();
  for (size_t i = 0; i < cols.size(); ++i) {
    const CompareColumn& c = cols[i];
    Json j;
    j.Set("label", c.label);
    j.Set("model", c.model.name);
    j.Set("gpu", c.gpu.name);
    SetEngineJson(j, c.cap);
    // The engine's fraction, given or its default (null where none is
    // read: llama.cpp, vLLM given a budget).
    if (!FractionRead(c.cap.config))
      j.Set("memory_fraction", nullptr);
    else
      j.Set("memory_fraction", c.cap.config.memory_fraction);
    j.Set("kv_cache_dtype", c.cap.kv_cache_dtype);
    j.Set("weight_dtype", c.cap.weight_dtype);
    j.Set("weight_format", c.cap.weight_format);
    j.Set("tp", c.cap.config.tp);
    j.Set("pp", c.cap.config.pp);
    j.Set("engine_starts", c.refused.empty());
    if (c.refused.empty()) {
      j.Set("refused", nullptr);
    } else {
      j.Set("refused", c.refused);
    }
    Json ratios;
    for (const CompareRow& row : rows) {
      if (!c.figures) {
        j.Set(row.key, nullptr);
        ratios.Set(row.key, nullptr);
        continue;
      }
      if (row.unit == "x")
        j.Set(row.key, row.values[i]);
      else
        j.Set(row.key, static_cast<uint64_t>(row.values[i]));
      if (cols[0].figures) {
        ratios.Set(row.key, row.Ratio(i));
      } else {
        ratios.Set(row.key, nullptr);
      }
    }
    j.Set("ratio_to_first", std::move(ratios));
    j.Set("lints", LintsJson(c.cap.lints));
    arr.Push(std::move(j));
  }
  Json top;
  top.Set("configurations", std::move(arr));
  return top;
}

}  // namespace kvplan
