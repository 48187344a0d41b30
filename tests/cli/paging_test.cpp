// The paging, tradeoff and compare subcommands through the real binary:
// output, files written, and one-line errors with exit status 2.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "plan/capacity.h"
#include "plan/tradeoff.h"
#include "spec/catalog.h"
#include "xml_check.h"

using namespace kvplan;
using namespace kvplan::test;

TEST_CASE("kvplan paging: the example mix, contiguous vs paged") {
  CliResult r = RunKvplan("paging llama-3.1-8b --gpu l40s --max-model-len 32K --requests " +
                          SourcePath("examples/request-mix.csv"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "");
  CHECK(r.out.find("40 requests") != std::string::npos);
  CHECK(r.out.find("contiguous (max-model-len)") != std::string::npos);
  CHECK(r.out.find("paged (16-token blocks)") != std::string::npos);
  CHECK(r.out.find("concurrent requests") != std::string::npos);
  // The JSONL example is read the same way.
  CliResult j =
      RunKvplan("paging llama-3.1-8b --gpu l40s --max-model-len 32K --format json --requests " +
                SourcePath("examples/request-mix.jsonl"));
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"requests\": 10") != std::string::npos);
  CHECK(j.out.find("\"waste_percent\"") != std::string::npos);
  // Prefix sharing adds a column; CSV has one row per policy.
  CliResult p = RunKvplan(
      "paging qwen3-8b --gpu h100-sxm --mix uniform:prompt=1000..2000,output=50..500 "
      "--enable-prefix-caching --shared-prefix 1000 --format csv");
  REQUIRE(p.exit_code == 0);
  CHECK(LineCount(p.out) == 4);
  CHECK(p.out.find("\npaged_shared_prefix,") == std::string::npos);  // model,gpu come first
  CHECK(p.out.find(",paged_shared_prefix,") != std::string::npos);
  // Memory holds 188 paged requests; with --max-num-seqs 8 the scheduler
  // runs 8 of them at once, and says so (the row appears only when it bites).
  CHECK(r.out.find("runs at once") == std::string::npos);
  CliResult s = RunKvplan("paging llama-3.1-8b --gpu h100-sxm --max-num-seqs 8 --requests " +
                          SourcePath("examples/request-mix.csv"));
  REQUIRE(s.exit_code == 0);
  CHECK(
      s.out.find(
          "  concurrent requests                                       3                      188\n"
          "    runs at once (max-num-seqs 8)                           3                        "
          "8\n") != std::string::npos);
  CliResult sj =
      RunKvplan("paging llama-3.1-8b --gpu h100-sxm --max-num-seqs 8 --format json --requests " +
                SourcePath("examples/request-mix.csv"));
  REQUIRE(sj.exit_code == 0);
  CHECK(sj.out.find("\"max_num_seqs\": 8") != std::string::npos);
  CHECK(sj.out.find("\"concurrency\": 188,\n    \"max_running\": 8") != std::string::npos);
  CliResult sc =
      RunKvplan("paging llama-3.1-8b --gpu h100-sxm --max-num-seqs 8 --format csv --requests " +
                SourcePath("examples/request-mix.csv"));
  REQUIRE(sc.exit_code == 0);
  CHECK(sc.out.rfind("model,gpu,policy,concurrency,max_running,", 0) == 0);
  CHECK(sc.out.find(",paged,188,8,") != std::string::npos);
}

