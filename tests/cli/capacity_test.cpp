// kvplan capacity and kvplan gpus through the real binary: output in the
// engine's words, JSON keys, and one exact error line (exit 2) for bad input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using kvplan::test::LineCount;
using kvplan::test::RunKvplan;

namespace {

void ExpectError(const std::string& args, const std::string& message) {
  CAPTURE(args);
  auto r = RunKvplan(args);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "kvplan: error: " + message + "\n");
  CHECK(LineCount(r.err) == 1);
}

}  // namespace

TEST_CASE("capacity: exit 1 when the engine would refuse to start, its words kept") {
  // 128K of Llama-3.1-8B needs 16 GiB of cache; a 24 GB RTX 3090 has 4.89 GiB
  // left after the weights: vLLM raises its ValueError at startup.
  const std::string args = "capacity llama-3.1-8b --gpu rtx-3090 --max-model-len 128K";
  auto r = RunKvplan(args);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("ValueError: To serve at least one request with the models's max seq len "
                   "(131072)") != std::string::npos);
  // 2,505 blocks; vLLM from 0.29 estimates over the 2,504 beside its null block.
  CHECK(r.out.find("the estimated maximum model length is 40064.") != std::string::npos);
  auto j = RunKvplan(args + " --format json");
  CHECK(j.exit_code == 1);
  CHECK(j.out.find("\"engine_starts\": false") != std::string::npos);
  // llama.cpp fails to allocate the same way.
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu rtx-3090 --engine llama.cpp -c 128K").exit_code ==
        1);
  // SGLang starts and serves shorter requests: exit 0.
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu rtx-3090 --engine sglang --max-model-len 128K")
            .exit_code == 0);
  // A configuration that fits: exit 0, engine_starts true.
  auto ok = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format json");
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("\"engine_starts\": true") != std::string::npos);
}

TEST_CASE("capacity: vLLM's own lines for a given budget (vllm-project/vllm#10517)") {
  auto r = RunKvplan(
      "capacity llama-3.1-8b --gpu rtx-3090 --max-model-len 20000 "
      "--kv-cache-memory-bytes 3.8125GiB");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("  GPU KV cache size: 31,232 tokens\n") != std::string::npos);
  CHECK(r.out.find("  Maximum concurrency for 20,000 tokens per request: 1.56x\n") !=
        std::string::npos);
  CHECK(r.out.find("KV cache budget (given)") != std::string::npos);
  CHECK(r.out.find(" GiB") != std::string::npos);
  CHECK(r.out.find(" GB") != std::string::npos);
  CHECK(r.out.find("\u2588") != std::string::npos);  // the memory bar
}

TEST_CASE("capacity: JSON keys and the max model len at a concurrency") {
  auto r = RunKvplan(
      "capacity llama-3.1-8b --gpu h100-sxm --max-model-len 8K --kv-cache-memory-bytes 16GiB "
      "--concurrency 4 --format json");
  REQUIRE(r.exit_code == 0);
  for (const char* key :
       {"\"kv_budget_bytes\": 17179869184", "\"weights_bytes\": 16060522496",
        "\"max_tokens\": 131072", "\"max_concurrency\": 16", "\"bytes_per_token\": 131072",
        // 4 x 32K would take all 8,192 blocks; vLLM keeps its null block back.
        "\"max_model_len_at_concurrency\": 32752", "\"num_blocks\": 8192",
        "\"usable_blocks\": 8191"}) {
    CAPTURE(key);
    CHECK(r.out.find(key) != std::string::npos);
  }
}

TEST_CASE("capacity: SGLang, TensorRT-LLM and llama.cpp lines") {
  auto s =
      RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine sglang --max-total-tokens 100000");
  REQUIRE(s.exit_code == 0);
  // K = (100000 + 1) x 32 x 8 x 128 x 2 B = 6,553,665,536 B = 6.10 GiB.
  CHECK(s.out.find("KV Cache is allocated. #tokens: 100000, K size: 6.10 GB, V size: 6.10 GB") !=
        std::string::npos);
  auto t = RunKvplan(
      "capacity llama-2-7b --gpu a100-80gb --engine trtllm --kv-cache-memory-bytes 69524783104");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("Using 132608 tokens in paged KV cache.") != std::string::npos);
  auto l = RunKvplan(
      "capacity llama-3.1-8b --gpu rtx-4090 --engine llama.cpp -c 32K -np 4 --kv-cache-dtype q8_0");
  REQUIRE(l.exit_code == 0);
  CHECK(l.out.find("llama_kv_cache: size = 2176.00 MiB ( 32768 cells,  32 layers,  4/4 seqs), "
                   "K (q8_0): 1088.00 MiB, V (q8_0): 1088.00 MiB") != std::string::npos);
}

