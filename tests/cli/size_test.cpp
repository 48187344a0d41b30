// Golden outputs and exact error text of `kvplan size` and `kvplan models`,
// run through the real executable. Regenerate goldens after an intended
// change with: KVPLAN_UPDATE_GOLDEN=1 ./build/release/tests/kvplan_tests
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

using namespace kvplan::test;

namespace {

void CheckGolden(const std::string& name, const std::string& args) {
  CAPTURE(args);
  CliResult r = RunKvplan(args);
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  std::string path = SourcePath("tests/golden/" + name);
  if (std::getenv("KVPLAN_UPDATE_GOLDEN") != nullptr) {
    WriteFile(SourcePath("tests/golden"), name, r.out);
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing golden file " << path);
  CHECK(r.out == ReadFile(path));
}

void CheckError(const std::string& args, const std::string& expected_line) {
  CAPTURE(args);
  CliResult r = RunKvplan(args);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(LineCount(r.err) == 1);
  CHECK(r.err == expected_line + "\n");
}

}  // namespace

TEST_CASE("size: golden outputs") {
  CheckGolden("size-llama-3.1-70b-4K.txt", "size llama-3.1-70b -c 4K");
  CheckGolden("size-llama-3.1-70b-4K-explain.txt", "size llama-3.1-70b -c 4K --explain");
  CheckGolden("size-llama-3.1-70b-4K.json", "size llama-3.1-70b -c 4K --format json");
  CheckGolden("size-llama-3.1-8b-4k.csv", "size llama-3.1-8b -c 4k --format csv");
  CheckGolden("size-gemma-3-27b-32K-explain.txt", "size gemma-3-27b -c 32K -b 2 --explain");
  CheckGolden("size-jamba-256K-tp2.txt", "size jamba-v0.1 -c 256K -tp 2");
  // The per-rank columns beside the whole: KV heads split, Mamba state split.
  CheckGolden("size-jamba-256K-tp2.csv", "size jamba-v0.1 -c 256K -tp 2 --format csv");
  CheckGolden("size-deepseek-v3-fp8-explain.txt",
              "size deepseek-v3 -c 128K --kv-cache-dtype fp8_ds_mla --explain");
  CheckGolden("size-llama-2-7b-q8_0-explain.txt",
              "size llama-2-7b -c 4096 --kv-cache-dtype q8_0 --explain");
  CheckGolden("models.txt", "models");
  CheckGolden("models-deepseek-v3.txt", "models deepseek-v3");
}

TEST_CASE("size: the published figures through the CLI") {
  CliResult r = RunKvplan("size llama-2-7b -c 4096 --kv-cache-dtype fp16 --format json");
  CHECK(r.out.find("\"bytes_per_sequence\": 2147483648,") != std::string::npos);
  r = RunKvplan("size llama-3-70b -c 4K --kv-cache-dtype fp16 --format json");
  CHECK(r.out.find("\"bytes_total\": 1342177280,") != std::string::npos);
  r = RunKvplan("size deepseek-v3 -c 1 --format json");
  CHECK(r.out.find("\"bytes_per_token\": 70272,") != std::string::npos);
  // The HF repo id works as a model name, and a path beats a name.
  r = RunKvplan("size meta-llama/Llama-3.1-8B -c 8K --format csv");
  CHECK(r.exit_code == 0);
  r = RunKvplan("size '" + SourcePath("models/gpt2.yaml") + "' -c 1K --format json");
  CHECK(r.out.find("\"model\": \"gpt2\"") != std::string::npos);
  // The resolved token count is printed: 4k = 4000, 4K = 4096.
  CHECK(RunKvplan("size gpt2 -c 4k").out.find("context 4,000 tokens") != std::string::npos);
  CHECK(RunKvplan("size gpt2 -c 4K").out.find("context 4,096 (4K) tokens") != std::string::npos);
}

TEST_CASE("size: bad input exits 2 with one line") {
  CheckError("size llama-3.2",
             "kvplan: error: unknown model 'llama-3.2' (did you mean 'llama-3.2-1b', "
             "'llama-3.2-3b'?); `kvplan models` lists the catalog");
  CheckError(
      "size gpt2 --kv-cache-dtype q9",
      "kvplan: error: unknown cache dtype 'q9' (known: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, "
      "int8, int8_pth, fp8_pth, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1, nvfp4, fp8_ds_mla)");
  CheckError("size llama-3.1-405b -c 1M -b 99999999999",
             "kvplan: error: overflow: total cache bytes (per sequence x batch) = 541165879296 x "
             "99999999999 does not fit in 64 bits");
  CheckError("size gpt2 -c -5", "kvplan: error: --context: '-5' is negative");
  CheckError("size gpt2 -c 4q",
             "kvplan: error: --context: '4q' has an unknown suffix 'q' (use k/m/g = 1000s, K/M/G = "
             "1024s)");
  CheckError("size gpt2 -b 0", "kvplan: error: --batch: must be at least 1");
  CheckError("size llama-3.1-8b -tp 3",
             "kvplan: error: tensor parallel size 3 does not divide the 32 query heads of "
             "llama-3.1-8b");
  CheckError("size deepseek-v3 --kv-cache-dtype q4_0 -c 1K --tp 5",
             "kvplan: error: tensor parallel size 5 does not divide the 128 query heads of "
             "deepseek-v3");
  CheckError("size llama-3.1-8b --kv-cache-dtype fp8_ds_mla",
             "kvplan: error: cache dtype fp8_ds_mla needs an MLA model with kv_lora_rank 512 and "
             "qk_rope_head_dim 64 (llama-3.1-8b is not one)");
  CheckError("size missing.yaml",
             "kvplan: error: missing.yaml: cannot open file: No such file or directory");
  CheckError("size", "kvplan: error: model is required (see kvplan --help)");
  CheckError("size gpt2 --format xml",
             "kvplan: error: --format: xml not in {text,json,csv} (see kvplan --help)");
  CheckError("frobnicate",
             "kvplan: error: unknown command 'frobnicate'; `kvplan --help` lists the commands");
  CheckError("sise gpt2",
             "kvplan: error: unknown command 'sise' (did you mean 'size'?); `kvplan --help` lists "
             "the commands");
}

TEST_CASE("size: past the model's max_context it answers, with a note on stderr") {
  CliResult r = RunKvplan("size llama-3.1-8b -c 1M --format json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"bytes_total\": 137438953472") != std::string::npos);  // 128 KiB x 1Mi
  CHECK(r.err ==
        "kvplan: note: 1,048,576 tokens is beyond llama-3.1-8b's max_context of 131,072; the "
        "figures extrapolate\n");
  CliResult at = RunKvplan("size llama-3.1-8b -c 128K");
  CHECK(at.exit_code == 0);
  CHECK(at.err == "");
  // An empty value is an error, not the default.
  CheckError("size llama-3.1-8b -c ''",
             "kvplan: error: --context: empty value (see kvplan --help)");
}

