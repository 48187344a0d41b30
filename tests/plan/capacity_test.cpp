// Capacity against published engine startup logs (docs/engine-logs.md), exact
// where the engine's arithmetic is exact given the printed budget or block
// count, plus the modelled reserve fitted to logs, and invariants over every
// bundled model and GPU.
#include "plan/capacity.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "import/resolve.h"
#include "plan/parallel.h"
#include "plan/tradeoff.h"
#include "spec/catalog.h"
#include "spec/model_reader.h"
#include "util/error.h"
#include "util/units.h"

using namespace kvplan;

namespace {

// A dense GQA model with the shape an engine log implies (its config.json).
ModelSpec Shape(const std::string& name, uint64_t layers, uint64_t hidden, uint64_t q, uint64_t kv,
                uint64_t head_dim, uint64_t vocab, uint64_t inter, uint64_t max_context,
                const std::string& dtype = "bf16") {
  std::string yaml = fmt::format(
      "name: {}\nsource: test\nlayers: {}\nhidden_size: {}\nquery_heads: {}\nkv_heads: {}\n"
      "head_dim: {}\nmax_context: {}\nparams: 1000000\nweight_dtype: {}\nvocab_size: {}\n"
      "intermediate_size: {}\n",
      name, layers, hidden, q, kv, head_dim, max_context, dtype, vocab, inter);
  return ParseModelYaml(yaml, name + ".yaml");
}

HardwareSpec Gpu(const std::string& name) {
  return LoadHardware(name);
}

CapacityResult Run(const ModelSpec& m, const std::string& gpu, EngineConfig c) {
  return ComputeCapacity(m, Gpu(gpu), c);
}

std::string Log(const CapacityResult& r, size_t i) {
  REQUIRE(i < r.engine_log.size());
  return r.engine_log[i];
}

}  // namespace

TEST_CASE("vLLM V-1: Llama-3.1-8B on an RTX 3090, 1952 and 1478 blocks") {
  // https://github.com/vllm-project/vllm/issues/10517 (comment by kaspersiminski):
  // "GPU blocks: 1952 ... Maximum concurrency for 20000 tokens per request: 1.56x";
  // "# GPU blocks: 1478 ... Maximum concurrency for 29000 tokens per request: 0.82x ...
  //  maximum number of tokens that can be stored in KV cache (23648)".
  ModelSpec m = LoadModel("llama-3.1-8b");
  EngineConfig c;
  c.max_model_len = 20000;
  c.kv_cache_memory_bytes = 1952 * 2 * kMiB;         // 16 tokens x 128 KiB per block
  c.vllm_version = ParseVllmVersion("0.6", "test");  // the log's: before the null-block rule
  CapacityResult a = Run(m, "rtx-3090", c);
  CHECK(a.bytes_per_token == 131072);
  CHECK(a.num_blocks == 1952);
  CHECK(a.max_tokens == 31232);
  CHECK(a.blocks_per_request == 1250);
  CHECK(fmt::format("{:.2f}", a.max_concurrency) == "1.56");
  CHECK(Log(a, 0) == "Available KV cache memory: 3.81 GiB");
  CHECK(Log(a, 2) == "Maximum concurrency for 20,000 tokens per request: 1.56x");

  c.max_model_len = 29000;
  c.kv_cache_memory_bytes = 1478 * 2 * kMiB;
  CapacityResult b = Run(m, "rtx-3090", c);
  CHECK(b.num_blocks * 16 == 23648);
  CHECK(fmt::format("{:.2f}", b.max_concurrency) == "0.82");
  CHECK_FALSE(b.fits);
  CHECK(b.largest_max_model_len == 23648);
  CHECK(Log(b, 0) == "Available KV cache memory: 2.89 GiB");
}

TEST_CASE("vLLM V-1: the modelled activation peak matches the profiled torch peak") {
  // Same log: peak_torch_memory 17.06 GiB (20000 batched tokens) and 17.98 GiB
  // (29000) with 14.9888 GiB of weights, so the activation peak is 2.07 and
  // 2.99 GiB (+-0.005); V0 batches max_model_len tokens in the profile run.
  ModelSpec m = LoadModel("llama-3.1-8b");
  for (auto [tokens, peak_gib] : {std::pair<uint64_t, double>{20000, 17.06 - 14.9888},
                                  std::pair<uint64_t, double>{29000, 17.98 - 14.9888}}) {
    EngineConfig c;
    c.max_model_len = tokens;
    c.max_num_batched_tokens = tokens;
    c.max_num_seqs = 256;
    c.tp = 1;
    Reserve r = ModelReserve(m, Gpu("rtx-3090"), ResolveEngineConfig(m, Gpu("rtx-3090"), c));
    double got = static_cast<double>(std::max(r.activation_bytes, r.logits_bytes)) / kGiB;
    CAPTURE(tokens);
    CHECK(got == doctest::Approx(peak_gib).epsilon(0.01));
  }
}

TEST_CASE("vLLM: the sampler term matches the profiled peak of a 256-row run") {
  // https://github.com/vllm-project/vllm/pull/10511 (youkaichao, 2024-12-14):
  // Meta-Llama-3-8B on an 80 GB GPU, 256 sequences, 8192 batched tokens:
  // "PyTorch activation peak memory 1.26GiB" (the forward pass alone is 0.84 GiB,
  // so the sampler over 256 x 128,256 logits sets the peak).
  ModelSpec m = LoadModel("llama-3.1-8b");
  EngineConfig c;
  c.max_num_batched_tokens = 8192;
  c.max_num_seqs = 256;
  Reserve r = ModelReserve(m, Gpu("h100-sxm"), ResolveEngineConfig(m, Gpu("h100-sxm"), c));
  CHECK(r.logits_bytes > r.activation_bytes);
  CHECK(static_cast<double>(r.logits_bytes) / kGiB == doctest::Approx(1.26).epsilon(0.05));
}

TEST_CASE("vLLM V-3: Qwen3-14B, 6.51 GiB available, max_model_len 32768") {
  // https://github.com/LMCache/LMCache/issues/1739: "Available KV cache memory: 6.51 GiB",
  // "GPU KV cache size: 42,656 tokens", "Maximum concurrency for 32,768 tokens per request: 1.30x".
  ModelSpec m = Shape("qwen3-14b", 40, 5120, 40, 8, 128, 151936, 17408, 40960);
  EngineConfig c;
  c.max_model_len = 32768;
  c.kv_cache_memory_bytes = ParseBytes("6.51GiB");
  CapacityResult r = Run(m, "h100-sxm", c);
  CHECK(r.bytes_per_token == 163840);
  CHECK(r.max_tokens == 42656);
  CHECK(Log(r, 1) == "GPU KV cache size: 42,656 tokens");
  CHECK(Log(r, 2) == "Maximum concurrency for 32,768 tokens per request: 1.30x");
}

TEST_CASE("vLLM V-4: fp8 cache, 48 x 4 x 128, and the largest max_model_len when it does not fit") {
  // https://github.com/vllm-project/vllm/issues/25350: "GPU KV cache size: 230,528 tokens",
  // "Maximum concurrency for 100,000 tokens per request: 2.31x"; with --max-model-len 221000:
  // "(10.12 GiB KV cache is needed, ... available KV cache memory (5.59 GiB). ... the estimated
  // maximum model length is 122080". Block counts 14,408 and 7,630 are those the printed token
  // counts imply (the GiB figures are rounded).
  ModelSpec m = LoadModel("qwen3-30b-a3b");
  m.max_context = 262144;  // the run used YaRN
  EngineConfig c;
  c.kv_cache_dtype = "fp8";
  c.max_model_len = 100000;
  c.kv_cache_memory_bytes = 14408ull * 16 * 49152;
  CapacityResult a = Run(m, "h100-sxm", c);
  CHECK(a.bytes_per_token == 49152);
  CHECK(a.max_tokens == 230528);
  CHECK(Log(a, 0) == "Available KV cache memory: 10.55 GiB");
  CHECK(Log(a, 2) == "Maximum concurrency for 100,000 tokens per request: 2.31x");

  c.max_model_len = 221000;
  c.kv_cache_memory_bytes = 7630ull * 16 * 49152;
  c.vllm_version = ParseVllmVersion("0.10", "test");  // the log's: before the null-block rule
  CapacityResult b = Run(m, "h100-sxm", c);
  CHECK_FALSE(b.fits);
  CHECK(b.largest_max_model_len == 122080);
  CHECK(Log(b, 1).find("max seq len (221000), (10.12 GiB KV cache is needed") != std::string::npos);
  CHECK(Log(b, 1).find("available KV cache memory (5.59 GiB)") != std::string::npos);
  CHECK(Log(b, 1).find("estimated maximum model length is 122080.") != std::string::npos);
}

TEST_CASE("vLLM V-2 and V-6: concurrency from the printed blocks") {
  // https://github.com/vllm-project/vllm/pull/24577 (mgoin): Qwen3-0.6B, "GPU KV cache size:
  // 652,144 tokens", "Maximum concurrency for 4,096 tokens per request: 159.21x".
  ModelSpec q = Shape("qwen3-0.6b", 28, 1024, 16, 8, 128, 151936, 3072, 40960);
  EngineConfig c;
  c.max_model_len = 4096;
  c.kv_cache_memory_bytes = 40759ull * 16 * 114688;
  CapacityResult a = Run(q, "a100-80gb", c);
  CHECK(Log(a, 1) == "GPU KV cache size: 652,144 tokens");
  CHECK(Log(a, 2) == "Maximum concurrency for 4,096 tokens per request: 159.21x");
  // https://github.com/vllm-project/vllm/pull/12569: Llama-3.1-70B w8a8, "# GPU blocks: 1381",
  // "Maximum concurrency for 2048 tokens per request: 10.79x".
  ModelSpec l = LoadModel("llama-3.1-70b");
  c = {};
  c.max_model_len = 2048;
  c.weight_dtype = "int8";
  c.kv_cache_memory_bytes = 1381ull * 16 * 327680;
  CapacityResult b = Run(l, "h100-sxm", c);
  CHECK(b.num_blocks == 1381);
  CHECK(fmt::format("{:.2f}", b.max_concurrency) == "10.79");
}