TEST_CASE("SGLang's running cap: its request pool, at most half the tokens (not the graph batch)") {
  const auto seqs = [](const std::string& args) {
    auto r = RunKvplan("capacity llama-3.1-8b --engine sglang --format json " + args);
    REQUIRE(r.exit_code == 0);
    const size_t at = r.out.find("\"max_num_seqs\": ");
    REQUIRE(at != std::string::npos);
    return std::stoull(r.out.substr(at + 16));
  };
  // 418,605 tokens at context 131,072: 418,605 / 131,072 x 512 = 1,635, clamped up to 2,048.
  CHECK(seqs("--gpu h100-sxm") == 2048);
  // At context 4,096: 52,325, clamped down to 4,096.
  CHECK(seqs("--gpu h100-sxm --max-model-len 4K") == 4096);
  // L4: 28,019 tokens / 4,096 x 512 = 3,502.
  CHECK(seqs("--gpu l4 --max-model-len 4K") == 3502);
  // Never more than half the tokens: 3,000 tokens run at most 1,500 requests.
  CHECK(seqs("--gpu h100-sxm --max-total-tokens 3000 --max-model-len 1K") == 1500);
  // --max-running-requests (kvplan's --max-num-seqs) as given, capped the same way.
  CHECK(seqs("--gpu h100-sxm --max-num-seqs 10") == 10);
  CHECK(seqs("--gpu h100-sxm --max-num-seqs 100000000") == 209302);
  // The reserve's logits rows are a decode step's of the running batch, the
  // ones its bytes count (2,048 x 128,256 x 4 B), not the graph batch (256).
  auto text = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine sglang");
  CHECK(text.out.find("logits/sampler, 2,048 rows (outside the fraction)    1,050,673,152") !=
        std::string::npos);
  // The graphs' row names the largest captured batch its estimate scales with.
  CHECK(text.out.find("CUDA graphs, batches to 256 (outside the fraction)     536,870,912") !=
        std::string::npos);
  // check names SGLang's own cap when the config does not set it.
  const std::string cfg = kvplan::test::WriteFile(
      kvplan::test::TempDir(), "sg.yaml",
      "name: sg\nmodel: llama-3.1-8b\nhardware:\n  gpu: h100-sxm\nengine:\n  name: sglang\n"
      "  args:\n    context_length: 64\nrequirements:\n  min_concurrency: 8\n");
  auto chk = RunKvplan("check " + cfg);
  CHECK(chk.exit_code == 0);
  CHECK(chk.out.find("= 6540.70x; capped by max_running_requests 4096") != std::string::npos);
  // tradeoff runs what fits at 1K (408) at once: under the 2,048 cap, nothing queued.
  auto t = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --engine sglang --no-chart");
  CHECK(t.out.find("runs at once (max-num-seqs 2,048)") != std::string::npos);
  CHECK(t.out.find("1,024 (1K)            1,024        408                                408") !=
        std::string::npos);
}

TEST_CASE("capacity and tradeoff: llama.cpp on a sliding-window model, one longest context") {
  // Gemma-3-27B, q8_0, 4 GiB, -np 4 -c 32K in one unified cache: 18,624 tokens per sequence
  // whichever way it is asked (the arithmetic is in tests/plan/capacity_test.cpp).
  auto r = RunKvplan(
      "capacity gemma-3-27b --gpu h100-sxm --engine llama.cpp -c 32K --np 4 --kv-unified "
      "--kv-cache-dtype q8_0 --kv-cache-memory-bytes 4GiB --concurrency 4 --format json");
  REQUIRE(r.exit_code == 0);
  for (const char* key :
       {"\"largest_max_model_len\": 18624", "\"max_model_len_at_concurrency\": 18624",
        "\"request_bytes\": 617218048"}) {
    CAPTURE(key);
    CHECK(r.out.find(key) != std::string::npos);
  }
  auto t = RunKvplan(
      "tradeoff gemma-3-27b --gpu h100-sxm --engine llama.cpp --max-model-len 32K "
      "--kv-cache-dtype q8_0 --kv-cache-memory-bytes 4GiB --contexts 8K --batches 4 "
      "--format json");
  REQUIRE(t.exit_code == 0);
  // tradeoff runs llama-server's default, a stream per sequence: each of C sequences of 8,192
  // tokens holds 8,192 full cells (43,520 B) and min(8,192, PAD(1,024 + 512)) = 1,536 SWA cells
  // (226,304 B), 704,118,784 B a sequence: 6 fit in 4 GiB. At batch 4 each stream's full
  // cells get (1 GiB - 1,536 x 226,304) / 43,520 = 16,685, padded down to 16,640.
  CHECK(t.out.find("\"max_batch\": 6") != std::string::npos);
  CHECK(t.out.find("\"max_context_tokens\": 16640") != std::string::npos);
}

TEST_CASE(
    "capacity: max_concurrency in JSON and CSV at full precision, never above max_requests + 1") {
  // 26,909 blocks / 6,728 per request = 3.99955...: rounded to two decimals
  // it read 4 beside 3 whole requests.
  auto j = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --max-model-len 107648 --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"max_concurrency\": 3.999554102259215,") != std::string::npos);
  CHECK(j.out.find("\"max_requests\": 3,") != std::string::npos);
  auto c = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --max-model-len 107648 --format csv");
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.find(",3.999554102259215,3,") != std::string::npos);
  auto t = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --max-model-len 107648");
  CHECK(t.out.find("4.00 (3 whole requests)") != std::string::npos);
}

TEST_CASE("capacity llama.cpp: the compute buffer's rows are n_ubatch, not -np") {
  auto r =
      RunKvplan("capacity llama-3.1-8b --gpu rtx-4090 --engine llama.cpp --ubatch-size 1024 -np 2");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("forward pass, 1,024 tokens") != std::string::npos);
  CHECK(r.out.find("logits/sampler, 1,024 rows     525,336,576") !=
        std::string::npos);  // 1024 x 128256 x 4
  auto d = RunKvplan("capacity llama-3.1-8b --gpu rtx-4090 --engine llama.cpp");
  CHECK(d.out.find("logits/sampler, 512 rows") != std::string::npos);
}