TEST_CASE("size: bad spec files name file:line:col and field") {
  std::string dir = TempDir();
  std::string good = ReadFile(SourcePath("models/llama-3.1-8b.yaml"));
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return t;
  };
  WriteFile(dir, "bad-kv.yaml", replaced("kv_heads: 8", "kv_heads: 12"));
  CliResult r = RunKvplan("size bad-kv.yaml", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad-kv.yaml:") == std::string("kvplan: error: ").size());
  CHECK(r.err.find(": kv_heads: 12 does not divide query_heads 32\n") != std::string::npos);
  CHECK(LineCount(r.err) == 1);

  WriteFile(dir, "malformed.yaml", "name: x\nlayers: [1, 2\n");
  r = RunKvplan("size malformed.yaml", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("kvplan: error: malformed.yaml:3:1: malformed YAML: ", 0) == 0);

  WriteFile(dir, "missing.yaml", replaced("layers: 32", ""));
  r = RunKvplan("size missing.yaml", dir);
  CHECK(r.err == "kvplan: error: missing.yaml:5:1: model spec: missing required field 'layers'\n");

  WriteFile(dir, "zero.yaml", replaced("head_dim: 128", "head_dim: 0"));
  r = RunKvplan("size zero.yaml", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(": head_dim: must be positive, got 0\n") != std::string::npos);

  WriteFile(dir, "negative.yaml", replaced("max_context: 131072", "max_context: -1"));
  r = RunKvplan("size negative.yaml", dir);
  CHECK(r.err.find(": max_context: must be positive, got -1\n") != std::string::npos);
}

TEST_CASE("help carries examples") {
  CliResult r = RunKvplan("--help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Examples:") != std::string::npos);
  r = RunKvplan("size --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("kvplan size llama-3.1-70b -c 4K --explain") != std::string::npos);
}

namespace {

// The `kvplan ...` command lines of an "Examples:" footer or a README code
// block: "\" continuations joined, a trailing description (after 3+
// spaces, or a "# " comment) cut.
std::vector<std::string> ExampleCommands(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line, cmd;
  while (std::getline(in, line)) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    line = line.substr(start);
    if (cmd.empty() && line.rfind("kvplan ", 0) != 0) continue;
    const bool more = !line.empty() && line.back() == '\\';
    if (more) line.pop_back();
    cmd += line;
    if (more) continue;
    for (const char* cut : {"   ", "# "}) {
      const size_t at = cmd.find(cut);
      if (at != std::string::npos) cmd.erase(at);
    }
    while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
    out.push_back(cmd.substr(std::string("kvplan ").size()));
    cmd.clear();
  }
  return out;
}

}  // namespace