TEST_CASE(
    "vLLM 0.21 and later: 0.92 of memory, and the CUDA-graph estimate comes out of the budget") {
  // gpu_worker.py determine_available_memory subtracts the graph estimate
  // (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, on by default from 0.21, when
  // the default utilization also became 0.92); before, graphs were captured
  // after the cache was sized.
  ModelSpec m = LoadModel("llama-3.1-8b");
  EngineConfig now;
  EngineConfig old;
  old.vllm_version = 20;
  CapacityResult a = Run(m, "h100-sxm", now);
  CapacityResult b = Run(m, "h100-sxm", old);
  CHECK(a.config.memory_fraction == 0.92);
  CHECK(b.config.memory_fraction == 0.9);
  CHECK(a.reserve.cuda_graph_bytes == 512 * 2 * kMiB);  // min(512, 2 x 1024 seqs) x 2 MiB
  CHECK(b.reserve.cuda_graph_bytes == a.reserve.cuda_graph_bytes);
  CHECK(a.reserve.total_bytes == b.reserve.total_bytes + a.reserve.cuda_graph_bytes);
  CHECK(a.kv_budget_bytes ==
        b.kv_budget_bytes + (a.usable_bytes - b.usable_bytes) - a.reserve.cuda_graph_bytes);
  CHECK(Log(a, 0) == "Estimated CUDA graph memory: 1.00 GiB total");
  CHECK(Log(a, 1) == "Available KV cache memory: 52.56 GiB");
  CHECK(Log(b, 0) == "Available KV cache memory: 51.96 GiB");
  const auto has = [](const CapacityResult& r, const std::string& code) {
    return std::any_of(r.lints.begin(), r.lints.end(),
                       [&](const Lint& l) { return l.code == code; });
  };
  // Graphs outside 1 - 0.99 of 79.65 GiB (0.80 GiB) are only a risk when
  // they are captured after sizing.
  now.memory_fraction = old.memory_fraction = 0.99;
  CHECK_FALSE(has(Run(m, "h100-sxm", now), "graph-headroom"));
  CHECK(has(Run(m, "h100-sxm", old), "graph-headroom"));
  now.memory_fraction = old.memory_fraction = 0;

  // --enforce-eager: no graphs, no line; an explicit budget: no estimate.
  EngineConfig eager = now;
  eager.enforce_eager = true;
  CapacityResult e = Run(m, "h100-sxm", eager);
  CHECK(e.reserve.cuda_graph_bytes == 0);
  CHECK(e.kv_budget_bytes == a.kv_budget_bytes + a.reserve.cuda_graph_bytes);
  CHECK(Log(e, 0).starts_with("Available KV cache memory"));
  EngineConfig given = now;
  given.kv_cache_memory_bytes = 10 * kGiB;
  CHECK(Log(Run(m, "h100-sxm", given), 0) == "Available KV cache memory: 10.00 GiB");

  // Every pipeline stage captures graphs, the first (which does not sample)
  // included: its reserve is the forward pass, non-torch, rotary and graphs.
  EngineConfig pp = now;
  pp.pp = 2;
  CapacityResult p = Run(m, "h100-sxm", pp);
  REQUIRE(p.stages.size() == 2);
  const Reserve& r = p.reserve;
  CHECK(p.stages[0].headroom_bytes ==
        static_cast<int64_t>(p.usable_bytes - p.stages[0].weights_bytes - r.activation_bytes -
                             r.non_torch_bytes - r.rope_cache_bytes - r.cuda_graph_bytes));
  pp.vllm_version = 20;
  CapacityResult p20 = Run(m, "h100-sxm", pp);
  CHECK(p20.stages[0].headroom_bytes ==
        static_cast<int64_t>(p20.usable_bytes - p20.stages[0].weights_bytes - r.activation_bytes -
                             r.non_torch_bytes - r.rope_cache_bytes));
}