TEST_CASE("compare, tradeoff and paging take --nodes and --gpus-per-node as capacity does") {
  // tp x pp = 16 needs two 8-GPU machines; one says why.
  auto one = RunKvplan("tradeoff llama-3.1-405b --gpu h100-sxm -tp 8 -pp 2 --contexts 8K");
  CHECK(one.exit_code == 2);
  CHECK(one.err.find("needs 16 GPUs") != std::string::npos);
  auto cap =
      RunKvplan("capacity llama-3.1-405b --gpu h100-sxm -tp 8 -pp 2 --nodes 2 --format json");
  REQUIRE(cap.exit_code == 0);
  CHECK(cap.out.find("\"max_tokens\": 668288") != std::string::npos);
  auto t = RunKvplan("tradeoff llama-3.1-405b --gpu h100-sxm -tp 8 -pp 2 --nodes 2 --contexts 8K");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("(668,288 tokens)") != std::string::npos);
  auto c = RunKvplan("compare deepseek-v3 --gpu h200 --vary tp=8,16 --nodes 2");
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.find("16 x 1") != std::string::npos);
  auto g = RunKvplan(
      "tradeoff llama-3.1-405b --gpu h100-sxm -tp 8 -pp 2 --gpus-per-node 16 --contexts 8K");
  CHECK(g.exit_code == 0);
  auto p = RunKvplan(
      "paging llama-3.1-405b --gpu h100-sxm -tp 8 -pp 2 --nodes 2 --mix "
      "uniform:prompt=100..2000,output=50..500 --format json");
  CHECK(p.exit_code == 0);
}

TEST_CASE(
    "tradeoff text: llama.cpp's rows are runs of their own, and which limit caps the context") {
  // Each llama.cpp row is -np BATCH -c BATCH x CONTEXT, so its default -c
  // (4,096) caps nothing: contexts run to the model's limit, as for vLLM.
  auto l = RunKvplan(
      "tradeoff gemma-3-27b --gpu rtx-4090 --engine llama.cpp --kv-cache-dtype q8_0 "
      "--weight-dtype int4");
  REQUIRE(l.exit_code == 0);
  CHECK(l.out.find("room for 121 blocks of 256 cells; each row runs -np BATCH -c BATCH x CONTEXT; "
                   "max context 131,072 (128K)") != std::string::npos);
  CHECK(l.out.find("131,072 (128K) (model limit)") != std::string::npos);
  CHECK(l.out.find("(-c / -np)") == std::string::npos);
  // The batch-1 row is capacity's answer at concurrency 1, to the cell.
  auto t8 =
      RunKvplan("tradeoff llama-3.1-8b --gpu l4 --engine llama.cpp --batches 1 --format json");
  REQUIRE(t8.exit_code == 0);
  CHECK(t8.out.find("\"max_context_tokens\": 54528") != std::string::npos);
  // max_model_len as capacity has it (-c 4,096 / -np 1); the grids' limit beside it.
  CHECK(t8.out.find("\"max_model_len\": 4096") != std::string::npos);
  CHECK(t8.out.find("\"context_limit\": 131072") != std::string::npos);
  auto c8 = RunKvplan("capacity llama-3.1-8b --gpu l4 --engine llama.cpp --concurrency 1");
  CHECK(c8.out.find("max model len at concurrency 1   54,528") != std::string::npos);
  auto l8k = RunKvplan(
      "tradeoff llama-3.1-8b --gpu l4 --engine llama.cpp --max-model-len 8K --batches 1 "
      "--no-chart");
  CHECK(l8k.out.find("8,192 (8K) (max-model-len)") != std::string::npos);
  auto v = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --batches 1");
  CHECK(v.out.find("131,072 (128K) (model limit)") != std::string::npos);
  auto given = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --max-model-len 8K --batches 1");
  CHECK(given.out.find("8,192 (8K) (max-model-len)") != std::string::npos);
}

TEST_CASE("tradeoff text: the header names the weights' format beside the cache's") {
  auto r = RunKvplan("tradeoff llama-3.1-8b --gpu h100-sxm --weight-dtype fp8 --contexts 8K");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("llama-3.1-8b on h100-sxm · vllm · tp 1 · pp 1 · weights fp8 · KV cache bf16\n",
                    0) == 0);
}

TEST_CASE("capacity: csv has one header and one row; a spec path works for --gpu") {
  auto r = RunKvplan("capacity qwen3-8b --gpu " + kvplan::test::SourcePath("hardware/l40s.yaml") +
                     " --format csv");
  REQUIRE(r.exit_code == 0);
  CHECK(LineCount(r.out) == 2);
  CHECK(r.out.rfind("model,gpu,engine,", 0) == 0);
}