TEST_CASE("kvplan paging: bad request mixes exit 2 with one line naming file:line") {
  std::string dir = TempDir();
  std::string empty = WriteFile(dir, "empty.csv", "");
  CheckOneLineError(RunKvplan("paging gpt2 --gpu l4 --requests " + empty),
                    empty +
                        ": empty request mix (expected a CSV header "
                        "'prompt_tokens,output_tokens' or JSONL objects)");
  std::string neg = WriteFile(dir, "neg.csv", "prompt_tokens,output_tokens\n10,5\n20,-3\n");
  CheckOneLineError(RunKvplan("paging gpt2 --gpu l4 --requests " + neg),
                    neg +
                        ":3:4: output_tokens: '-3' is negative (expected a whole number of "
                        "tokens >= 0)");
  std::string bad =
      WriteFile(dir, "bad.jsonl", "{\"prompt_tokens\": 5, \"output_tokens\": 1}\n{oops}\n");
  CheckOneLineError(RunKvplan("paging gpt2 --gpu l4 --requests " + bad),
                    bad + ":2:2: malformed JSON: expected '\"', found 'o'");
  std::string missing = WriteFile(dir, "missing.csv", "prompt_tokens\n10\n");
  CheckOneLineError(RunKvplan("paging gpt2 --gpu l4 --requests " + missing),
                    missing +
                        ":1: header has no 'output_tokens' column (expected a header line "
                        "'prompt_tokens,output_tokens')");
  std::string long_req = WriteFile(dir, "long.csv", "prompt_tokens,output_tokens\n1000,100\n");
  CheckOneLineError(RunKvplan("paging gpt2 --gpu l4 --requests " + long_req),
                    long_req +
                        ":2: request of 1000 + 100 = 1,100 tokens is longer than "
                        "--max-model-len 1,024; an engine would reject it (raise "
                        "--max-model-len)");
  CheckOneLineError(RunKvplan("paging gpt2 --gpu l4 --mix zipf:s=1"),
                    "--mix: unknown distribution 'zipf' in 'zipf:s=1' (known: uniform, lognormal; "
                    "or pass a CSV/JSONL file with --requests)");
  CheckOneLineError(
      RunKvplan("paging gpt2 --gpu l4 --mix uniform:prompt=1..10,output=1..5 --requests " + neg),
      "paging: give exactly one of --requests FILE (CSV/JSONL) or --mix SPEC (e.g. "
      "--mix uniform:prompt=100..2000,output=50..500)");
  CheckOneLineError(
      RunKvplan("paging gpt2 --gpu l4 --mix uniform:prompt=1..10,output=1..5 --shared-prefix 64"),
      "--shared-prefix: needs --enable-prefix-caching (engines share prefix blocks "
      "only with prefix caching on)");
  CheckOneLineError(RunKvplan("paging gpt2 --gpu l4 --requests " + dir + "/none.csv"),
                    dir + "/none.csv: cannot open file: No such file or directory");
}

TEST_CASE("kvplan tradeoff: table, chart, SVG written safely") {
  std::string dir = TempDir();
  CliResult r = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --svg plot.svg", dir);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Max batch for each context length:") != std::string::npos);
  CHECK(r.out.find("Max context for each batch size:") != std::string::npos);
  CHECK(r.out.find("● max batch at each context") != std::string::npos);
  CHECK(r.out.find("wrote plot.svg") != std::string::npos);
  std::string svg = ReadFile(dir + "/plot.svg");
  XmlCheck x;
  REQUIRE(x.Check(svg) == "");
  CHECK(x.text.find("context length (tokens per request)") != std::string::npos);
  CHECK(x.text.find("concurrent requests") != std::string::npos);
  CHECK(x.text.find("max batch at each context") != std::string::npos);
  CHECK(x.text.find("max context at each batch") != std::string::npos);
  // Never overwrite without --force; nothing else is left behind.
  CheckOneLineError(RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --svg plot.svg", dir),
                    "plot.svg: file exists (use --force to overwrite)");
  CliResult forced = RunKvplan(
      "tradeoff llama-3.1-8b --gpu h100-sxm --kv-cache-dtype fp8 --svg plot.svg --force", dir);
  CHECK(forced.exit_code == 0);
  CHECK(ReadFile(dir + "/plot.svg") != svg);
  CliResult csv =
      RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --contexts 4K,8K --batches 1,3 --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(LineCount(csv.out) == 5);
  CHECK(csv.out.rfind("model,gpu,grid,context_tokens,batch,at_model_limit,max_running\n", 0) == 0);
  CheckOneLineError(
      RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --contexts 256K"),
      "--contexts: 262,144 is longer than max_model_len 131,072 (raise --max-model-len)");
  CheckOneLineError(RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --batches 0"),
                    "--batches: values must be at least 1");
}