TEST_CASE("vLLM versions: what --vllm-version and engine.version accept") {
  CHECK(ParseVllmVersion("0.20", "v") == 20);
  CHECK(ParseVllmVersion("0.2", "v") == 2);  // not 0.20
  CHECK(ParseVllmVersion("v0.21.0rc1", "v") == 21);
  CHECK(ParseVllmVersion("0.11.1.dev12+gabc", "v") == 11);
  CHECK(ParseVllmVersion("1.3", "v") == 1003);
  CHECK(ParseVllmVersion("latest", "v") == kVllmCurrent);
  CHECK(VllmVersionName(20) == "0.20");
  CHECK(VllmVersionName(1003) == "1.3");
  CHECK(VllmVersionName(kVllmCurrent) == "latest");
  for (const char* bad : {"", "0", "0.", ".1", "0.2x", "0.1234", "0.21 ", "x.1", "0.21.0 rc",
                          "0.20.", "0.20..1", "0.020"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(
        ParseVllmVersion(bad, "--vllm-version"),
        ("--vllm-version: expected a vLLM version such as 0.20, 0.21.1 or latest, got '" +
         std::string(bad) + "'")
            .c_str());
  }
  EngineConfig c;
  CHECK(EngineLabel(c) == "vllm");
  c.vllm_version = 20;
  CHECK(EngineLabel(c) == "vllm 0.20");
  c.vllm_graph_profiling = false;
  CHECK(EngineLabel(c) == "vllm 0.20 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0)");
  c.engine = Engine::kSglang;
  CHECK(EngineLabel(c) == "sglang");
}

TEST_CASE("vLLM: int8 weights of Llama-3.1-70B match 'Loading model weights took 67.7229 GB'") {
  // https://github.com/vllm-project/vllm/pull/12569 (w8a8: int8 linear layers with an fp32 scale
  // per output channel; bf16 embeddings, lm_head and norms). vLLM's figure also holds the rotary
  // cos/sin cache (131072 x 128 x 2 B = 32 MiB), which kvplan does not count as weights.
  ModelSpec m = LoadModel("llama-3.1-70b");
  ModelTensors t = BuildModelTensors(m);
  uint64_t bytes = ModelWeightBytes(t, FindWeightFormat("int8"));
  CHECK(static_cast<double>(bytes + 32 * kMiB) / kGiB == doctest::Approx(67.7229).epsilon(0.001));
  // bf16 Llama-3.1-8B: "Model loading took 14.9889 GiB" (vllm PR #17122) = weights + the same
  // cache.
  uint64_t bf16 =
      ModelWeightBytes(BuildModelTensors(LoadModel("llama-3.1-8b")), FindWeightFormat("bf16"));
  CHECK(bf16 == 8030261248ull * 2);
  CHECK(static_cast<double>(bf16 + 32 * kMiB) / kGiB == doctest::Approx(14.9888).epsilon(0.0001));
}

TEST_CASE("checkpoint quantization: DeepSeek-V3 on 8 x H200 and gpt-oss-120b on one H100 fit") {
  // Both are published quantized (DeepSeek-V3 fp8 in 128 x 128 blocks,
  // gpt-oss MXFP4 experts) and served that way by default; in bf16 neither
  // would fit, which is what kvplan said before it read quantization_config.
  EngineConfig c;
  c.tp = 8;
  CapacityResult ds = Run(LoadModel("deepseek-v3"), "h200", c);
  REQUIRE_FALSE(ds.HasError());
  CHECK(ds.weight_dtype == "fp8");
  CHECK(ds.weight_format == "fp8 (128x128 blocks)");
  CHECK(ds.kv_cache_dtype == "bf16");  // the activations' type, as vLLM's "auto"
  CHECK(ds.max_concurrency > 3.9);     // 160K-token requests, MLA latent on every rank
  c.weight_dtype = "bf16";
  CapacityResult ds16 = Run(LoadModel("deepseek-v3"), "h200", c);
  REQUIRE(ds16.HasError());
  CHECK(std::any_of(ds16.lints.begin(), ds16.lints.end(),
                    [](const Lint& l) { return l.code == "weights-fit"; }));
  CHECK(ds16.weight_format == "bf16");
  // vLLM needs whole 128 x 128 blocks on every rank: tp 32 splits the dense
  // MLP into 576-row slices.
  EngineConfig wide;
  wide.tp = 32;
  wide.nodes = 4;
  CapacityResult ds32 = Run(LoadModel("deepseek-v3"), "h200", wide);
  CHECK(std::any_of(ds32.lints.begin(), ds32.lints.end(),
                    [](const Lint& l) { return l.code == "fp8-block-tp"; }));

  CapacityResult oss = Run(LoadModel("gpt-oss-120b"), "h100-sxm", EngineConfig{});
  REQUIRE_FALSE(oss.HasError());
  CHECK(oss.weight_format == "mxfp4 (experts only)");
  CHECK(oss.weights_bytes < 61 * kGiB);
  EngineConfig b;
  b.weight_dtype = "bf16";
  CHECK(Run(LoadModel("gpt-oss-120b"), "h100-sxm", b).HasError());
  // Quantized weights run the model's activations: an int4 Llama-2 (fp16)
  // keeps an fp16 cache, float weights name theirs.
  EngineConfig q;
  q.weight_dtype = "int4";
  CHECK(Run(LoadModel("llama-2-7b"), "h100-sxm", q).kv_cache_dtype == "fp16");
  CHECK(Run(LoadModel("llama-3.1-8b"), "h100-sxm", q).kv_cache_dtype == "bf16");
  q.weight_dtype = "fp16";
  CHECK(Run(LoadModel("llama-3.1-8b"), "h100-sxm", q).kv_cache_dtype == "fp16");
  // An fp32 checkpoint runs bf16 activations, quantized weights or not.
  CHECK(Run(LoadModel("gpt2"), "h100-sxm", EngineConfig{}).kv_cache_dtype == "bf16");
  q.weight_dtype = "fp8";
  CHECK(Run(LoadModel("gpt2"), "h100-sxm", q).kv_cache_dtype == "bf16");
}

TEST_CASE("SGLang S-1: K and V sizes from #tokens, Qwen3-235B-A22B at tp 4") {
  // https://github.com/vllm-project/vllm/issues/21348: "KV Cache is allocated. #tokens: 367404,
  // K size: 8.23 GB, V size: 8.23 GB" (SGLang's GB is bytes / 2^30).
  ModelSpec m = Shape("qwen3-235b-a22b", 94, 4096, 64, 4, 128, 151936, 12288, 40960);
  EngineConfig c;
  c.engine = Engine::kSglang;
  c.tp = 4;
  c.memory_fraction = 0.93;
  c.max_total_tokens = 367404;
  c.weight_dtype = "fp8";
  CapacityResult r = Run(m, "h100-sxm", c);
  CHECK(r.bytes_per_token == 48128);
  CHECK(r.max_tokens == 367404);
  CHECK(Log(r, 0) == "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB");
}

TEST_CASE("SGLang: default mem_fraction_static follows server_args' heuristic") {
  // _handle_gpu_memory_settings: H100 (79.65 GiB > 60 GiB): reserve max(512 + 8192*1.5 +
  // 256*2 + 1/8*1024, 10240) = 13440 MiB -> round((81559 - 13440) / 81559, 3) = 0.835.
  CHECK(DefaultMemoryFraction(Engine::kSglang, Gpu("h100-sxm"), 1) == doctest::Approx(0.835));
  // RTX 4090 (24 GiB): 512 + 2048*1.5 + 24*2 + 128 = 3760 MiB -> (24564 - 3760) / 24564 = 0.847.
  HardwareSpec g = Gpu("rtx-4090");
  double mib = static_cast<double>(g.TotalMemoryBytes()) / kMiB;
  CHECK(DefaultMemoryFraction(Engine::kSglang, g, 1) ==
        doctest::Approx(std::round((mib - 3760) / mib * 1000) / 1000));
}

TEST_CASE("TensorRT-LLM T-1: 69,524,783,104 bytes hold 132,608 tokens of a Llama-2-7B shape") {
  // https://github.com/NVIDIA/TensorRT-LLM/issues/1400: "Allocate 69524783104 bytes for k/v
  // cache." "Using 132608 tokens in paged KV cache."
  EngineConfig c;
  c.engine = Engine::kTrtllm;
  c.kv_cache_memory_bytes = 69524783104ull;
  CapacityResult r = Run(LoadModel("llama-2-7b"), "a100-80gb", c);
  CHECK(r.block_size == 32);
  CHECK(r.num_blocks == 4144);
  CHECK(r.max_tokens == 132608);
  CHECK(Log(r, 1) == "[TensorRT-LLM][INFO] Allocate 69524783104 bytes for k/v cache.");
  CHECK(Log(r, 2) == "[TensorRT-LLM][INFO] Using 132608 tokens in paged KV cache.");
}

TEST_CASE("TensorRT-LLM: the fraction applies to memory free after loading") {
  ModelSpec m = LoadModel("llama-2-7b");
  EngineConfig c;
  c.engine = Engine::kTrtllm;
  c.memory_fraction = 0.5;
  CapacityResult half = Run(m, "a100-80gb", c);
  c.memory_fraction = 1.0;
  CapacityResult all = Run(m, "a100-80gb", c);
  CHECK(half.kv_budget_bytes == all.kv_budget_bytes / 2);
  CHECK(all.kv_budget_bytes ==
        all.total_memory_bytes - all.weights_bytes - all.reserve.total_bytes);
  c.max_gpu_total_bytes = 10 * kGiB;
  CHECK(Run(m, "a100-80gb", c).kv_budget_bytes == 10 * kGiB);
}

TEST_CASE("llama.cpp L-1 and L-4: KV buffer sizes") {
  // https://github.com/ggml-org/llama.cpp/issues/11200: Qwen2.5-Coder-32B, -c 32768, q8_0:
  // "KV self size  = 4352.00 MiB, K (q8_0): 2176.00 MiB, V (q8_0): 2176.00 MiB".
  ModelSpec q = Shape("qwen2.5-coder-32b", 64, 5120, 40, 8, 128, 152064, 27648, 32768);
  EngineConfig c;
  c.engine = Engine::kLlamaCpp;
  c.n_ctx = 32768;
  c.kv_cache_dtype = "q8_0";
  CapacityResult a = Run(q, "a100-80gb", c);
  CHECK(a.k_bytes == 2281701376ull);
  CHECK(Log(a, 0) ==
        "llama_kv_cache: size = 4352.00 MiB ( 32768 cells,  64 layers,  1/1 seqs), "
        "K (q8_0): 2176.00 MiB, V (q8_0): 2176.00 MiB");
  // https://github.com/fedora-copr/logdetective/pull/106: a 32-layer, 8 x 128 model, f16:
  // n_ctx 2048 -> "KV self size = 256.00 MiB, K (f16): 128.00 MiB"; 32768 -> 4096.00 MiB.
  c = {};
  c.engine = Engine::kLlamaCpp;
  c.n_ctx = 2048;
  CapacityResult b = Run(LoadModel("mistral-7b-v0.1"), "a100-80gb", c);
  CHECK(b.k_bytes + b.v_bytes == 256 * kMiB);
  c.n_ctx = 32768;
  CHECK(Run(LoadModel("llama-3.1-8b"), "a100-80gb", c).k_bytes == 2048 * kMiB);
}

TEST_CASE("llama.cpp: Gemma-4-31B's global layers, 4 KV heads x 512, as a published log") {
  // https://github.com/ggml-org/llama.cpp/issues/21394 (build 8643, q5_0 cache, one sequence):
  //   "llama_kv_cache_iswa: creating non-SWA KV cache, size = 120064 cells"
  //   "llama_kv_cache: size = 3224.38 MiB (120064 cells, 10 layers, 1/1 seqs), K (q5_0):
  //    1612.19 MiB, V (q5_0): 1612.19 MiB"
  //   "llama_kv_cache_iswa: creating     SWA KV cache, size = 1536 ..."
  // The 10 global layers keep 4 KV heads x 512 (global_head_dim, num_global_key_value_heads):
  // 2,048 elements = 64 q5_0 blocks of 22 B = 1,408 B per token and layer for K, as for V;
  // 1,408 x 10 x 120,064 = 1,690,501,120 B = 1612.19 MiB. The 50 sliding layers hold
  // pad256(1,024 + 512) = 1,536 cells.
  EngineConfig c;
  c.engine = Engine::kLlamaCpp;
  c.n_ctx = 120064;
  c.kv_cache_dtype = "q5_0";
  c.flash_attn = "on";
  CapacityResult r = Run(LoadModel("gemma-4-31b-it"), "h200", c);
  CHECK(Log(r, 0) == "llama_kv_cache_iswa: creating non-SWA KV cache, size = 120064 cells");
  CHECK(Log(r, 1) ==
        "llama_kv_cache: size = 3224.38 MiB (120064 cells,  10 layers,  1/1 seqs), K (q5_0): "
        "1612.19 MiB, V (q5_0): 1612.19 MiB");
  CHECK(Log(r, 2) == "llama_kv_cache_iswa: creating     SWA KV cache, size = 1536 cells");
  CHECK(r.swa_cells == 1536);
}

TEST_CASE("llama.cpp L-2 and L-3: unpadded cells (--block-size 1) of a Qwen1.5-72B shape") {
  // https://github.com/abetlen/llama-cpp-python/issues/1161: n_ctx 13000, f16, 80 layers x 8192:
  // 406.25 MiB per layer ("CUDA0 KV buffer size = 10968.75 MiB" = 27 layers).
  ModelSpec m = Shape("qwen1.5-72b", 80, 8192, 64, 64, 128, 152064, 24576, 32768);
  EngineConfig c;
  c.engine = Engine::kLlamaCpp;
  c.block_size = 1;
  c.n_ctx = 13000;
  CapacityResult a = Run(m, "b200", c);  // 145 GB of bf16 weights need a big GPU
  CHECK((a.k_bytes + a.v_bytes) / 80 * 27 == 11501568000ull);  // 10968.75 MiB
  // https://github.com/LostRuins/koboldcpp/issues/724: 32,848 cells,
  // "KV self size  = 82120.00 MiB, K (f16): 41060.00 MiB, V (f16): 41060.00 MiB".
  m.max_context = 40960;
  c.n_ctx = 32848;
  CapacityResult b = Run(m, "b200", c);
  CHECK(b.k_bytes == 41060 * kMiB);
  CHECK(Log(b, 0).find("size = 82120.00 MiB") != std::string::npos);
}

TEST_CASE("sliding windows: vLLM holds window - 1 + batched tokens plus a block; llama.cpp PADs") {
  ModelSpec m = LoadModel("gemma-3-27b");
  EngineConfig c;
  c.max_model_len = 32768;
  c.max_num_batched_tokens = 2048;
  c.kv_cache_memory_bytes = 40 * kGiB;
  CapacityResult r = Run(m, "h100-sxm", c);
  // 10 full layers x 32768 tokens + 52 sliding layers x (cdiv(1023 + 2048, 16) + 1) x 16 tokens.
  const uint64_t per_layer = 2 * 16 * 128 * 2;
  CHECK(r.request_bytes == per_layer * (10 * 32768 + 52 * (192 + 1) * 16));
  // llama.cpp iswa, one unified cache (--kv-unified): min(n_ctx, PAD(1024 * 4 + 512, 256)) =
  // 4608 SWA cells for -np 4.
  EngineConfig l;
  l.engine = Engine::kLlamaCpp;
  l.n_ctx = 32768;
  l.n_parallel = 4;
  l.kv_unified = true;
  CapacityResult a = Run(m, "h100-sxm", l);
  CHECK(Log(a, 2) == "llama_kv_cache_iswa: creating     SWA KV cache, size = 4608 cells");
  // Without it, each of the 4 streams has min(8192, PAD(1024 + 512, 256)) = 1,536.
  l.kv_unified = false;
  CHECK(Log(Run(m, "h100-sxm", l), 2) ==
        "llama_kv_cache_iswa: creating     SWA KV cache, size = 6144 cells");
  l.swa_full = true;
  CHECK(Run(m, "h100-sxm", l).k_bytes == 62ull * 16 * 128 * 2 * 32768);
}

TEST_CASE("vLLM hybrid: Gemma 3 pages by KV-cache group, 1 full + 6 sliding groups of 10") {
  // vllm/v1/core/kv_cache_utils.py (main, 001cabc1be16): 10 full + 52 sliding layers;
  // group_size = the fewest of a type = 10 (52 >= 1.5 x 10), so one full group and
  // cdiv(52, 10) = 6 sliding groups (sizes 9, 9, 9, 9, 8, 8: 8 padding layers), 7 in all, in
  // the order of their first layer (layer 0 is sliding).
  ModelSpec m = LoadModel("gemma-3-27b");
  EngineConfig c;
  c.max_model_len = 32768;
  c.max_num_batched_tokens = 2048;
  c.kv_cache_memory_bytes = 40 * kGiB;
  CapacityResult r = Run(m, "h100-sxm", c);
  REQUIRE(r.kv_cache_groups.size() == 7);
  CHECK(r.kv_cache_groups[0].layers.size() == 9);
  CHECK(r.kv_cache_groups[5].layers.size() == 8);
  CHECK(r.kv_cache_groups[6].kind == LayerKind::kFull);
  CHECK(r.kv_cache_groups[6].layers.size() == 10);
  CHECK(r.group_size == 10);
  // A page: 16 tokens x 16 KV heads x (128 + 128) x 2 B = 131,072 B; a block is one page in each
  // of the 10 tensors: 1,310,720 B. 40 GiB / 1,310,720 B = 32,768 blocks.
  CHECK(r.page_bytes == 131072);
  CHECK(r.block_bytes == 1310720);
  CHECK(r.num_blocks == 32768);
  // _report_kv_cache_config: 32,768 // 7 groups x 16 = 74,896 tokens (one block spanning all
  // 62 layers gave 40 GiB / (62 x 8,192 x 16 B) x 16 = 84,560).
  CHECK(r.max_tokens == 74896);
  // A 32,768-token request: the full group cdiv(32768, 16) = 2048 blocks, each sliding group
  // cdiv(min(1023 + 2048, 32768), 16) + 1 = 193: 2048 + 6 x 193 = 3206 blocks; 32,768 / 3206.
  CHECK(r.blocks_per_request == 3206);
  CHECK(Log(r, 1) == "Add 8 padding layers, may waste at most 15.38% KV cache memory");  // 8 / 52
  CHECK(Log(r, 2) == "GPU KV cache size: 74,896 tokens");
  CHECK(Log(r, 3) == "Maximum concurrency for 32,768 tokens per request: 10.22x");
  CHECK(r.max_requests == 10);
  // Every group's blocks count when one request does not fit: 2048 + 6 x 193 > 3000 blocks.
  EngineConfig small = c;
  small.kv_cache_memory_bytes = 3000ull * 1310720;
  CapacityResult s = Run(m, "h100-sxm", small);
  CHECK_FALSE(s.fits);
  // vLLM from 0.29 plans against the 2,999 blocks beside its null block.
  CHECK(s.PlannedBlocks() == 2999);
  CHECK(s.BlocksForRequest(s.largest_max_model_len) <= 2999);
  CHECK(s.BlocksForRequest(s.largest_max_model_len + 1) > 2999);
}

TEST_CASE("vLLM hybrid: the reviewer's Gemma 3 run, 21,968 tokens and 1.75x from 12.60 GB") {
  // kvplan capacity gemma-3-27b --gpu h100-sxm --max-model-len 32K: the modelled budget (about
  // 12.60 GB) gives num_blocks = budget / 1,310,720 B; tokens = num_blocks // 7 x 16, and a
  // request holds 2048 + 6 x (cdiv(min(1023 + 8192, 32768), 16) + 1 = 577) = 5510 blocks
  // (8192 batched tokens on an 80 GB GPU).
  // The run was of vLLM 0.20's rules (0.9 of memory, graphs outside it).
  ModelSpec m = LoadModel("gemma-3-27b");
  EngineConfig c;
  c.max_model_len = 32768;
  c.vllm_version = 20;
  CapacityResult r = Run(m, "h100-sxm", c);
  CHECK(r.num_blocks == r.kv_budget_bytes / 1310720);
  CHECK(r.max_tokens == r.num_blocks / 7 * 16);
  CHECK(r.blocks_per_request == 5510);
  CHECK(fmt::format("{:.2f}", static_cast<double>(r.kv_budget_bytes) / 1e9) == "12.60");
  CHECK(Log(r, 2) == "GPU KV cache size: 21,968 tokens");
  CHECK(Log(r, 3) == "Maximum concurrency for 32,768 tokens per request: 1.75x");
}

TEST_CASE("vLLM hybrid: Jamba's attention block grows to 80 tokens to hold a Mamba state") {
  // tp 2: attention per token and layer 2 x 4 KV heads x 128 x 2 B = 2048 B; a Mamba state per
  // layer (8192 / 2 inner x (3 conv + 16 ssm) x 2 B) = 155,648 B. HybridAttentionMambaModelConfig:
  // block = 16 x cdiv(155,648, 16 x 2048) = 80 tokens, page 80 x 2048 = 163,840 B, the state
  // padded by 8192 / 155,648 = 5.26%. 4 attention + 28 Mamba layers: group_size 4, one
  // attention group + 7 Mamba groups = 8; a block is 4 pages = 655,360 B.
  ModelSpec m = LoadModel("jamba-v0.1");
  EngineConfig c;
  c.tp = 2;
  c.vllm_version = 20;  // the reviewer's run below was of vLLM 0.20's rules
  c.kv_cache_memory_bytes = 80 * kGiB;
  CapacityResult r = Run(m, "h200", c);
  CHECK(r.block_size == 80);
  CHECK(r.config.block_size == 80);
  REQUIRE(r.kv_cache_groups.size() == 8);
  CHECK(r.group_size == 4);
  CHECK(r.page_bytes == 163840);
  CHECK(r.block_bytes == 655360);
  CHECK(r.num_blocks == 131072);  // 80 GiB / 655,360 B
  // 131,072 // 8 x 80 = 1,310,720 tokens (one 16-token block across the 4 attention layers
  // gave 80 GiB / 8192 B = 10,485,760: 8x more).
  CHECK(r.max_tokens == 1310720);
  // 262,144 tokens: cdiv(262144, 80) = 3277 attention blocks + 7 state blocks = 3284;
  // 131,072 / 3284 = 39.91.
  CHECK(r.blocks_per_request == 3284);
  CHECK(Log(r, 0) ==
        "Setting attention block size to 80 tokens to ensure that attention page "
        "size is >= mamba page size.");
  CHECK(Log(r, 1) ==
        "Padding mamba page size by 5.26% to ensure that mamba page size and "
        "attention page size are exactly equal.");
  CHECK(Log(r, 3) == "GPU KV cache size: 1,310,720 tokens");
  CHECK(Log(r, 4) == "Maximum concurrency for 262,144 tokens per request: 39.91x");
  // The reviewer's run, kvplan capacity jamba-v0.1 --gpu h200 -tp 2: the modelled budget gives
  // budget / 655,360 B blocks, // 8 x 80 tokens (about 1,251,840), and the concurrency the
  // single-block arithmetic also gave, 38.12x.
  c.kv_cache_memory_bytes = 0;
  CapacityResult d = Run(m, "h200", c);
  CHECK(d.num_blocks == d.kv_budget_bytes / 655360);
  CHECK(d.max_tokens == d.num_blocks / 8 * 80);
  CHECK(Log(d, 3) == "GPU KV cache size: 1,251,840 tokens");
  CHECK(Log(d, 4) == "Maximum concurrency for 262,144 tokens per request: 38.12x");
}

TEST_CASE("vLLM hybrid: the Mamba block follows --block-size and the cache dtype") {
  ModelSpec m = LoadModel("jamba-v0.1");
  EngineConfig c;
  c.tp = 2;
  c.vllm_version = 20;  // the reviewer's run below was of vLLM 0.20's rules
  c.kv_cache_memory_bytes = 80 * kGiB;
  // --block-size 32 is the kernel alignment then: 32 x cdiv(155,648, 32 x 2048) = 96 tokens.
  c.block_size = 32;
  CapacityResult a = Run(m, "h200", c);
  CHECK(a.block_size == 96);
  CHECK(a.page_bytes == 96 * 2048);
  // --block-size 128 already holds a state (128 x 2048 = 262,144 B): kept, nothing logged.
  c.block_size = 128;
  CapacityResult b = Run(m, "h200", c);
  CHECK(b.block_size == 128);
  CHECK_FALSE(b.block_size_raised);
  CHECK(Log(b, 0).rfind("Padding mamba page size by 68.42%", 0) == 0);  // 106,496 / 155,648
  // fp8: 1024 B per token and layer, 16 x cdiv(155,648, 16 x 1024) = 160 tokens, the same
  // 163,840 B page, so the same blocks hold twice the tokens: 131,072 // 8 x 160.
  c.block_size = 0;
  c.kv_cache_dtype = "fp8";
  CapacityResult f = Run(m, "h200", c);
  CHECK(f.block_size == 160);
  CHECK(f.max_tokens == 131072 / 8 * 160);
}

TEST_CASE("vLLM hybrid: pages that are no whole multiple of each other stop vLLM before 0.24") {
  // Full layers of 8 x 128-wide heads (4096 B a token) and sliding layers of 8 x 96-wide heads
  // (3072 B): 65,536 / 49,152 is not whole, and unify_kv_cache_spec_page_size raises before
  // 0.24; from 0.24 (PR #45181) the smaller page is padded to the larger.
  ModelSpec m = ParseModelYaml(
      "name: odd\nsource: test\nlayers: 8\nhidden_size: 1024\nquery_heads: 8\nkv_heads: 8\n"
      "head_dim: 128\nmax_context: 8192\nparams: 1000000\nweight_dtype: bf16\nvocab_size: 1000\n"
      "intermediate_size: 4096\nlayer_groups:\n  - kind: full\n    layers: 4\n    every: 2\n"
      "    offset: 1\n  - kind: sliding\n    layers: 4\n    window: 512\n    head_dim: 96\n",
      "odd.yaml");
  EngineConfig old;
  old.vllm_version = ParseVllmVersion("0.23", "test");
  CapacityResult r = Run(m, "h100-sxm", old);
  REQUIRE(r.HasError());
  CHECK(r.lints.back().code == "vllm-page-size");
  CapacityResult padded = Run(m, "h100-sxm", EngineConfig{});
  CHECK_FALSE(padded.HasError());
  CHECK(padded.page_bytes == 65536);
  CHECK(padded.kv_cache_groups.size() == 2);
  CHECK(padded.kv_cache_groups[1].block_size == 16);  // padded, not a larger block
  // The other engines keep one pool and are unaffected.
  EngineConfig s;
  s.engine = Engine::kSglang;
  CHECK_FALSE(Run(m, "h100-sxm", s).HasError());
}

TEST_CASE("vLLM hybrid: a pipeline stage pads its groups to the most layers any has there") {
  // Gemma 3 on 2 stages (31 + 31 layers): the groups are the whole model's; stage 0 holds
  // 5, 5, 5, 4, 4, 4, 4 of their layers, stage 1 5, 4, 4, 5, 5, 4, 4 (sliding group j takes
  // sliding layers j, j + 6, ...): group_size 5 on both, a block of 5 pages = 655,360 B.
  ModelSpec m = LoadModel("gemma-3-27b");
  EngineConfig c;
  c.pp = 2;
  c.max_model_len = 32768;
  c.kv_cache_memory_bytes = 40 * kGiB;
  CapacityResult r = Run(m, "h100-sxm", c);
  REQUIRE(r.stages.size() == 2);
  CHECK(r.stages[0].group_size == 5);
  CHECK(r.stages[1].group_size == 5);
  CHECK(r.block_bytes == 655360);
  CHECK(r.num_blocks == 65536);  // 40 GiB / 655,360 B
  CHECK(r.max_tokens == 65536 / 7 * 16);
}

TEST_CASE("vLLM hybrid: single-kind models keep one block spanning every layer") {
  // Mistral v0.1 (every layer sliding, one window) and Llama are one group for vLLM:
  // UniformTypeKVCacheSpecs / a uniform spec, so nothing changes for them.
  for (const char* name : {"mistral-7b-v0.1", "llama-3.1-8b", "deepseek-v2-lite"}) {
    CAPTURE(name);
    CapacityResult r = Run(LoadModel(name), "h100-sxm", EngineConfig{});
    CHECK(r.kv_cache_groups.empty());
    CHECK(r.block_bytes == r.bytes_per_token * 16);
    CHECK(r.max_tokens == r.num_blocks * 16);
  }
  // gpt-oss-20b: 12 sliding + 12 full, two groups of 12 and no padding.
  CapacityResult g = Run(LoadModel("gpt-oss-20b"), "h100-sxm", EngineConfig{});
  CHECK(g.kv_cache_groups.size() == 2);
  CHECK(g.group_size == 12);
  CHECK(g.max_tokens == g.num_blocks / 2 * 16);
}

TEST_CASE("pipeline stages split layers as vLLM does; the tightest stage decides") {
  CHECK(PipelineStageLayers(61, 4) == std::vector<uint64_t>{15, 15, 16, 15});
  CHECK(PipelineStageLayers(22, 4) == std::vector<uint64_t>{5, 6, 6, 5});
  CHECK(PipelineStageLayers(5, 3) == std::vector<uint64_t>{2, 2, 1});
  CHECK(PipelineStageLayers(3, 2) == std::vector<uint64_t>{2, 1});
  ModelSpec m = LoadModel("llama-3.1-70b");
  EngineConfig c;
  c.pp = 3;
  c.tp = 2;
  c.max_model_len = 8192;
  CapacityResult r = Run(m, "h100-sxm", c);
  REQUIRE(r.stages.size() == 3);
  uint64_t layers = 0, min_blocks = UINT64_MAX;
  for (const StageCapacity& s : r.stages) {
    layers += s.layers;
    min_blocks = std::min(min_blocks, s.num_blocks);
  }
  CHECK(layers == 80);
  CHECK(r.num_blocks == min_blocks);
  CHECK(r.num_blocks == r.stages[r.tightest_stage].num_blocks);
}

TEST_CASE("lints: engine cache types, heads, GPUs, windows") {
  auto codes = [](const CapacityResult& r) {
    std::string s;
    for (const Lint& l : r.lints)
      s += (l.severity == Severity::kError ? "E:" : "W:") + l.code + " ";
    return s;
  };
  EngineConfig c;
  c.kv_cache_dtype = "q4_0";
  CapacityResult a = Run(LoadModel("llama-3.1-8b"), "h100-sxm", c);
  CHECK(codes(a) == "E:dtype-engine ");
  CHECK(a.lints[0].message ==
        "vLLM has no q4_0 KV cache (ggml block types are llama.cpp's); use fp8");
  c = {};
  c.engine = Engine::kLlamaCpp;
  c.kv_cache_dtype = "fp8";
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)) == "E:dtype-engine ");
  c = {};
  c.kv_cache_dtype = "fp8_ds_mla";
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)).find("E:dtype-engine") == 0);
  c.tp = 8;
  c.weight_dtype = "fp8";
  CHECK_FALSE(Run(LoadModel("deepseek-v3"), "h200", c).HasError());
  c = {};
  c.tp = 3;
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)) == "E:kv-config ");
  c.tp = 16;
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)).find("E:gpus") == 0);
  c.nodes = 2;
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)) == "W:kv-replicated ");
  c = {};
  c.max_model_len = 2048;
  CHECK(codes(Run(LoadModel("mistral-7b-v0.1"), "h100-sxm", c)) == "W:window-over-context ");
  c = {};
  // vLLM allocates an explicit budget whatever --gpu-memory-utilization says:
  // beyond the GPU less the weights (64.69 GiB here) it cannot start; beyond
  // that less the modelled reserve (58.93 GiB) it most likely cannot.
  c.kv_cache_memory_bytes = 100 * kGiB;
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)) == "E:budget-over-memory ");
  c.kv_cache_memory_bytes = 65 * kGiB;
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)) == "E:budget-over-memory ");
  c.kv_cache_memory_bytes = 60 * kGiB;
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)) == "W:budget-over-memory ");
  c.kv_cache_memory_bytes =
      58 * kGiB;  // above the 0.92-utilization estimate, which vLLM ignores here
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)).empty());
  // SGLang's --max-total-tokens beyond memory: SGLang keeps the smaller, and says so.
  c = {};
  c.engine = Engine::kSglang;
  c.max_total_tokens = 100'000'000;
  const CapacityResult sg = Run(LoadModel("llama-3.1-8b"), "h100-sxm", c);
  CHECK(codes(sg) == "W:budget-over-memory ");
  EngineConfig plain;
  plain.engine = Engine::kSglang;
  CHECK(sg.max_tokens == Run(LoadModel("llama-3.1-8b"), "h100-sxm", plain).max_tokens);
  c.max_total_tokens = 100'000;
  CHECK(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c).max_tokens == 100'000);
  // ... but weights that do not fit still stop it (a token count is no budget).
  CHECK(codes(Run(LoadModel("llama-3.1-70b"), "rtx-4090", c)).find("E:weights-fit") !=
        std::string::npos);
  // Every pipeline stage allocates the budget: the heavier stage decides
  // (DeepSeek-V3 tp 8 pp 2 on H200: 107.50 GB left beside stage 1's weights).
  c = {};
  c.tp = 8;
  c.pp = 2;
  c.nodes = 2;
  c.kv_cache_memory_bytes = 109'000'000'000;
  const CapacityResult ds = Run(LoadModel("deepseek-v3"), "h200", c);
  CHECK(codes(ds) == "W:mla-replicated E:budget-over-memory ");
  CHECK(ds.lints[1].message.find("107.50 GB") != std::string::npos);
  // llama.cpp sizes its cache by -c: a budget over memory is a warning there.
  c = {};
  c.engine = Engine::kLlamaCpp;
  c.kv_cache_memory_bytes = 75 * kGiB;
  CHECK(codes(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c)) == "W:budget-over-memory ");
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: the largest length is searched past the model's limit.
  c = {};
  c.max_model_len = 500'000;
  c.allow_long_max_model_len = true;
  CHECK(Run(LoadModel("llama-3.1-8b"), "h100-sxm", c).largest_max_model_len == 430'528);
  c = {};
  CapacityResult big = Run(LoadModel("llama-3.1-405b"), "h100-sxm", c);
  CHECK(codes(big) == "E:weights-fit ");
}