TEST_CASE("every example in --help and the README runs") {
  // Placeholder paths, files written, the benchmarks and shell plumbing are
  // left out; everything else runs as printed, from the source tree.
  const auto skipped = [](const std::string& c) {
    for (const char* s : {"./", "deploy/", "bench", "demo", "--validate", "import-hf", "--svg",
                          "config.json", "--profile", ">", "|", "&&"}) {
      if (c.find(s) != std::string::npos) return true;
    }
    return false;
  };
  std::vector<std::string> commands;
  for (const char* sub : {"", "size", "models", "gpus", "capacity", "tradeoff", "compare", "paging",
                          "latency", "check"}) {
    const CliResult help = RunKvplan(std::string(sub) + " --help");
    REQUIRE(help.exit_code == 0);
    const size_t at = help.out.find("Examples:");
    REQUIRE(at != std::string::npos);
    for (const std::string& c : ExampleCommands(help.out.substr(at))) commands.push_back(c);
  }
  const std::string readme = ReadFile(SourcePath("README.md"));
  const size_t examples = readme.find("## Examples");
  REQUIRE(examples != std::string::npos);
  for (const std::string& c :
       ExampleCommands(readme.substr(examples, readme.find("\n## ", examples + 1) - examples))) {
    commands.push_back(c);
  }
  int ran = 0;
  for (const std::string& c : commands) {
    if (skipped(c)) continue;
    CAPTURE(c);
    const CliResult r = RunKvplan(c, SourcePath(""));
    CAPTURE(r.err);
    // check's examples may show a FAIL (exit 1); nothing may be refused.
    CHECK((r.exit_code == 0 || (c.rfind("check", 0) == 0 && r.exit_code == 1)));
    CHECK(!r.out.empty());
    ++ran;
  }
  CHECK(ran >= 30);
}

TEST_CASE(
    "size --explain: doubling the context under a sliding window, from the window's numbers") {
  // Mistral-7B-v0.1: every layer keeps at most 4,096 tokens. From 8K to 16K
  // the cache stays 512 MiB and prefill attention grows 58,722,304 /
  // 25,167,872 pairs = 2.33x, not 4x.
  CliResult r = RunKvplan("size mistral-7b-v0.1 -c 8K --explain");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("the cache grows 512.00 MiB -> 512.00 MiB per sequence (1.0x)") !=
        std::string::npos);
  CHECK(r.out.find("  - prefill attention work grows 2.3x, not 4x: in windowed layers a token "
                   "attends to at most its window (quadratic up to the window, linear past it); "
                   "the weight matmuls of prefill double\n") != std::string::npos);
  CHECK(r.out.find("  - each decode step reads the whole cache, which does not grow here, so time "
                   "per output token stays about the same\n") != std::string::npos);
  CHECK(r.out.find("quadruples") == std::string::npos);
  // Below the window the window does not bite: 1K -> 2K quadruples, as full attention.
  CliResult s = RunKvplan("size mistral-7b-v0.1 -c 1K --explain");
  CHECK(s.out.find("prefill attention work quadruples") != std::string::npos);
  CHECK(s.out.find("time per output token grows with it") != std::string::npos);
  // A short context of a model without windows: causal pairs grow (4n + 2) / (n + 1)
  // = 3.96x at n = 100, still "quadruples", never "in windowed layers".
  CliResult f = RunKvplan("size falcon-7b -c 100 --explain");
  CHECK(f.out.find("prefill attention work quadruples") != std::string::npos);
  CHECK(f.out.find("windowed") == std::string::npos);
}

TEST_CASE("models --format csv: plain numbers, the unit in the name") {
  CliResult all = RunKvplan("models --format csv");
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.rfind("name,layers,query_heads,kv_heads,head_dim,attention,layer_groups,"
                      "kv_bytes_per_token_fp16,max_context_tokens\n",
                      0) == 0);
  CHECK(all.out.find("K)") == std::string::npos);
  CHECK(all.out.find(",131072,131072\n") != std::string::npos);  // llama-3.1-8b: 128 KiB, 128K
  CliResult one = RunKvplan("models deepseek-v3 --format csv");
  REQUIRE(one.exit_code == 0);
  CHECK(one.out.find("\nmax_context_tokens,163840\n") != std::string::npos);
  CHECK(one.out.find("163,840") == std::string::npos);
  CHECK(one.out.find("\nkv_lora_rank,512\n") != std::string::npos);
}

TEST_CASE("size --explain: one paragraph for each cache form the model has") {
  // What each form keeps per token and per sequence, and why it does or does not grow.
  struct Form {
    const char* model;
    const char* paragraph;
  };
  for (const Form& f : {
           Form{"gemma-4-31b-it", "Values from the key projection (k_eq_v, Gemma 4's "},
           Form{"llama-4-scout", "Chunked local attention: a chunked layer attends only within"},
           Form{"qwen3-next-80b-a3b-instruct", "Gated DeltaNet (linear attention) layers keep "},
           Form{"nemotron-h-8b-base-8k", "Mamba-2 layers keep no keys or values"},
       }) {
    CAPTURE(f.model);
    const CliResult r = RunKvplan(std::string("size ") + f.model + " -c 32K --explain");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find(f.paragraph) != std::string::npos);
  }
  // A model without the form says nothing of it.
  CHECK(RunKvplan("size llama-3.1-8b -c 32K --explain").out.find("key projection") ==
        std::string::npos);
}