TEST_CASE("capacity: bad input is one exact line and exit 2") {
  ExpectError("capacity llama-3.1-8b --gpu h100-sx",
              "unknown GPU 'h100-sx' (did you mean 'h100-sxm'?); `kvplan gpus` lists the catalog");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --gpu-memory-utilization 1.5",
              "--gpu-memory-utilization must be in (0, 1], got 1.5");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --gpu-memory-utilization 0",
              "--gpu-memory-utilization must be in (0, 1], got 0");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm -tp 16",
              "tp 16 x pp 1 x dp 1 needs 16 GPUs but 1 node(s) x 8 GPUs per node have 8");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --max-model-len -5",
              "--max-model-len: '-5' is negative");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm -tp 3",
              "tensor parallel size 3 does not divide the 32 query heads of llama-3.1-8b");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --kv-cache-dtype q4_0",
              "vLLM has no q4_0 KV cache (ggml block types are llama.cpp's); use fp8");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --engine llama.cpp --kv-cache-dtype fp8",
              "llama.cpp has no fp8_e4m3 KV cache (cache types: f32, f16, bf16, q8_0, q4_0, q4_1, "
              "iq4_nl, q5_0, q5_1)");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --mem-fraction-static 0.8",
              "--mem-fraction-static is sglang's flag, not vllm's (use --gpu-memory-utilization or "
              "--engine sglang)");
  ExpectError(
      "capacity llama-3.1-405b --gpu h100-sxm",
      "llama-3.1-405b does not fit: its weights take 755.96 GiB (811.71 GB) per GPU but "
      "79.65 GiB (85.52 GB) x 0.92 = 73.28 GiB (78.68 GB) is usable; use more GPUs (-tp/-pp) "
      "or quantized weights (--weight-dtype)");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --max-model-len 1M",
              "max_model_len 1048576 is more than llama-3.1-8b's max_context 131072 (vLLM refuses "
              "this without VLLM_ALLOW_LONG_MAX_MODEL_LEN)");
}

TEST_CASE("capacity: the engines' own pool knobs") {
  // vLLM's --num-gpu-blocks-override: the blocks, whatever memory gives; its
  // null block shown; --max-model-len auto fits the length to the cache.
  auto o = RunKvplan(
      "capacity llama-3.1-8b --gpu h100-sxm --num-gpu-blocks-override 100 --max-model-len 1584");
  CHECK(o.exit_code == 0);
  CHECK(o.out.find("100 (block 0 is vLLM's null block: 99 usable)") != std::string::npos);
  auto a = RunKvplan("capacity llama-3.1-8b --gpu rtx-3090 --max-model-len auto --format json");
  CHECK(a.exit_code == 0);
  CHECK(a.out.find("\"max_model_len\": 40064") != std::string::npos);
  CHECK(a.out.find("max-model-len-auto-fit") != std::string::npos);
  // TensorRT-LLM: a host pool, and the windows kept when one sequence does not fit.
  auto t = RunKvplan(
      "capacity gemma-2-9b --gpu l4 --engine trtllm --host-cache-size 32GiB --max-model-len 8K");
  CHECK(t.exit_code == 0);
  CHECK(t.out.find("host cache (secondary pool)       32.00 GiB (34.36 GB)") != std::string::npos);
  CHECK(t.out.find("attention windows (TensorRT-LLM)  4,096 tokens on 21 layers, 5,771 tokens on "
                   "21 layers") != std::string::npos);
  CHECK(t.out.find("TensorRT-LLM shrinks the attention windows to: 4,096 on 21 layers, 5,771 on "
                   "21 layers") != std::string::npos);
  // 1,600 tokens take all 100 blocks, one of them the null block: vLLM refuses.
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --num-gpu-blocks-override 100 "
                  "--max-model-len 1600")
            .exit_code == 1);
  // vLLM without its hybrid manager: one group, the sliding layers in full.
  auto h = RunKvplan(
      "capacity gemma-2-9b --gpu h100-sxm --max-model-len 8K --disable-hybrid-kv-cache-manager "
      "--format json");
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("\"kv_cache_groups\"") == std::string::npos);
  CHECK(h.out.find("vllm-hybrid-disabled") != std::string::npos);
  // Speculative decoding: DeepSeek-V3's MTP layer, or a catalog draft model.
  auto mtp = RunKvplan(
      "capacity deepseek-v3 --gpu h200 -tp 8 --max-model-len 32K --speculative-config "
      "'{\"method\": \"mtp\", \"num_speculative_tokens\": 1}' --format json");
  CHECK(mtp.exit_code == 0);
  CHECK(mtp.out.find("\"bytes_per_token\": 71424") != std::string::npos);  // 62 x 1,152
  auto draft = RunKvplan(
      "capacity llama-3.1-70b --gpu h100-sxm -tp 4 --max-model-len 32K --speculative-config "
      "'{\"model\": \"llama-3.2-1b\", \"num_speculative_tokens\": 5}' --format json");
  CHECK(draft.exit_code == 0);
  CHECK(draft.out.find("\"bytes_per_token\": 90112") != std::string::npos);
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --speculative-config '{\"method\": \"mtp\"}'",
              "--speculative-config: method mtp: llama-3.1-8b has no MTP layers "
              "(num_nextn_predict_layers 0); give a draft model");
  // Each knob is its engine's.
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --host-cache-size 1GiB",
              "--host-cache-size is trtllm's flag, not vllm's (or use --engine trtllm)");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --engine sglang --num-gpu-blocks-override 9",
              "--num-gpu-blocks-override is vllm's flag, not sglang's (or use --engine vllm)");
  ExpectError("capacity llama-3.1-8b --gpu h100-sxm --engine sglang --max-model-len auto",
              "--max-model-len auto: the auto-fit is vLLM's (give a length)");
}