TEST_CASE("every model x GPU x engine: invariants") {
  for (const ModelSpec& m : CatalogModels()) {
    for (const HardwareSpec& g : CatalogHardware()) {
      for (Engine e : AllEngines()) {
        CAPTURE(m.name);
        CAPTURE(g.name);
        CAPTURE(EngineName(e));
        EngineConfig c;
        c.engine = e;
        c.max_model_len = std::min<uint64_t>(m.max_context, 8192);
        if (e == Engine::kLlamaCpp) c.kv_cache_dtype = "fp16";
        // Pinned: vLLM's default grows with memory (8,192 from 70 GiB), and a
        // vLLM sliding layer holds window - 1 + batched tokens, so doubling the
        // memory could lower the concurrency of a small-window model (Gemma 3).
        if (e == Engine::kVllm) c.max_num_batched_tokens = 2048;
        // tp so that the weights roughly fit; must divide the heads.
        CapacityResult base = ComputeCapacity(m, g, c);
        if (base.HasError()) continue;
        // More memory never gives fewer tokens; concurrency is monotone too.
        HardwareSpec bigger = g;
        bigger.memory_bytes *= 2;
        bigger.usable_memory_bytes *= 2;
        CapacityResult more = ComputeCapacity(m, bigger, c);
        CHECK(more.max_tokens >= base.max_tokens);
        CHECK(more.kv_budget_bytes >= base.kv_budget_bytes);
        if (e != Engine::kLlamaCpp) CHECK(more.max_concurrency >= base.max_concurrency);
        // The pp stages hold every layer, and their weights sum to at least the model's.
        EngineConfig p = c;
        p.pp = 2;
        CapacityResult staged = ComputeCapacity(m, bigger, p);
        if (!staged.HasError()) {
          uint64_t layers = 0, weights = 0;
          for (const StageCapacity& s : staged.stages) {
            layers += s.layers;
            weights += s.weights_bytes;
          }
          CHECK(layers == m.layers);
          const ModelTensors t = BuildModelTensors(m);
          const WeightFormat f = ResolvedWeightFormat(m, c);
          // Only a tied embedding is loaded twice: on the first stage and as lm_head on the last.
          const uint64_t twice = m.tie_embeddings ? TensorBytes(t.model.front(), f, 1) : 0;
          CHECK(weights == ModelWeightBytes(t, f) + twice);
        }
        // An fp8 cache never costs more than fp16, and never holds fewer tokens.
        if (e != Engine::kLlamaCpp) {
          EngineConfig f = c, h = c;
          f.kv_cache_dtype = "fp8";
          h.kv_cache_dtype = "fp16";
          CapacityResult r8 = ComputeCapacity(m, g, f), r16 = ComputeCapacity(m, g, h);
          if (!r8.HasError() && !r16.HasError()) {
            CHECK(r8.bytes_per_token <= r16.bytes_per_token);
            CHECK(r8.max_tokens >= r16.max_tokens);
          }
        }
      }
    }
  }
}