TEST_CASE("kvplan tradeoff: what memory fits beside what max-num-seqs lets run at once") {
  // 29,272 blocks of 16 tokens: 1K requests (64 blocks) fit 457 at once, but
  // only 64 run; at 8K (512 blocks) memory is the limit, 57.
  CliResult r = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --max-num-seqs 64 --no-chart");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("runs at once (max-num-seqs 64)") != std::string::npos);
  CHECK(r.out.find("  1,024 (1K)               64        457                              64\n") !=
        std::string::npos);
  CHECK(r.out.find("  8,192 (8K)              512         57                              57\n") !=
        std::string::npos);
  // Batches past the cap that fit are starred; one that does not fit is not.
  CHECK(r.out.find("\n  64                              7,312\n") != std::string::npos);
  CHECK(r.out.find("\n  128*                            3,648\n") != std::string::npos);
  CHECK(r.out.find("\n  32,768                   does not fit\n") != std::string::npos);
  CHECK(r.out.find("* above max-num-seqs 64: fits in memory, but the scheduler runs 64 at once "
                   "and queues the rest (raise --max-num-seqs)\n") != std::string::npos);
  CliResult j = RunKvplan(
      "tradeoff llama-3.1-8b --gpu h100-sxm --max-num-seqs 64 --contexts 1K --batches 64,128 "
      "--format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"max_num_seqs\": 64") != std::string::npos);
  CHECK(j.out.find("\"max_batch\": 457,\n      \"max_running\": 64") != std::string::npos);
  CHECK(j.out.find("\"batch\": 64,\n      \"max_context_tokens\": 7312,\n      "
                   "\"at_model_limit\": false,\n      \"above_max_num_seqs\": false") !=
        std::string::npos);
  CHECK(j.out.find("\"above_max_num_seqs\": true") != std::string::npos);
  // CSV carries it too; a batch that does not fit has none.
  CliResult c = RunKvplan(
      "tradeoff llama-3.1-8b --gpu h100-sxm --max-num-seqs 64 --contexts 1K --batches 128,32768 "
      "--format csv");
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.find(",context,1024,457,false,64\n") != std::string::npos);
  CHECK(c.out.find(",batch,3648,128,false,64\n") != std::string::npos);
  CHECK(c.out.find(",batch,0,32768,false,\n") != std::string::npos);
  CliResult nofit = RunKvplan(
      "tradeoff llama-3.1-8b --gpu h100-sxm --max-num-seqs 64 --batches 32768 --format json");
  CHECK(nofit.out.find("\"above_max_num_seqs\": false") != std::string::npos);
  // llama.cpp: the batch is the -np asked about; no cap column, no cap in
  // JSON, and --max-num-seqs is not its flag.
  CliResult l = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --engine llama.cpp --no-chart");
  REQUIRE(l.exit_code == 0);
  CHECK(l.out.find("runs at once") == std::string::npos);
  CHECK(l.out.find("above max-num-seqs") == std::string::npos);
  CliResult lj = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --engine llama.cpp --format json");
  CHECK(lj.out.find("\"max_num_seqs\": null") != std::string::npos);
  for (const char* cmd : {"tradeoff", "paging", "capacity"}) {
    CAPTURE(cmd);
    CheckOneLineError(
        RunKvplan(
            std::string(cmd) +
            " llama-3.1-8b --gpu h100-sxm --engine llama.cpp "
            "--max-num-seqs 8" +
            (std::string(cmd) == "paging" ? " --mix uniform:prompt=100..200,output=10..20" : "")),
        "--max-num-seqs is not llama.cpp's: it serves the -np/--parallel sequences it is given "
        "(kvplan capacity -np N)");
  }
}