TEST_CASE("gpus: the catalog, one device, json") {
  auto all = RunKvplan("gpus");
  REQUIRE(all.exit_code == 0);
  for (const char* name :
       {"a10g", "l4", "l40s", "a100-40gb", "a100-80gb", "h100-pcie", "h100-sxm", "h100-nvl", "h200",
        "b200", "mi300x", "mi325x", "rtx-3090", "rtx-4090"}) {
    CAPTURE(name);
    CHECK(all.out.find(std::string("\n") + name + " ") != std::string::npos);
  }
  // The memory the driver reports beside the size: what capacity plans with.
  CHECK(all.out.find("usable GiB") != std::string::npos);
  CHECK(all.out.find("    80.00      85.90       79.65") != std::string::npos);  // h100-sxm
  CHECK(all.out.find("\nusable: the total the driver reports (nvidia-smi's on NVIDIA)") !=
        std::string::npos);
  auto one = RunKvplan("gpus h100-sxm --format json");
  REQUIRE(one.exit_code == 0);
  CHECK(one.out.find("\"memory_bytes\": 85899345920") != std::string::npos);
  CHECK(one.out.find("\"memory_bandwidth_gbps\": 3350") != std::string::npos);
  CHECK(one.out.find("\"usable_memory_bytes\": 85520809984") != std::string::npos);
  // None on record: null, not 0 (total_memory_bytes is then the size).
  auto b200 = RunKvplan("gpus b200 --format json");
  CHECK(b200.out.find("\"usable_memory_bytes\": null") != std::string::npos);
  ExpectError("gpus h100-sx",
              "unknown GPU 'h100-sx' (did you mean 'h100-sxm'?); `kvplan gpus` lists the catalog");
  // One edit from 'a100-80gb', but the edit is in the family: the h100s are
  // offered, not the A100 alone; a family of one is found however the rest
  // is spelt.
  ExpectError(
      "gpus h100-80gb",
      "unknown GPU 'h100-80gb' (did you mean 'h100-nvl', 'h100-pcie', 'h100-sxm'?); `kvplan gpus` "
      "lists the catalog");
  ExpectError("gpus h200-141gb",
              "unknown GPU 'h200-141gb' (did you mean 'h200'?); `kvplan gpus` lists the catalog");
  // An edit outside the family keeps the one-edit rule: no other llamas.
  ExpectError("size llama-3.1-7b",
              "unknown model 'llama-3.1-7b' (did you mean 'llama-3.1-70b', 'llama-3.1-8b'?); "
              "`kvplan models` "
              "lists the catalog");
}

TEST_CASE("capacity: every example in --help runs and exits 0") {
  auto help = RunKvplan("capacity --help");
  REQUIRE(help.exit_code == 0);
  size_t at = help.out.find("Examples:");
  REQUIRE(at != std::string::npos);
  int ran = 0;
  for (size_t pos = help.out.find("kvplan capacity ", at); pos != std::string::npos;
       pos = help.out.find("kvplan capacity ", pos + 1)) {
    std::string line = help.out.substr(pos + 7, help.out.find('\n', pos) - pos - 7);
    if (line.find("./my-profile.yaml") != std::string::npos) continue;  // a user's file
    CAPTURE(line);
    auto r = RunKvplan(line);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    ++ran;
  }
  CHECK(ran >= 7);
}

TEST_CASE("capacity: data parallel replicas multiply the cluster totals") {
  auto one = RunKvplan("capacity llama-3.1-70b --gpu h100-sxm -tp 4 --format json");
  auto two = RunKvplan("capacity llama-3.1-70b --gpu h100-sxm -tp 4 -dp 4 --nodes 2 --format json");
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  auto field = [](const std::string& json, const std::string& key) {
    size_t at = json.find("\"" + key + "\": ");
    REQUIRE(at != std::string::npos);
    return std::stoull(json.substr(at + key.size() + 4));
  };
  CHECK(field(two.out, "max_tokens") == field(one.out, "max_tokens"));
  CHECK(field(two.out, "gpus") == 16);
  CHECK(field(two.out, "replicas") == 4);
  // Cluster keys come after the per-GPU ones: find the cluster object's max_tokens.
  const std::string cluster = two.out.substr(two.out.find("\"cluster\""));
  CHECK(field(cluster, "max_tokens") == 4 * field(one.out, "max_tokens"));
}

TEST_CASE("capacity, tradeoff and compare read the deployment flags the same way") {
  // One parser (cli/deploy_flags): a flag means the same, and is refused
  // with the same words, in every command that sizes a deployment (compare
  // names the column it was building).
  struct Cmd {
    const char* args;
    const char* prefix;
  };
  for (const Cmd& c :
       {Cmd{"capacity", ""}, Cmd{"tradeoff", ""},
        Cmd{"compare --vary kv-cache-dtype=fp16,fp8", "--vary kv-cache-dtype=fp16: "}}) {
    CAPTURE(c.args);
    const std::string base = std::string(c.args) + " llama-3.1-8b --gpu h100-sxm";
    const std::string p = c.prefix;
    ExpectError(base + " --engine sglang --gpu-memory-utilization 0.9",
                p + "--gpu-memory-utilization is vllm's flag, not sglang's (use "
                    "--mem-fraction-static or --engine vllm)");
    ExpectError(base + " --max-num-seqs 4q",
                p + "--max-num-seqs: '4q' has an unknown suffix 'q' (use k/m/g = 1000s, K/M/G = "
                    "1024s)");
    ExpectError(base + " --max-total-tokens 1000",
                p + "--max-total-tokens is SGLang's flag (use --kv-cache-memory-bytes, or "
                    "--engine sglang)");
  }
  // --quant-group-size reaches the weights wherever it is given: int4 in
  // groups of 32 carries more scales than in groups of 64, so the vLLM
  // budget left for the cache is smaller, and by the same bytes everywhere.
  auto budget = [](const std::string& args) {
    auto r = RunKvplan(args + " --format json");
    REQUIRE(r.exit_code == 0);
    const std::string key = "\"kv_budget_bytes\": ";
    const size_t at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    return std::stoull(r.out.substr(at + key.size()));
  };
  const std::string tail = " llama-3.1-8b --gpu h100-sxm --weight-dtype int4 --quant-group-size ";
  const uint64_t cap32 = budget("capacity" + tail + "32"), cap64 = budget("capacity" + tail + "64");
  CHECK(cap32 < cap64);
  CHECK(budget("tradeoff" + tail + "32") == cap32);
  CHECK(budget("tradeoff" + tail + "64") == cap64);
}