TEST_CASE("memory over 2^63 bytes is an overflow error, not a negative headroom") {
  ModelSpec m = LoadModel("llama-3.1-8b");
  HardwareSpec h = Gpu("h100-sxm");
  h.memory_bytes = 10000000000000000000ull;
  h.usable_memory_bytes = 0;
  EngineConfig c;
  c.engine = Engine::kTrtllm;
  CHECK_THROWS_AS(ComputeCapacity(m, h, c), Error);
  // Under 2^63 it is an exact (large) result.
  h.memory_bytes = 1ull << 50;
  CapacityResult r = ComputeCapacity(m, h, c);
  CHECK_FALSE(r.HasError());
  CHECK(r.usable_bytes == (1ull << 50) - r.weights_bytes - r.reserve.total_bytes);
}

TEST_CASE("llama.cpp: fewer cells than sequences, and n_ctx that overflows, are errors") {
  ModelSpec m = LoadModel("llama-3.1-8b");
  EngineConfig c;
  c.engine = Engine::kLlamaCpp;
  c.n_ctx = 256;
  c.n_parallel = 512;
  CapacityResult r = Run(m, "h100-sxm", c);
  CHECK(r.config.max_model_len == 0);  // 256 / 512, not the model's 131,072
  REQUIRE(r.HasError());
  CHECK(r.lints.back().code == "n-ctx-seqs");
  c.n_ctx = 512;
  CHECK_FALSE(Run(m, "h100-sxm", c).HasError());  // one cell each is enough
  c.n_ctx = 0;
  c.max_model_len = 2;
  c.n_parallel = (1ull << 63) + 1;
  CHECK_THROWS_WITH_AS(Run(m, "h100-sxm", c),
                       "overflow: n_ctx = max_model_len x n_parallel = 2 x 9223372036854775809 "
                       "does not fit in 64 bits",
                       Error);
}