TEST_CASE(
    "tradeoff at max-model-len agrees with capacity's max requests, every model x GPU x engine") {
  int checked = 0;
  for (const ModelSpec& m : CatalogModels()) {
    for (const HardwareSpec& hw : CatalogHardware()) {
      for (Engine e : AllEngines()) {
        // llama.cpp serves the -np it was given whatever memory is left; the
        // trade-off says how far memory would let -np go, so it differs there.
        if (e == Engine::kLlamaCpp) continue;
        EngineConfig c;
        c.engine = e;
        CapacityResult cap = ComputeCapacity(m, hw, c);
        if (cap.HasError()) continue;
        TradeoffInput in;
        in.num_blocks = cap.PlannedBlocks();
        in.block_size = cap.block_size;
        in.max_context = cap.max_model_len;
        in.blocks_for_request = [&cap](uint64_t n) { return cap.BlocksForRequest(n); };
        CAPTURE(m.name);
        CAPTURE(hw.name);
        CAPTURE(EngineName(e));
        if (cap.blocks_per_request == 0) continue;
        CHECK(MaxBatchAtContext(in, cap.max_model_len) == cap.max_requests);
        uint64_t longest = MaxContextAtBatch(in, 1);
        CHECK(longest == std::min(cap.largest_max_model_len, cap.max_model_len));
        ++checked;
      }
    }
  }
  CHECK(checked > 400);
}

TEST_CASE("kvplan compare: columns, ratios to the first, errors") {
  CliResult r =
      RunKvplan("compare llama-3.1-70b --gpu h100-sxm -tp 4 --vary kv-cache-dtype=fp16,fp8");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("kv-cache-dtype=fp16") != std::string::npos);
  CHECK(r.out.find("kv-cache-dtype=fp8") != std::string::npos);
  CHECK(r.out.find("(0.50x)") != std::string::npos);  // bytes per token halves
  CHECK(r.out.find("Ratios in parentheses are against the first column (kv-cache-dtype=fp16).") !=
        std::string::npos);
  CliResult j = RunKvplan("compare llama-3.1-70b --gpu h100-sxm --vary tp=2,4 --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"label\": \"tp=2\"") != std::string::npos);
  CHECK(j.out.find("\"bytes_per_token\": 0.5") != std::string::npos);  // tp 4 holds half the heads
  CliResult two = RunKvplan("compare llama-3.1-8b qwen3-8b --gpu l40s --format csv");
  REQUIRE(two.exit_code == 0);
  CHECK(two.out.find("bytes_per_token,qwen3-8b,qwen3-8b,l40s,147456,1.1250") != std::string::npos);
  CheckOneLineError(RunKvplan("compare llama-3.1-8b --gpu l40s"),
                    "compare: nothing to compare: give two or more models, or --vary KEY=V1,V2 "
                    "(e.g. --vary kv-cache-dtype=fp16,fp8)");
  CheckOneLineError(
      RunKvplan("compare llama-3.1-8b --gpu l40s --vary dtype=fp16,fp8"),
      "--vary: unknown setting 'dtype' (did you mean 'kv-cache-dtype'?) (one of: "
      "kv-cache-dtype, tp, pp, gpu, engine, "
      "max-model-len, block-size, gpu-memory-utilization, kv-cache-memory-bytes, vllm-version)");
  CheckOneLineError(RunKvplan("compare llama-3.1-8b --gpu h100-sxm --kv-cache-memory-bytes 10GiB "
                              "--vary gpu-memory-utilization=0.8,0.9"),
                    "--vary gpu-memory-utilization: with --kv-cache-memory-bytes vLLM sizes the "
                    "cache from the budget and ignores the fraction; every column would be the "
                    "same");
  // A setting given and varied: the flag would be silently ignored.
  CheckOneLineError(RunKvplan("compare llama-3.1-8b --gpu l40s -tp 2 --vary tp=1,2"),
                    "compare: --tp and --vary tp both set tp: give it once (the --vary values "
                    "are the columns)");
  CheckOneLineError(RunKvplan("compare llama-3.1-8b --gpu l40s --vary gpu=l40s,h100-sxm"),
                    "compare: --gpu and --vary gpu both set gpu: give it once (the --vary "
                    "values are the columns)");
  CheckOneLineError(
      RunKvplan(
          "compare llama-3.1-8b --gpu l40s --kv-cache-dtype fp8 --vary kv-cache-dtype=fp16,fp8"),
      "compare: --kv-cache-dtype and --vary kv-cache-dtype both set kv-cache-dtype: give it once "
      "(the --vary values are the columns)");
  CheckOneLineError(RunKvplan("compare llama-3.1-8b --gpu l40s --vary tp=1,,2"),
                    "--vary: 'tp=1,,2': empty value in the list");
}