TEST_CASE("gpus PROFILE --format json keeps each point's group and batch, and the weights curve") {
  auto r = RunKvplan("gpus " + kvplan::test::SourcePath("tests/data/profile-groups.yaml") +
                     " --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"bytes\": 1048576,\n        \"gbps\": 5,\n        \"group\": 4,\n        "
                   "\"batch\": 1") != std::string::npos);
  CHECK(r.out.find("\"weights_curve\": [") != std::string::npos);
  CHECK(r.out.find("\"gbps\": 14,") != std::string::npos);  // the weights curve's last point
}

TEST_CASE("capacity --vllm-version: the rules shown, in text and JSON") {
  auto now = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm");
  REQUIRE(now.exit_code == 0);
  CHECK(now.out.find(" · vllm · tp 1") != std::string::npos);
  CHECK(now.out.find("  usable (--gpu-memory-utilization 0.92) ") != std::string::npos);
  CHECK(now.out.find("    CUDA graphs, batches to 512 (estimated, subtracted) ") !=
        std::string::npos);
  CHECK(now.out.find("  Estimated CUDA graph memory: 1.00 GiB total\n") != std::string::npos);
  auto old = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --vllm-version 0.20.1");
  REQUIRE(old.exit_code == 0);
  CHECK(old.out.find(" · vllm 0.20 · tp 1") != std::string::npos);
  CHECK(old.out.find("  usable (--gpu-memory-utilization 0.9) ") != std::string::npos);
  CHECK(old.out.find("    CUDA graphs, batches to 512 (outside the fraction) ") !=
        std::string::npos);
  CHECK(old.out.find("Estimated CUDA graph memory") == std::string::npos);
  auto j = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format json");
  CHECK(j.out.find("\"vllm_version\": \"latest\"") != std::string::npos);
  CHECK(j.out.find("\"cuda_graphs_subtracted\": true") != std::string::npos);
  CHECK(j.out.find("\"cuda_graph_max_bs\": 512,") != std::string::npos);
  auto eager = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format json --enforce-eager");
  CHECK(eager.out.find("\"cuda_graph_max_bs\": null,") != std::string::npos);
  auto j20 = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format json --vllm-version 0.20");
  CHECK(j20.out.find("\"vllm_version\": \"0.20\"") != std::string::npos);
  CHECK(j20.out.find("\"cuda_graphs_subtracted\": false") != std::string::npos);
  auto csv = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format csv --vllm-version 0.20");
  CHECK(csv.out.rfind("model,gpu,engine,vllm_version,tp,", 0) == 0);
  CHECK(csv.out.find("\nllama-3.1-8b,h100-sxm,vllm,0.20,1,") != std::string::npos);
  auto sg = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format csv --engine sglang");
  CHECK(sg.out.find("\nllama-3.1-8b,h100-sxm,sglang,,1,") != std::string::npos);
  // A given budget: nothing modelled comes out of it, graphs included.
  auto given = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --kv-cache-memory-bytes 10GiB");
  CHECK(given.out.find("    CUDA graphs, batches to 512   ") != std::string::npos);
  CHECK(given.out.find("subtracted") == std::string::npos);
  CHECK(given.out.find("Estimated CUDA graph memory") == std::string::npos);
  // compare: one column per release; JSON keeps "engine": "vllm".
  auto cmp = RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vary vllm-version=0.20,latest");
  REQUIRE(cmp.exit_code == 0);
  CHECK(cmp.out.find("vllm 0.20 · bf16          vllm · bf16") != std::string::npos);
  CHECK(cmp.out.find("51.96 GiB    52.56 GiB (1.01x)") != std::string::npos);
  auto cj = RunKvplan(
      "compare llama-3.1-8b --gpu h100-sxm --vary vllm-version=0.20,latest --format json");
  CHECK(cj.out.find("\"engine\": \"vllm\",\n      \"vllm_version\": \"0.20\"") !=
        std::string::npos);
  // --vllm-version with --vary engine: the vLLM columns only.
  auto eng = RunKvplan(
      "compare llama-3.1-8b --gpu h100-sxm --vllm-version 0.20 --vary engine=vllm,sglang");
  REQUIRE(eng.exit_code == 0);
  CHECK(eng.out.find("vllm 0.20 · bf16      sglang · bf16") != std::string::npos);
  // Engine names are case-insensitive: VLLM is vLLM, and keeps the version.
  auto upper =
      RunKvplan("compare llama-3.1-8b --gpu h100-sxm --vllm-version 0.20 --vary engine=vllm,VLLM");
  REQUIRE(upper.exit_code == 0);
  CHECK(upper.out.find("vllm 0.20 · bf16   vllm 0.20 · bf16") != std::string::npos);
  CHECK(upper.out.find("51.96 GiB  51.96 GiB (1.00x)") != std::string::npos);
}