TEST_CASE("llama.cpp sliding windows: largest max_model_len, --concurrency and tradeoff agree") {
  // Gemma-3-27B, q8_0, a 4 GiB budget. One token in one layer: 2 x 16 KV heads x 136 B
  // (128 / 32 blocks x 34 B) = 4,352 B; 10 full layers 43,520 B per cell, 52 sliding layers
  // (window 1024) 226,304 B per cell, 269,824 B in all. Budget 4,294,967,296 B.
  ModelSpec m = LoadModel("gemma-3-27b");
  EngineConfig c;
  c.engine = Engine::kLlamaCpp;
  c.kv_cache_dtype = "q8_0";
  c.kv_cache_memory_bytes = 4 * kGiB;
  c.n_ctx = 8192;
  CapacityResult a = Run(m, "h100-sxm", c);
  // -np 1: SWA cells min(8192, PAD(1024 + 512, 256)) = 1,536, i.e. 347,602,944 B. The full
  // layers get PAD(L) x 43,520 <= 4,294,967,296 - 347,602,944 = 3,947,364,352, PAD(L) <= 90,702:
  // L = 90,624 (354 x 256). Dividing 4 GiB by 269,824 B per token said 15,872.
  CHECK(a.swa_cells == 1536);
  CHECK(a.kv_used_bytes == 8192ull * 43520 + 1536ull * 226304);
  CHECK(a.largest_max_model_len == 90624);
  CHECK(MaxModelLenAtConcurrency(a, 1) == 90624);

  // -np 4 -c 32K in one unified cache (--kv-unified): SWA cells PAD(4 x 1024 + 512) = 4,608,
  // i.e. 1,042,808,832 B; the full layers PAD(4L) x 43,520 <= 3,252,158,464, PAD(4L) <= 74,727:
  // 4L = 74,496, L = 18,624 (>= the 8,192 per sequence this configuration runs).
  c.n_ctx = 32768;
  c.n_parallel = 4;
  c.kv_unified = true;
  CapacityResult b = Run(m, "h100-sxm", c);
  CHECK(b.fits);
  CHECK(b.largest_max_model_len == 18624);
  CHECK(MaxModelLenAtConcurrency(b, 4) == 18624);
  CHECK(MaxModelLenAtConcurrency(b, 1) == 90624);  // -np 1 asks the first question again
  // -np 2: SWA PAD(2,560) = 2,560 cells, 579,338,240 B; PAD(2L) <= 85,377: 2L = 85,248.
  CHECK(MaxModelLenAtConcurrency(b, 2) == 42624);
  // One sequence's share of the 4-sequence allocation, not all four windows each:
  // (32,768 x 43,520 + 4,608 x 226,304) / 4 = 617,218,048 B = 8.9 blocks of 256 x 269,824 B.
  CHECK(b.request_bytes == 617218048);
  CHECK(b.blocks_per_request == 9);
  CHECK(b.BlocksForRequest(8192) == 9);

  // tradeoff asks the same question: C sequences of 8,192 tokens hold 8,192C full cells and
  // 1,024C + 512 SWA cells: 588,251,136 C + 115,867,648 <= 4,294,967,296 B, so C = 7.
  TradeoffInput in;
  in.num_blocks = b.num_blocks;
  in.block_size = b.block_size;
  in.max_context = m.max_context;
  in.blocks_for_request = [&b](uint64_t n) { return b.BlocksForRequest(n); };
  in.fits = [&b](uint64_t n, uint64_t batch) { return b.FitsAtConcurrency(n, batch); };
  CHECK(MaxBatchAtContext(in, 8192) == 7);
  CHECK(MaxContextAtBatch(in, 4) == 18624);
  CHECK(MaxContextAtBatch(in, 1) == 90624);

  // --swa-full: every layer gets n_ctx cells; 32,768 x 269,824 B = 8.2 GiB does not fit.
  // PAD(4L) x 269,824 <= 4 GiB: PAD(4L) <= 15,917, 4L = 15,872, L = 3,968.
  c.swa_full = true;
  CapacityResult f = Run(m, "h100-sxm", c);
  CHECK(f.swa_cells == 32768);
  CHECK(f.kv_used_bytes == 32768ull * 269824);
  CHECK_FALSE(f.fits);
  CHECK(f.largest_max_model_len == 3968);
  CHECK(MaxModelLenAtConcurrency(f, 4) == 3968);
  CHECK(MaxModelLenAtConcurrency(f, 1) == 15872);
  REQUIRE(!f.lints.empty());
  CHECK(f.lints.back().message.find("; -c 15872 fits") != std::string::npos);
}

TEST_CASE("llama.cpp: the largest max_model_len is the --concurrency answer at -np, every model") {
  for (const ModelSpec& m : CatalogModels()) {
    for (uint64_t np : {1, 3}) {
      EngineConfig c;
      c.engine = Engine::kLlamaCpp;
      c.n_ctx = 8192;
      c.n_parallel = np;
      c.kv_cache_memory_bytes = 2 * kGiB;
      CAPTURE(m.name);
      CAPTURE(np);
      CapacityResult r = Run(m, "b200", c);
      if (r.HasError()) continue;
      // The largest length is the edge of what fits at -np sequences: it fits
      // and one token more does not (unless it is the model's own limit).
      const uint64_t len = r.largest_max_model_len;
      if (len > 0) CHECK(r.FitsAtConcurrency(len, np));
      if (len < r.model_max_context) CHECK(!r.FitsAtConcurrency(len + 1, np));
      // The configuration fits exactly when its own context does.
      if (r.max_model_len <= r.model_max_context) {
        CHECK(r.fits == (r.largest_max_model_len >= r.max_model_len));
      }
    }
  }
}

namespace {

// llama-server -c 32768 -ctk q8_0 -ctv q8_0 -fa on with int4 weights.
EngineConfig LlamaCppQ8At32K() {
  EngineConfig c;
  c.engine = Engine::kLlamaCpp;
  c.n_ctx = 32768;
  c.kv_cache_dtype = "q8_0";
  c.flash_attn = "on";
  c.weight_dtype = "int4";
  return c;
}

}  // namespace

TEST_CASE("llama.cpp -ts 10,6: 41 and 23 of 64 layers, 2,788 and 1,564 MiB of q8_0 cache") {
  // The log issue #38 quotes: "-ts 10,6" over two GPUs, 64 layers of 8 KV
  // heads x 128 (Qwen2.5-32B's shape), -c 32768 -ctk q8_0 -ctv q8_0:
  // 2,788.00 and 1,564.00 MiB. llama-model.cpp load_tensors: layer il on the
  // GPU whose cumulative share first exceeds il / 65 (64 layers + output).
  EngineConfig c = LlamaCppQ8At32K();
  c.pp = 2;
  c.tensor_split = {10, 6};
  CapacityResult r = Run(LoadModel("qwen2.5-32b"), "rtx-4090", c);
  REQUIRE(r.stages.size() == 2);
  CHECK(r.stages[0].layers == 41);
  CHECK(r.stages[1].layers == 23);
  CHECK(r.stages[0].bytes_per_token * 32768 == 2788 * kMiB);
  CHECK(r.stages[1].bytes_per_token * 32768 == 1564 * kMiB);
  // Equal shares are not an even split: 33 and 31 (il / 65 < 0.5).
  c.tensor_split.clear();
  CapacityResult e = Run(LoadModel("qwen2.5-32b"), "rtx-4090", c);
  CHECK(e.stages[0].layers == 33);
  CHECK(e.stages[1].layers == 31);
  // One share per GPU, and no GPU without a layer.
  c.tensor_split = {1, 1, 1};
  CHECK_THROWS_WITH(Run(LoadModel("qwen2.5-32b"), "rtx-4090", c),
                    "-ts/--tensor-split gives 3 shares for 2 GPUs (-pp): give one share per GPU");
  c.tensor_split = {1, 0};
  CHECK_THROWS_WITH(Run(LoadModel("qwen2.5-32b"), "rtx-4090", c),
                    "llama.cpp puts no layer on GPU 1 of 2 (64 layers offloaded at these -ts "
                    "shares); use fewer GPUs (-pp) or a larger share");
}

TEST_CASE("llama.cpp -ngl and -nkvo: the cache of the CPU's layers, or all of it, in host memory") {
  EngineConfig c = LlamaCppQ8At32K();
  const ModelSpec m = LoadModel("qwen2.5-32b");
  const uint64_t per_layer = 8 * 2 * 128 / 32 * 34;  // q8_0 K and V, bytes per token and layer
  CapacityResult all = Run(m, "rtx-4090", c);
  CHECK(all.host_layers == 0);
  CHECK(all.host_kv_bytes == 0);
  // -ngl 40: layers 24-63 on the GPU, 0-23 (and the output layer) on the CPU.
  c.n_gpu_layers = 40;
  CapacityResult part = Run(m, "rtx-4090", c);
  CHECK(part.host_layers == 24);
  CHECK(part.stages[0].first_layer == 24);
  CHECK(part.stages[0].layers == 40);
  CHECK(part.kv_used_bytes == 40 * per_layer * 32768);
  CHECK(part.host_kv_bytes == 24 * per_layer * 32768);
  // The weights move, none twice: the output layer is on the CPU with layers 0-23.
  CHECK(part.host_weights_bytes + part.weights_bytes == all.weights_bytes);
  CHECK(part.weights_bytes < all.weights_bytes);
  // -nkvo: every layer's cache in host memory, none on the GPU.
  c.n_gpu_layers.reset();
  c.no_kv_offload = true;
  CapacityResult host = Run(m, "rtx-4090", c);
  CHECK(host.kv_used_bytes == 0);
  CHECK(host.host_kv_bytes == 64 * per_layer * 32768);
  CHECK(host.fits);
}