TEST_CASE("kvplan compare --vary engine: each engine's own flags on its own columns") {
  // Each column is what `kvplan capacity --engine E` says with E's flags.
  const std::string flags =
      " --gpu-memory-utilization 0.8 --mem-fraction-static 0.7 --max-num-seqs 64";
  CliResult j =
      RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,sglang,llama.cpp" + flags +
                " --format json");
  REQUIRE(j.exit_code == 0);
  for (const char* engine : {"vllm", "sglang", "llama.cpp"}) {
    const std::string own = std::string(engine) == "vllm"     ? " --gpu-memory-utilization 0.8"
                            : std::string(engine) == "sglang" ? " --mem-fraction-static 0.7"
                                                              : "";
    const std::string seqs = std::string(engine) == "llama.cpp" ? "" : " --max-num-seqs 64";
    CliResult cap = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format json --engine " +
                              std::string(engine) + own + seqs);
    REQUIRE(cap.exit_code == 0);
    const size_t at = cap.out.find("\"kv_budget_bytes\": ");
    REQUIRE(at != std::string::npos);
    const std::string budget = cap.out.substr(at, cap.out.find(',', at) - at);
    CHECK(j.out.find(budget) != std::string::npos);
  }
  CHECK(j.out.find("\"kv_budget_bytes\": 51127194419") != std::string::npos);  // vLLM at 0.8
  CHECK(j.out.find("\"kv_budget_bytes\": 43394680422") != std::string::npos);  // SGLang at 0.7
  CHECK(j.out.find("\"memory_fraction\": 0.8,") != std::string::npos);
  CHECK(j.out.find("\"memory_fraction\": 0.7,") != std::string::npos);
  CHECK(j.out.find("\"memory_fraction\": null,") != std::string::npos);  // llama.cpp
  // The text names each column's fraction, the defaults included.
  CliResult t =
      RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,trtllm,llama.cpp");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("memory fraction                           0.92                0.9"
                   "                  -\n") != std::string::npos);
  CHECK(t.out.find("Memory fraction: each engine's own, given or its default: vLLM "
                   "--gpu-memory-utilization and SGLang") != std::string::npos);
  // vLLM given a budget reads no fraction.
  CliResult budget = RunKvplan(
      "compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,trtllm --kv-cache-memory-bytes "
      "20GiB");
  REQUIRE(budget.exit_code == 0);
  CHECK(budget.out.find("memory fraction                              -                0.9\n") !=
        std::string::npos);
  // CSV: the same fractions as rows of their own, no ratio.
  CliResult csv = RunKvplan(
      "compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,trtllm,llama.cpp --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find("memory_fraction,engine=vllm,llama-3.1-8b,h100-sxm,0.92,\n"
                     "memory_fraction,engine=trtllm,llama-3.1-8b,h100-sxm,0.9,\n"
                     "memory_fraction,engine=llama.cpp,llama-3.1-8b,h100-sxm,,\n") !=
        std::string::npos);
  // Without --vary engine there is no such row.
  CHECK(
      RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary tp=1,2").out.find("memory fraction") ==
      std::string::npos);
  CHECK(RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary tp=1,2 --format csv")
            .out.find("memory_fraction") == std::string::npos);
  // A flag of an engine no column has is refused, as it is alone.
  CheckOneLineError(
      RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary engine=sglang,trtllm "
                "--gpu-memory-utilization 0.8"),
      "--vary engine=sglang,trtllm: --gpu-memory-utilization is for vllm, and no column's engine "
      "takes it");
  CheckOneLineError(
      RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary engine=llama.cpp,LlamaCpp "
                "--max-num-seqs 4"),
      "--vary engine=llama.cpp,LlamaCpp: --max-num-seqs is for every engine but "
      "llama.cpp, and no column's engine takes it");
  CheckOneLineError(
      RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,trtllm --vllm-version 0.20 "
                "--max-total-tokens 100000"),
      "--vary engine=vllm,trtllm: --max-total-tokens is for sglang, and no column's engine takes "
      "it");
  // Without --vary engine the flag is still the engine's alone.
  CheckOneLineError(RunKvplan("compare llama-3.1-8b --gpu h100-sxm --engine sglang "
                              "--gpu-memory-utilization 0.8 --vary tp=1,2"),
                    "--vary tp=1: --gpu-memory-utilization is vllm's flag, not sglang's (use "
                    "--mem-fraction-static or --engine vllm)");
}