TEST_CASE("gpus --format csv: plain numbers, the unit in the name") {
  auto one = RunKvplan("gpus h100-sxm --format csv");
  REQUIRE(one.exit_code == 0);
  CHECK(one.out.rfind("field,value\n", 0) == 0);
  CHECK(one.out.find("\nmemory_bytes,85899345920\n") != std::string::npos);
  CHECK(one.out.find("\nmemory_bandwidth_gbps,3350\n") != std::string::npos);
  CHECK(one.out.find("\nbf16_dense_flops,989400000000000\n") != std::string::npos);
  CHECK(one.out.find("GB/s") == std::string::npos);
  auto all = RunKvplan("gpus --format csv");
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.rfind("name,device,memory_bytes,usable_memory_bytes,memory_bandwidth_gbps,"
                      "bf16_dense_flops,fp8_dense_flops,fp4_dense_flops\n",
                      0) == 0);
  // No fp8 on an A100: an empty cell, not "-".
  CHECK(all.out.find("\na100-80gb,NVIDIA A100 SXM4 80GB,85899345920,85899345920,2039,"
                     "312000000000000,,\n") != std::string::npos);
  CHECK(all.out.find("\nh100-sxm,NVIDIA H100 SXM5 80GB,85899345920,85520809984,3350,") !=
        std::string::npos);
  CHECK(all.out.find(",9000000000000000\n") != std::string::npos);  // B200's dense fp4
}

TEST_CASE("docs/capacity.md quotes the vLLM lines the binary prints") {
  auto r = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm");
  REQUIRE(r.exit_code == 0);
  const std::string doc = kvplan::test::ReadFile(kvplan::test::SourcePath("docs/capacity.md"));
  for (const char* line :
       {"Available KV cache memory: 52.56 GiB", "GPU KV cache size: 430,544 tokens",
        "Maximum concurrency for 131,072 tokens per request: 3.28x"}) {
    CAPTURE(line);
    CHECK(r.out.find(std::string("  ") + line + "\n") != std::string::npos);
    CHECK(doc.find(std::string("`") + line + "`") != std::string::npos);
  }
}

TEST_CASE("capacity and paging: one block, token or request is singular") {
  auto one = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --block-size 1");
  REQUIRE(one.exit_code == 0);
  CHECK(one.out.find(" · block 1 token\n") != std::string::npos);
  CHECK(one.out.find("1 token = 131,072 B") != std::string::npos);
  CHECK(one.out.find("(131,072 blocks)") != std::string::npos);
  auto req = RunKvplan("capacity llama-3.1-70b --gpu h100-sxm -tp 2 --max-model-len 8K");
  REQUIRE(req.exit_code == 0);
  CHECK(req.out.find("1.39 (1 whole request)\n") != std::string::npos);
  auto many = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm");
  CHECK(many.out.find("3.28 (3 whole requests)\n") != std::string::npos);
  CHECK(many.out.find(" · block 16 tokens\n") != std::string::npos);
  const std::string dir = kvplan::test::TempDir();
  const std::string mix =
      kvplan::test::WriteFile(dir, "one.csv", "prompt_tokens,output_tokens\n100,10\n");
  auto paging = RunKvplan(
      "paging llama-3.1-8b --gpu l40s --max-model-len 32K --block-size 1 "
      "--requests " +
      mix);
  REQUIRE(paging.exit_code == 0);
  CHECK(paging.out.find(" · block 1 token\n") != std::string::npos);
  CHECK(paging.out.find(": 1 request, mean 100 prompt") != std::string::npos);
}

TEST_CASE("llama.cpp -c 0 is the model's own context, as llama.cpp loads it") {
  // llama-context.cpp: n_ctx 0 becomes n_ctx_train; for Llama-3.1-8B
  // 131,072 cells, 16 GiB of fp16 KV, not the 4,096 of the default.
  kvplan::test::CliResult r =
      RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine llama.cpp -c 0 --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"cells\": 131072,") != std::string::npos);
  kvplan::test::CliResult t =
      RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine llama.cpp -c 0 -np 4");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("n_ctx 131,072 cells (4 sequences x 32,768 tokens; -c 0: the model's "
                   "max_context) · n_ubatch 512\n") != std::string::npos);
  // --max-model-len beside -c is taken where it says the same (-c / -np);
  // apart, it is an error (tests/bad-inputs/cases.yaml).
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine llama.cpp -c 8192 -np 4 "
                  "--max-model-len 2048")
            .out.find("n_ctx 8,192 cells (4 sequences x 2,048 tokens) · n_ubatch 512\n") !=
        std::string::npos);
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine llama.cpp -c 8192 -np 4 "
                  "--max-model-len 2049")
            .exit_code == 2);
  // -c 0 is the model's context: 131,072 / 4 agrees with --max-model-len 32K.
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine llama.cpp -c 0 -np 4 "
                  "--max-model-len 32K")
            .exit_code == 0);
  // Unset stays llama-server's 4,096, one sequence.
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --engine llama.cpp")
            .out.find("n_ctx 4,096 cells (1 sequence x 4,096 tokens) · n_ubatch 512\n") !=
        std::string::npos);
  // A deployment's ctx_size: 0 means the same.
  const std::string dir = kvplan::test::TempDir();
  kvplan::test::WriteFile(
      dir, "d.yaml",
      "name: d\nmodel: llama-3.1-8b\nhardware:\n  gpu: h100-sxm\nengine:\n  name: llama.cpp\n"
      "  args:\n    ctx_size: 0\n    parallel: 2\nrequirements:\n  min_concurrency: 2\n");
  kvplan::test::CliResult d = RunKvplan("check d.yaml --format json", dir);
  CAPTURE(d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(d.out.find("\"kv_cache_tokens\": 131072,") != std::string::npos);  // 2 x 65,536
}