TEST_CASE("MoE layouts: DeepSeek-V3 on 8 x H200 with data-parallel attention or expert parallel") {
  const ModelSpec m = LoadModel("deepseek-v3");
  const ModelTensors t = BuildModelTensors(m);
  EngineConfig c;
  c.engine = Engine::kSglang;
  c.max_model_len = 65536;
  c.tp = 8;
  CapacityResult tp8 = Run(m, "h200", c);
  REQUIRE_FALSE(tp8.HasError());
  // The MLA latent is whole on every rank: 8 GPUs hold the same requests.
  CHECK(tp8.cluster_max_requests == tp8.max_requests);
  // SGLang --tp 8 --dp 8 --enable-dp-attention: each GPU attends over its
  // own requests, with the attention weights whole on every GPU.
  c.attention_dp = 8;
  CapacityResult dpa = Run(m, "h200", c);
  REQUIRE_FALSE(dpa.HasError());
  CHECK(dpa.gpus == 8);
  CHECK(dpa.cluster_max_requests == dpa.max_requests * 8);
  CHECK(dpa.cluster_max_requests > 4 * tp8.cluster_max_requests);
  const WeightFormat f = ResolvedWeightFormat(m, c);
  uint64_t attention_whole = 0, attention_split = 0;
  for (const std::vector<WeightTensor>& layer : t.layers) {
    for (const WeightTensor& w : layer) {
      if (w.part != TensorPart::kAttention) continue;
      attention_whole += TensorBytes(w, f, 1);
      attention_split += TensorBytes(w, f, 8);
    }
  }
  CHECK(dpa.weights_bytes - tp8.weights_bytes == attention_whole - attention_split);
  // A tp the groups do not divide is an error.
  c.attention_dp = 3;
  CHECK(Run(m, "h200", c).HasError());
  // vLLM -dp 8 --enable-expert-parallel: 8 one-GPU replicas, each with 32
  // of the 256 routed experts whole and every other weight.
  EngineConfig v;
  v.max_model_len = 65536;
  v.dp = 8;
  v.expert_parallel = 8;
  CapacityResult ep = Run(m, "h200", v);
  REQUIRE_FALSE(ep.HasError());
  CHECK(ep.gpus == 8);
  CHECK(ep.weights_bytes == StageWeightBytes(t, ResolvedWeightFormat(m, v), WeightSplit{1, 0, 8}, 0,
                                             m.layers, true, true));
  CHECK(ep.cluster_max_requests == ep.max_requests * 8);
  CHECK(ep.cluster_max_requests > 4 * tp8.cluster_max_requests);
}

TEST_CASE("speculative decoding: MTP layers and a draft model in the cache and the weights") {
  // DeepSeek-V3's one MTP layer (num_nextn_predict_layers 1) is its last
  // layer again: one more MLA latent of 576 x 2 bytes a token, and that
  // layer's weights with the MTP module's eh_proj, norms, embedding and head.
  const ModelSpec m = LoadModel("deepseek-v3");
  REQUIRE(m.mtp_layers == 1);
  EngineConfig c;
  c.max_model_len = 32768;
  c.tp = 8;
  CapacityResult base = Run(m, "h200", c);
  c.mtp_layers = 1;
  CapacityResult mtp = Run(m, "h200", c);
  REQUIRE_FALSE(mtp.HasError());
  CHECK(base.bytes_per_token == 61 * 1152);
  CHECK(mtp.bytes_per_token == 62 * 1152);
  const ModelTensors t = BuildModelTensors(m);
  const WeightFormat f = ResolvedWeightFormat(m, c);
  const WeightSplit split{8, 0, 0};
  const uint64_t h = m.hidden_size;
  CHECK(mtp.weights_bytes - base.weights_bytes ==
        StageWeightBytes(t, f, split, 60, 1, false, false) + 2 * h * h * 2 + 3 * h * 2 +
            StageWeightBytes(t, f, split, 0, 0, true, true));
  CHECK(mtp.max_tokens < base.max_tokens);
  // A draft model: Llama-3.2-1B beside Llama-3.1-70B at tp 4, each rank
  // holding 2 of the draft's 8 KV heads of 64 as of the target's 8 of 128.
  const ModelSpec target = LoadModel("llama-3.1-70b");
  EngineConfig d;
  d.max_model_len = 32768;
  d.tp = 4;
  CapacityResult alone = Run(target, "h100-sxm", d);
  d.draft_model = std::make_shared<const ModelSpec>(LoadModel("llama-3.2-1b"));
  CapacityResult drafted = Run(target, "h100-sxm", d);
  CHECK(alone.bytes_per_token == 80 * 2 * 128 * 2 * 2);
  CHECK(drafted.bytes_per_token == 80 * 2 * 128 * 2 * 2 + 16 * 2 * 64 * 2 * 2);
  const ModelTensors dt = BuildModelTensors(*d.draft_model);
  CHECK(drafted.weights_bytes - alone.weights_bytes ==
        StageWeightBytes(dt, FindWeightFormat("bf16"), WeightSplit{4, 0, 0}, 0, 16, true, true));
}