TEST_CASE("kvplan compare: a column vLLM would refuse carries capacity's warning, on stderr") {
  // Llama-3.1-70B at tp=2 on H100s leaves 1.74 GiB of cache per GPU: not
  // one 128K request fits, and `kvplan capacity` says so; compare must too.
  CliResult r = RunKvplan("compare llama-3.1-70b --gpu h100-sxm --vary tp=2,4,8");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err ==
        "kvplan: warning: tp=2: one request of max_model_len 131072 needs 20.00 GiB of KV cache "
        "but the cache has 1.74 GiB; the largest max_model_len that fits is 11392\n");
  CHECK(r.out.find("warning") == std::string::npos);  // the table stays clean
  CliResult j = RunKvplan("compare llama-3.1-70b --gpu h100-sxm --vary tp=2,4 --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"code\": \"max-model-len-fits\"") != std::string::npos);
  CHECK(j.out.find("\"lints\": []") != std::string::npos);  // tp=4 has none
}

TEST_CASE("kvplan paging under vLLM with a hybrid model: vLLM's own groups and blocks") {
  // Gemma-3-27B: 10 full + 52 sliding (1,024-token window) layers: vLLM makes
  // 1 + 6 KV-cache groups of 10 layers (8 padding), a block one 131,072 B page
  // in each of 10 layers, 10,102 of them: paging's budget is capacity's.
  CliResult cap =
      RunKvplan("capacity gemma-3-27b --gpu h100-sxm --max-model-len 32K --format json");
  REQUIRE(cap.exit_code == 0);
  CHECK(cap.out.find("\"num_blocks\": 10102,") != std::string::npos);
  CliResult r = RunKvplan(
      "paging gemma-3-27b --gpu h100-sxm --max-model-len 32K --mix "
      "uniform:prompt=2000..2000,output=0..0,n=3 --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"block_bytes\": 1310720,") != std::string::npos);
  CHECK(r.out.find("\"budget_blocks\": 10102,") != std::string::npos);
  // A 2,000-token request: ceil(2000 / 16) = 125 blocks in the full group and
  // min(125, ceil(1023 / 16) + 1) = 65 in each of the 6 sliding groups: 515
  // blocks x 1,310,720 B; 10,102 blocks hold 19 of them.
  const size_t paged = r.out.find("\"paged\": {");
  REQUIRE(paged != std::string::npos);
  CHECK(r.out.find("\"mean_request_bytes\": 675020800,", paged) != std::string::npos);
  CHECK(r.out.find("\"concurrency\": 19,", paged) != std::string::npos);
  // A model of one kind keeps one block across every layer, as before.
  CliResult llama = RunKvplan(
      "paging llama-3.1-8b --gpu h100-sxm --max-model-len 32K --mix "
      "uniform:prompt=2000..2000,output=0..0,n=3 --format json");
  REQUIRE(llama.exit_code == 0);
  CHECK(llama.out.find("\"block_bytes\": 2097152,") != std::string::npos);  // 16 x 131,072
  CHECK(llama.out.find("\"budget_blocks\": 26909,") != std::string::npos);
}

