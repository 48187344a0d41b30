// Text output fits the terminal: at COLUMNS=80 (and at the default 100 of
// a pipe with no COLUMNS) no line of the text commands, tables included,
// is wider than the width.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli_runner.h"
#include "report/table.h"

namespace kvplan::test {
namespace {

// The widest line of `text`, in display columns (UTF-8 code points).
size_t Widest(const std::string& text, std::string* line_out) {
  size_t widest = 0, start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    if (DisplayWidth(line) > widest) {
      widest = DisplayWidth(line);
      *line_out = line;
    }
    start = nl + 1;
  }
  return widest;
}

const std::vector<std::string>& Commands() {
  static const std::vector<std::string> cmds = {
      "size llama-3.1-70b -c 4K",
      "size jamba-v0.1 -c 256K -tp 2",
      "size deepseek-v3 -c 128K -b 4 --kv-cache-dtype fp8_ds_mla",
      "size gemma-3-27b -c 32K --explain",
      "capacity llama-3.1-8b --gpu h100-sxm",
      "capacity gemma-3-27b --gpu h100-sxm",
      "capacity deepseek-v3 --gpu h200 -tp 8 --nodes 2 -pp 2 --weight-dtype fp8 --concurrency 64",
      "capacity gemma-3-27b --gpu rtx-4090 --engine llama.cpp -c 32K -np 4 --kv-cache-dtype q8_0 "
      "--weight-dtype int4",
      "latency llama-3.1-8b --gpu h100-sxm -c 4K -b 8",
      "latency mixtral-8x7b --gpu a100-80gb -c 8K --prompt 2K",
      "latency llama-3.1-70b --gpu h100-sxm -tp 4 --kv-cache-dtype fp8 -c 32K -b 16",
      "check " + SourcePath("examples"),
      "models",
      "models deepseek-v3",
      "models gemma-3-27b",
      "gpus",
      "compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,trtllm,llama.cpp",
      "compare llama-3.1-70b --gpu h100-sxm --vary tp=2,4,8 --kv-cache-dtype fp8",
      "tradeoff llama-3.1-8b --gpu h100-sxm",
      "paging llama-3.1-8b --gpu h100-sxm --mix uniform:prompt=100..8000,output=50..2000",
      "--help",
      "size --help",
      "models --help",
      "gpus --help",
      "capacity --help",
      "tradeoff --help",
      "compare --help",
      "paging --help",
      "latency --help",
      "bench --help",
      "demo --help",
      "check --help",
      "import-hf --help",
  };
  return cmds;
}

}  // namespace

TEST_CASE("COLUMNS=80: no line of text output is wider than 80 columns") {
  for (const std::string& cmd : Commands()) {
    CAPTURE(cmd);
    const CliResult r = RunKvplan(cmd, "", "COLUMNS=80");
    CHECK(r.exit_code <= 1);
    CHECK(!r.out.empty());
    std::string line;
    const size_t widest = Widest(r.out, &line);
    CAPTURE(line);
    CHECK(widest <= 80);
  }
}

TEST_CASE("no COLUMNS and no terminal: text fits 100 columns") {
  for (const std::string& cmd : Commands()) {
    CAPTURE(cmd);
    const CliResult r = RunKvplan(cmd, "", "");
    CHECK(r.exit_code <= 1);
    std::string line;
    const size_t widest = Widest(r.out, &line);
    CAPTURE(line);
    CHECK(widest <= 100);
  }
}

TEST_CASE("a narrow table leaves out its least important columns and says which") {
  const CliResult r = RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 4K -b 8", "", "COLUMNS=80");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  (not shown, to fit 80 columns: weights read, KV read)\n") !=
        std::string::npos);
  CHECK(r.out.find("tok/s total") != std::string::npos);
  // Wide enough: every column, no note.
  const CliResult wide = RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 4K -b 8");
  CHECK(wide.out.find("weights read") != std::string::npos);
  CHECK(wide.out.find("not shown") == std::string::npos);
}

TEST_CASE("COLUMNS that is no positive number is ignored") {
  const CliResult wide = RunKvplan("models");
  for (const char* env : {"COLUMNS=abc", "COLUMNS=0", "COLUMNS=-5", "COLUMNS="}) {
    CAPTURE(env);
    const CliResult r = RunKvplan("models", "", env);
    std::string line;
    CHECK(Widest(r.out, &line) <= 100);
  }
  std::string line;
  CHECK(Widest(wide.out, &line) > 100);  // the golden width shows every column
}

}  // namespace kvplan::test