TEST_CASE("vLLM hybrid: Qwen3-Next-80B on two H200s, as vLLM 0.10.2 logged it") {
  // A published vLLM 0.10.2 startup log (tp 2, NVIDIA_H200 MoE config, default
  // gpu_memory_utilization, max_model_len 262144, bf16 cache):
  //   "Setting attention block size to 544 tokens to ensure that attention page size is >=
  //    mamba page size." / "Padding mamba page size by 1.49% ..." / "Available KV cache
  //    memory: 44.59 GiB" / "GPU KV cache size: 973,760 tokens" / "Maximum concurrency for
  //    262,144 tokens per request: 14.77x".
  // Per rank: a Gated DeltaNet state of 4,096 x 3 conv + 16 x 128 x 128 recurrent bf16
  // elements = 548,864 B; attention 2 x 1 KV head x 256 x 2 B = 1,024 B a token, so the block
  // is 16 x cdiv(548,864, 16 x 1,024) = 544 tokens (557,056 B, the state padded 1.49%).
  // 12 attention + 36 GDN layers: groups of 12, 4 groups; 7,162 blocks of 12 pages.
  ModelSpec m = LoadModel("qwen3-next-80b-a3b-instruct");
  EngineConfig c;
  c.tp = 2;
  c.vllm_version = ParseVllmVersion("0.10", "test");
  c.max_model_len = 262144;
  c.kv_cache_memory_bytes = ParseBytes("44.59GiB");
  CapacityResult r = Run(m, "h200", c);
  CHECK(r.block_size == 544);
  CHECK(r.page_bytes == 557'056);
  CHECK(r.state_page_bytes == 548'864);
  CHECK(r.kv_cache_groups.size() == 4);
  CHECK(r.num_blocks == 7162);
  CHECK(Log(r, 0) ==
        "Setting attention block size to 544 tokens to ensure that attention page size is >= "
        "mamba page size.");
  CHECK(Log(r, 1) ==
        "Padding mamba page size by 1.49% to ensure that mamba page size and attention page "
        "size are exactly equal.");
  CHECK(Log(r, 3) == "GPU KV cache size: 973,760 tokens");
  CHECK(Log(r, 4) == "Maximum concurrency for 262,144 tokens per request: 14.77x");
}

TEST_CASE("vLLM hybrid: granite-4.0-h-small's Mamba-2 page, as vLLM 0.11 logged it") {
  // https://github.com/ROCm/ROCm/issues/5590 (vLLM 0.11.1rc6, tp 1, bf16):
  //   "Setting attention block size to 528 tokens ..." / "Padding mamba page size by 0.69% ...".
  // Mamba-2: 128 heads x 64, one group, d_state 128, conv 4: (8,448 x 3 + 1,048,576) x 2 B =
  // 2,147,840 B; attention 2 x 8 x 128 x 2 B = 4,096 B a token: 16 x cdiv(2,147,840, 65,536) =
  // 528 tokens, 2,162,688 B, the state padded by 14,848 B = 0.69%.
  ModelSpec m = ParseModelYaml(
      "name: granite-4.0-h-small-shape\nsource: test\nlayers: 40\nhidden_size: 4096\n"
      "query_heads: 32\nkv_heads: 8\nhead_dim: 128\nmax_context: 131072\nparams: 32000000000\n"
      "weight_dtype: bf16\nmamba:\n  version: 2\n  heads: 128\n  head_dim: 64\n  groups: 1\n"
      "  d_state: 128\n  d_conv: 4\nlayer_groups:\n  - kind: full\n    at: [5, 15, 25, 35]\n"
      "  - kind: state\n    layers: 36\n",
      "granite.yaml");
  EngineConfig c;
  c.vllm_version = ParseVllmVersion("0.11", "test");
  c.max_model_len = 131072;
  CapacityResult r = Run(m, "h200", c);
  CHECK(r.block_size == 528);
  CHECK(Log(r, 0) ==
        "Setting attention block size to 528 tokens to ensure that attention page size is >= "
        "mamba page size.");
  CHECK(Log(r, 1).rfind("Padding mamba page size by 0.69%", 0) == 0);
}

TEST_CASE("state in each engine's dtypes: llama.cpp f32, SGLang an fp32 SSM, vLLM the model's") {
  // Falcon-H1-0.5B: 36 layers, each with attention and a Mamba-2 state of 5,376 conv + 196,608
  // SSM elements beside it.
  ModelSpec m = LoadModel("falcon-h1-0.5b-instruct");
  EngineConfig v;
  v.max_model_len = 4096;
  CapacityResult rv = Run(m, "h100-sxm", v);
  CHECK(rv.stages[0].kv.fixed_bytes == 36ull * (5376 + 196'608) * 2);
  EngineConfig s = v;
  s.engine = Engine::kSglang;
  CapacityResult rs = Run(m, "h100-sxm", s);
  CHECK(rs.stages[0].kv.fixed_bytes == 36ull * (5376 * 2 + 196'608 * 4));
  EngineConfig l;
  l.engine = Engine::kLlamaCpp;
  l.max_model_len = 16384;
  l.kv_cache_dtype = "fp16";
  CapacityResult rl = Run(m, "h100-sxm", l);
  CHECK(rl.stages[0].kv.fixed_bytes == 36ull * (5376 + 196'608) * 4);
  // llama_memory_recurrent's line: R = 36 x 5,376 x 4 B, S = 36 x 196,608 x 4 B.
  CHECK(Log(rl, 0) ==
        "llama_memory_recurrent: size =   27.74 MiB (     1 cells,  36 layers,  1 seqs), R (f32):  "
        "  0.74 MiB, S (f32):   27.00 MiB");
  // vLLM sees the Mamba-2 mixer of each layer as a layer of its own: 36 attention + 36 state.
  REQUIRE(!rv.kv_cache_groups.empty());
}

// Qwen3-Next-80B at tp 2 under SGLang: per rank a Gated DeltaNet layer keeps (2 x 16 x 128 +
// 32 x 128) / 2 = 4,096 conv channels x 3 in bf16 = 24,576 B and 16 x 128 x 128 recurrent
// elements in fp32 = 1,048,576 B; 36 such layers = 38,633,472 B a sequence. Its 12 attention
// layers keep 2 x 1 KV head x 256 x 2 B = 12,288 B a token.
constexpr uint64_t kQwenNextConv = 36ull * 24'576, kQwenNextSsm = 36ull * 1'048'576;
constexpr uint64_t kQwenNextState = kQwenNextConv + kQwenNextSsm;

TEST_CASE("SGLang hybrid: the state pool takes 0.9 / 1.9 of the budget, the tokens the rest") {
  // model_runner_kv_cache_mixin.py handle_max_mamba_cache: mamba memory = rest x r / (1 + r)
  // with mamba_full_memory_ratio r = 0.9; max_mamba_cache_size = that // per-request state;
  // the token pool gets rest - size x state, and max_running_requests <= size // 3.
  ModelSpec m = LoadModel("qwen3-next-80b-a3b-instruct");
  EngineConfig c;
  c.engine = Engine::kSglang;
  c.tp = 2;
  c.max_model_len = 32768;
  const CapacityResult r = Run(m, "h200", c);
  REQUIRE(r.stages[0].kv.fixed_bytes == kQwenNextState);
  REQUIRE(r.bytes_per_token == 12'288);
  const uint64_t rest = r.kv_budget_bytes + r.state_slots * kQwenNextState;
  CHECK(r.state_slots ==
        static_cast<uint64_t>(static_cast<double>(rest) * 0.9 / 1.9 / kQwenNextState));
  CHECK(r.state_slots > 600);
  CHECK(r.max_tokens == r.kv_budget_bytes / 12'288);
  CHECK(r.config.max_num_seqs == r.state_slots / 3);
  CHECK(r.state_running_ratio == 3);
  // A request's blocks hold its tokens only: its states are in a slot.
  CHECK(r.request_bytes == 32768ull * 12'288);
  CHECK(r.RequestBytes(1000) == 1000ull * 12'288);
  CHECK(r.max_requests == r.max_tokens / 32768);
  // MambaPool allocates size + 1 slots (slot 0 pads) and logs their bytes.
  CHECK(r.state_conv_bytes == (r.state_slots + 1) * kQwenNextConv);
  CHECK(r.state_ssm_bytes == (r.state_slots + 1) * kQwenNextSsm);
  CHECK(Log(r, 0) ==
        fmt::format("Mamba Cache is allocated. max_mamba_cache_size: {}, conv_state size: "
                    "{:.2f}GB, ssm_state size: {:.2f}GB",
                    r.state_slots, static_cast<double>(r.state_conv_bytes) / (1ull << 30),
                    static_cast<double>(r.state_ssm_bytes) / (1ull << 30)));
  CHECK(Log(r, 1).rfind(fmt::format("KV Cache is allocated. #tokens: {},", r.max_tokens), 0) == 0);
  // A larger ratio gives the states more and the tokens less.
  EngineConfig more = c;
  more.state_memory_ratio = 2;
  const CapacityResult rm = Run(m, "h200", more);
  CHECK(rm.state_slots ==
        static_cast<uint64_t>(static_cast<double>(rest) * 2 / 3 / kQwenNextState));
  CHECK(rm.max_tokens < r.max_tokens);
}

TEST_CASE("SGLang hybrid: --max-mamba-cache-size and --disable-radix-cache fix the slots") {
  ModelSpec m = LoadModel("qwen3-next-80b-a3b-instruct");
  EngineConfig c;
  c.engine = Engine::kSglang;
  c.tp = 2;
  c.max_model_len = 32768;
  c.max_state_slots = 100;
  const CapacityResult r = Run(m, "h200", c);
  CHECK(r.state_slots == 100);
  EngineConfig mem = c;
  mem.max_state_slots = 0;
  const CapacityResult from_memory = Run(m, "h200", mem);
  // The budget before the pool is the same; 100 slots leave the tokens more of it.
  CHECK(r.kv_budget_bytes + 100 * kQwenNextState ==
        from_memory.kv_budget_bytes + from_memory.state_slots * kQwenNextState);
  CHECK(r.config.max_num_seqs == 33);  // 100 // 3
  // 101 slots: conv 101 x 884,736 B = 0.08 GiB, SSM 101 x 37,748,736 B = 3.55 GiB.
  CHECK(Log(r, 0) ==
        "Mamba Cache is allocated. max_mamba_cache_size: 100, conv_state size: 0.08GB, "
        "ssm_state size: 3.55GB");
  // More requests at once than slots do not fit, whatever the tokens allow.
  CHECK(r.FitsAtConcurrency(1000, 100));
  CHECK_FALSE(r.FitsAtConcurrency(1000, 101));
  // Without the radix cache the running requests size the pool, one slot each.
  EngineConfig off = c;
  off.max_state_slots = 0;
  off.disable_radix_cache = true;
  off.max_num_seqs = 48;
  const CapacityResult ro = Run(m, "h200", off);
  CHECK(ro.state_slots == 48);
  CHECK(ro.state_running_ratio == 1);
  CHECK(ro.config.max_num_seqs == 48);
  // --max-total-tokens caps the tokens after the pool is carved out of memory
  // (_apply_token_constraints runs after handle_max_mamba_cache).
  EngineConfig capped;
  capped.engine = Engine::kSglang;
  capped.tp = 2;
  capped.max_model_len = 32768;
  capped.max_total_tokens = 100000;
  const CapacityResult rc = Run(m, "h200", capped);
  CHECK(rc.state_slots == from_memory.state_slots);
  CHECK(rc.max_tokens == 100000);
  CHECK(rc.lints.empty());
  // --disable-radix-cache without --max-running-requests: the pool is sized by the ratio (only
  // a given count sizes it), one slot a running request.
  EngineConfig radix_off = mem;
  radix_off.disable_radix_cache = true;
  const CapacityResult rr = Run(m, "h200", radix_off);
  CHECK(rr.state_slots == from_memory.state_slots);
  CHECK(rr.state_running_ratio == 1);
  // A pipeline stage per half: each has its own pool; the fewer slots cap the requests.
  EngineConfig pp = mem;
  pp.pp = 2;
  const CapacityResult rp = Run(m, "h200", pp);
  REQUIRE(rp.stages.size() == 2);
  CHECK(rp.state_slots == std::min(rp.stages[0].state_slots, rp.stages[1].state_slots));
  // A pool of 0 slots (one slot shared by two DP-attention groups) is refused.
  EngineConfig zero = c;
  zero.tp = 4;
  zero.max_state_slots = 1;
  zero.attention_dp = 2;
  const CapacityResult rz = Run(m, "h200", zero);
  REQUIRE(rz.HasError());
  CHECK(rz.state_pool);
  CHECK(rz.state_slots == 0);
  CHECK(rz.lints.back().code == "state-slots");
  // Too few slots for one running request (3 each) is an error.
  EngineConfig two = c;
  two.max_state_slots = 2;
  const CapacityResult rt = Run(m, "h200", two);
  REQUIRE(rt.HasError());
  CHECK(rt.lints.back().code == "state-slots");
  CHECK(rt.lints.back().message ==
        "SGLang's state pool holds 2 slots (it plans 3 a running request), so no request can "
        "run: raise --mamba-full-memory-ratio or --max-mamba-cache-size, or give the cache more "
        "memory");
}

TEST_CASE("state dtype flags: vLLM --mamba-ssm-cache-dtype / --mamba-cache-dtype, SGLang's") {
  ModelSpec m = LoadModel("qwen3-next-80b-a3b-instruct");  // bf16, no state_dtype of its own
  EngineConfig v;
  v.tp = 2;
  v.max_model_len = 32768;
  v.state_ssm_bytes = 4;  // --mamba-ssm-cache-dtype float32
  CHECK(Run(m, "h200", v).stages[0].kv.fixed_bytes == 36ull * (24'576 + 1'048'576));
  EngineConfig conv = v;
  conv.state_ssm_bytes = 0;
  conv.state_conv_bytes = 4;  // --mamba-cache-dtype float32: the conv and (auto) the SSM state
  CHECK(Run(m, "h200", conv).stages[0].kv.fixed_bytes == 36ull * (2 * 24'576 + 1'048'576));
  // A model that names its state dtype (Qwen3.5: mamba_ssm_dtype float32) keeps it under
  // --mamba-cache-dtype; --mamba-ssm-cache-dtype overrides it.
  ModelSpec q = LoadModel("qwen3.5-35b-a3b");
  EngineConfig qc;
  qc.max_model_len = 32768;
  const uint64_t own = Run(q, "h200", qc).stages[0].kv.fixed_bytes;
  qc.state_conv_bytes = 2;
  CHECK(Run(q, "h200", qc).stages[0].kv.fixed_bytes == own);
  qc.state_ssm_bytes = 2;
  CHECK(Run(q, "h200", qc).stages[0].kv.fixed_bytes < own);
  // SGLang --mamba-ssm-dtype bfloat16 halves its fp32 default.
  EngineConfig s;
  s.engine = Engine::kSglang;
  s.tp = 2;
  s.max_model_len = 32768;
  s.state_ssm_bytes = 2;
  CHECK(Run(m, "h200", s).stages[0].kv.fixed_bytes == 36ull * (24'576 + 524'288));
  // Nemotron-H: fp32 recurrent state by default (vLLM's NemotronH config) -- 24 layers of
  // 30,720 conv x 2 B + 1,048,576 SSM x 4 B.
  EngineConfig n;
  n.max_model_len = 8192;
  CHECK(Run(LoadModel("nemotron-h-8b-base-8k"), "h100-sxm", n).stages[0].kv.fixed_bytes ==
        24ull * (30'720 * 2 + 1'048'576 * 4));
}