TEST_CASE(
    "kvplan paging: a shared prefix under vLLM's groups counts padding as allocated, never as "
    "used") {
  // 26 full + 14 sliding layers: groups of 14, the full layers padded to 28.
  // The used bytes of the shared blocks are the tokens' own, so used stays
  // below allocated (it wrapped past 2^64 when the padding was subtracted).
  const std::string dir = TempDir();
  WriteFile(dir, "m.yaml",
            "name: padtest\n"
            "source: test\n"
            "layers: 40\n"
            "hidden_size: 4096\n"
            "query_heads: 32\n"
            "kv_heads: 8\n"
            "head_dim: 128\n"
            "max_context: 32768\n"
            "params: 8000000000\n"
            "weight_dtype: bf16\n"
            "vocab_size: 128256\n"
            "intermediate_size: 14336\n"
            "layer_groups:\n"
            "  - kind: full\n"
            "    layers: 26\n"
            "  - kind: sliding\n"
            "    layers: 14\n"
            "    every: 3\n"
            "    offset: 0\n"
            "    window: 128\n"
            "");
  std::string mix = "prompt_tokens,output_tokens\n";
  for (int i = 0; i < 40; ++i) mix += "4096,0\n";
  WriteFile(dir, "mix.csv", mix);
  CliResult r = RunKvplan(
      "paging m.yaml --gpu h100-sxm --max-model-len 8K --requests mix.csv --enable-prefix-caching "
      "--shared-prefix 4096 --format json",
      dir);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const size_t at = r.out.find("\"prefix_sharing\": {");
  REQUIRE(at != std::string::npos);
  CHECK(r.out.find("\"allocated_bytes\": 800063488,", at) != std::string::npos);
  CHECK(r.out.find("\"used_bytes\": 729808896,", at) != std::string::npos);
}

TEST_CASE("compare: a configuration the engine refuses is a column with its reason") {
  // tp 3 does not divide Llama-3.1-8B's 32 heads: vLLM refuses it at startup.
  CliResult r = RunKvplan("compare llama-3.1-8b --gpu l40s --vary tp=1,3");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("engine starts") != std::string::npos);
  CHECK(r.out.find("no (below)") != std::string::npos);
  CHECK(r.out.find("tp=3: the engine would not start: tensor parallel size 3 does not divide the "
                   "32 query heads of llama-3.1-8b") != std::string::npos);
  CliResult j = RunKvplan("compare llama-3.1-8b --gpu l40s --vary tp=1,3 --format json");
  REQUIRE(j.exit_code == 0);
  const nlohmann::json cfg = nlohmann::json::parse(j.out)["configurations"];
  REQUIRE(cfg.size() == 2);
  CHECK(cfg[0]["engine_starts"] == true);
  CHECK(cfg[0]["refused"].is_null());
  CHECK(cfg[1]["engine_starts"] == false);
  CHECK(cfg[1]["max_tokens"].is_null());
  // A max_model_len that does not fit: vLLM's ValueError, the figures kept.
  CliResult fit =
      RunKvplan("compare llama-3.1-8b --gpu rtx-3090 --vary max-model-len=8K,128K --format json");
  REQUIRE(fit.exit_code == 0);
  const nlohmann::json f = nlohmann::json::parse(fit.out)["configurations"];
  CHECK(f[1]["engine_starts"] == false);
  CHECK(f[1]["max_tokens"] == f[0]["max_tokens"]);  // the same cache, one request too long
}

TEST_CASE("compare: several --vary make a grid, the first key slowest") {
  CliResult r = RunKvplan(
      "compare llama-3.1-70b --gpu h100-sxm --vary tp=2,4 --vary kv-cache-dtype=fp16,fp8 "
      "--format json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json cfg = nlohmann::json::parse(r.out)["configurations"];
  REQUIRE(cfg.size() == 4);
  CHECK(cfg[0]["label"] == "tp=2 kv-cache-dtype=fp16");
  CHECK(cfg[1]["label"] == "tp=2 kv-cache-dtype=fp8");
  CHECK(cfg[2]["label"] == "tp=4 kv-cache-dtype=fp16");
  CHECK(cfg[3]["label"] == "tp=4 kv-cache-dtype=fp8");
  CHECK(cfg[3]["tp"] == 4);
  CHECK(cfg[3]["kv_cache_dtype"] == "fp8_e4m3");
  // fp8 halves the bytes per token at either tp.
  CHECK(cfg[1]["bytes_per_token"].get<double>() * 2 == cfg[0]["bytes_per_token"].get<double>());
}