TEST_CASE("capacity: a hybrid model's request under vLLM, its own KV and the blocks it holds") {
  // Gemma-3-27B at 32K: 6,617,038,848 B of its own KV, but 5,510 blocks of
  // 1,310,720 B (padding layers, the sliding groups' prefill chunk) =
  // 7,222,067,200 B, which is what the concurrency counts.
  kvplan::test::CliResult j =
      RunKvplan("capacity gemma-3-27b --gpu h100-sxm --max-model-len 32K --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"request_bytes\": 6617038848,") != std::string::npos);
  CHECK(j.out.find("\"request_block_bytes\": 7222067200,") != std::string::npos);
  CHECK(RunKvplan("capacity gemma-3-27b --gpu h100-sxm --max-model-len 32K")
            .out.find("one request of max_model_len      6.16 GiB (6.62 GB) of KV; holds 5,510 "
                      "blocks = 6.73 GiB (7.22 GB) (padding layers included)\n") !=
        std::string::npos);
  // One kind of layer: the blocks are the bytes rounded up to a block.
  CHECK(RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --format json")
            .out.find("\"request_block_bytes\": 17179869184,") != std::string::npos);
}

namespace kvplan::test {

TEST_CASE("capacity: SGLang's state pool flags and vLLM's state dtypes, on the command line") {
  const std::string base =
      "capacity qwen3-next-80b-a3b-instruct --gpu h200 --tp 2 --max-model-len 32K";
  const CliResult s = RunKvplan(base + " --engine sglang --max-mamba-cache-size 100");
  REQUIRE(s.exit_code == 0);
  CHECK(s.out.find("state pool, 100 slots") != std::string::npos);
  CHECK(s.out.find("max_num_seqs 33") != std::string::npos);
  CHECK(
      s.out.find("Mamba Cache is allocated. max_mamba_cache_size: 100, conv_state size: 0.08GB") !=
      std::string::npos);
  const nlohmann::json j =
      nlohmann::json::parse(RunKvplan(base + " --engine sglang --format json").out);
  CHECK(j["state_slots"].get<uint64_t>() > 600);
  CHECK(j["state_slots_per_running_request"] == 3);
  // --disable-radix-cache: the running requests size the pool, one slot each.
  const nlohmann::json off = nlohmann::json::parse(
      RunKvplan(base + " --engine sglang --disable-radix-cache --max-num-seqs 48 --format json")
          .out);
  CHECK(off["state_slots"] == 48);
  CHECK(off["state_slots_per_running_request"] == 1);
  // vLLM's fp32 SSM state doubles the Mamba page: 24,576 + 1,048,576 B = 1,073,152 B per layer,
  // so the attention block grows to 16 x cdiv(1,073,152, 16 x 1,024) = 1,056 tokens.
  const CliResult v = RunKvplan(base + " --mamba-ssm-cache-dtype float32");
  REQUIRE(v.exit_code == 0);
  CHECK(v.out.find("Setting attention block size to 1056 tokens") != std::string::npos);
  const CliResult line = RunKvplan(
      "check --vllm-args \"vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct -tp 2 "
      "--mamba-ssm-cache-dtype float32 --max-model-len 32768\" --gpu h200");
  CHECK(line.out.find("KV blocks of 1056 tokens") != std::string::npos);
  // Each flag belongs to its engine.
  ExpectError(base + " --max-mamba-cache-size 100",
              "--max-mamba-cache-size is sglang's flag, not vllm's");
  ExpectError(base + " --engine llama.cpp --mamba-ssm-dtype float32",
              "--mamba-ssm-dtype is sglang's and vllm's flag, not llama.cpp's");
  ExpectError(base + " --engine sglang --disable-radix-cache --enable-prefix-caching",
              "--enable-prefix-caching and --disable-radix-cache contradict each other");
  // compare drops an engine's flags from the columns of other engines.
  const CliResult cmp = RunKvplan(
      "compare qwen3-next-80b-a3b-instruct --gpu h200 --tp 2 --max-model-len 32K "
      "--disable-radix-cache --max-mamba-cache-size 64 --vary engine=sglang,vllm");
  CHECK(cmp.exit_code == 0);
  ExpectError(
      base + " --mamba-cache-dtype fp64",
      "--mamba-cache-dtype: 'fp64' is not a state dtype (auto, float32, bfloat16, float16)");
  ExpectError(base + " --engine sglang --mamba-full-memory-ratio 0",
              "--mamba-full-memory-ratio must be a positive ratio, got 0");
  ExpectError(base + " --engine sglang --max-mamba-cache-size 0",
              "--max-mamba-cache-size: must be at least 1");
}

}  // namespace kvplan::test
