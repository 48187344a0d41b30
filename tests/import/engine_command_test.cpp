// Launch lines of every engine read into a DeployConfig: each engine's
// line from at least three real command lines in public docs (named beside
// each), docker images and their tags, Kubernetes argument lists, and the
// errors: one line naming the flag.
#include "import/engine_command.h"

#include <doctest/doctest.h>

#include <string>

#include "cli_runner.h"
#include "plan/check.h"
#include "spec/engine.h"
#include "util/error.h"

using namespace kvplan;
using kvplan::test::RunKvplan;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;

namespace {

bool HasNote(const DeployConfig& d, const std::string& part) {
  for (const std::string& n : d.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("engine lines: SGLang, from its docs") {
  // docs.sglang.io, Server Arguments: "The following command uses 4 GPUs in total."
  DeployConfig a = ParseEngineCommand(
      "python -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-8B-Instruct --dp 2 "
      "--tp 2");
  CHECK(a.engine == "sglang");
  CHECK(a.model == "meta-llama/Meta-Llama-3-8B-Instruct");
  CHECK(a.args.tp == uint64_t{2});
  CHECK(a.args.dp == uint64_t{2});
  // SGLang's launch-server page (mintlify.com/sgl-project/sglang/backend/launch-server),
  // "Common Launch Options".
  DeployConfig b = ParseEngineCommand(
      "sglang serve \\\n  --model-path meta-llama/Llama-3.1-8B-Instruct \\\n  --host 0.0.0.0 \\\n"
      "  --port 30000 \\\n  --tp-size 2 \\\n  --mem-fraction-static 0.8");
  CHECK(b.engine == "sglang");
  CHECK(b.args.tp == uint64_t{2});
  CHECK(b.args.memory_fraction == doctest::Approx(0.8));
  CHECK(HasNote(b, "ignored (no effect on the KV cache): port, host"));
  // SGLang's install guide, "Method 2: Docker" (its image's tag names no
  // version: latest).
  DeployConfig c = ParseEngineCommand(
      "docker run --gpus all --shm-size 32g -p 30000:30000 -v "
      "~/.cache/huggingface:/root/.cache/huggingface --env \"HF_TOKEN=<your-token>\" --ipc=host "
      "lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path "
      "meta-llama/Llama-3.1-8B-Instruct --host 0.0.0.0 --port 30000");
  CHECK(c.engine == "sglang");
  CHECK(c.model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK_FALSE(HasNote(c, "image tag"));
  // The issue's line, and a tagged image: the version is noted.
  DeployConfig d = ParseEngineCommand(
      "docker run lmsysorg/sglang:v0.4.6.post1-cu124 python3 -m sglang.launch_server "
      "--model-path Qwen/Qwen3-8B --tp 4 --mem-fraction-static 0.85 --context-length 32768 "
      "--kv-cache-dtype fp8_e4m3 --disable-radix-cache --enable-deepep-moe");
  CHECK(d.args.tp == uint64_t{4});
  CHECK(d.args.max_model_len == uint64_t{32768});
  CHECK(d.args.kv_cache_dtype == std::string("fp8_e4m3"));
  CHECK(d.args.prefix_caching == false);
  CHECK(HasNote(d, "sglang 0.4.6.post1 (the image tag)"));
  CHECK(d.unmodelled == std::vector<std::string>{"enable_deepep_moe"});
}

TEST_CASE("engine lines: llama.cpp, from its docs and guides") {
  // Orchestra-Research/AI-Research-SKILLs, llama-cpp/references/server.md, "Basic server".
  DeployConfig a = ParseEngineCommand(
      "./llama-server \\\n -m models/llama-2-7b-chat.Q4_K_M.gguf \\\n --host 0.0.0.0 \\\n"
      " --port 8080 \\\n -c 4096");
  CHECK(a.engine == "llama.cpp");
  CHECK(a.model == "models/llama-2-7b-chat.Q4_K_M.gguf");
  CHECK(a.args.n_ctx == uint64_t{4096});
  // NousResearch/hermes-agent, llama-cpp/references/server.md: a file pinned
  // from a Hub repo.
  DeployConfig b = ParseEngineCommand(
      "llama-server --hf-repo microsoft/Phi-3-mini-4k-instruct-gguf --hf-file "
      "Phi-3-mini-4k-instruct-q4.gguf -c 4096");
  CHECK(b.model == "microsoft/Phi-3-mini-4k-instruct-gguf");
  CHECK(HasNote(b, "ignored (kvplan does not read them): --hf-file"));
  // llama.cpp's docs/docker.md, the CUDA server image.
  DeployConfig c = ParseEngineCommand(
      "docker run -p 8080:8080 -v /path/to/models:/models --gpus all "
      "ghcr.io/ggml-org/llama.cpp:server-cuda -m /models/7B/ggml-model-q4_0.gguf -c 512 "
      "--host 0.0.0.0 --port 8080 --n-gpu-layers 1");
  CHECK(c.engine == "llama.cpp");
  CHECK(c.model == "/models/7B/ggml-model-q4_0.gguf");
  CHECK(c.args.n_ctx == uint64_t{512});
  CHECK(c.unmodelled.empty());
  CHECK(c.args.n_gpu_layers == std::string("1"));  // modelled: the rest stays on the CPU
  // -ngl all (or 999) offloads every layer, kvplan's default: only named.
  CHECK(ParseEngineCommand("llama-server -m m.gguf -ngl 999").unmodelled.empty());
  CHECK(ParseEngineCommand("llama-server -m m.gguf -ngl all").unmodelled.empty());
  CHECK(ParseEngineCommand("llama-server -m m.gguf -ngl 20").args.n_gpu_layers ==
        std::string("20"));
  // The issue's line: sequences, a quantized cache, flash attention.
  DeployConfig d =
      ParseEngineCommand("llama-server -m model.gguf -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on");
  CHECK(d.args.n_ctx == uint64_t{32768});
  CHECK(d.args.max_num_seqs == uint64_t{4});
  CHECK(d.args.kv_cache_dtype == std::string("q8_0"));
  CHECK(d.args.flash_attn == std::string("on"));
  // -fa alone (older builds) is on.
  CHECK(ParseEngineCommand("llama-server -m m.gguf -fa -c 1024").args.flash_attn ==
        std::string("on"));
}

TEST_CASE("engine lines: TensorRT-LLM, from its docs") {
  // TensorRT-LLM's trtllm-serve page, Quick Start.
  DeployConfig a = ParseEngineCommand("trtllm-serve TinyLlama/TinyLlama-1.1B-Chat-v1.0");
  CHECK(a.engine == "trtllm");
  CHECK(a.model == "TinyLlama/TinyLlama-1.1B-Chat-v1.0");
  // The same page, "Basic Configuration".
  DeployConfig b = ParseEngineCommand(
      "trtllm-serve meta-llama/Llama-3.1-8B-Instruct \\\n  --host localhost \\\n  --port 8000 \\\n"
      "  --backend pytorch \\\n  --tp_size 2 \\\n  --max_batch_size 128 \\\n"
      "  --max_num_tokens 8192");
  CHECK(b.args.tp == uint64_t{2});
  CHECK(b.args.max_num_seqs == uint64_t{128});
  CHECK(b.args.max_num_batched_tokens == uint64_t{8192});
  // trtllm-serve 0.18.2 reference: the cache's fraction of free memory.
  DeployConfig c = ParseEngineCommand(
      "trtllm-serve meta-llama/Llama-3.1-8B-Instruct --max_seq_len 8192 "
      "--kv_cache_free_gpu_memory_fraction 0.95 --trust_remote_code");
  CHECK(c.args.max_model_len == uint64_t{8192});
  CHECK(c.args.memory_fraction == doctest::Approx(0.95));
  // --extra_llm_api_options: its kv_cache_config is read.
  const std::string dir = TempDir();
  const std::string opts = WriteFile(dir, "opts.yaml",
                                     "kv_cache_config:\n  free_gpu_memory_fraction: 0.8\n"
                                     "  enable_block_reuse: false\n  dtype: fp8\n"
                                     "enable_attention_dp: true\nprint_iter_log: true\n"
                                     "some_new_option: 3\n");
  DeployConfig d = ParseEngineCommand(
      "trtllm-serve deepseek-ai/DeepSeek-V3 --tp_size 8 "
      "--extra_llm_api_options " +
      opts);
  CHECK(d.args.memory_fraction == doctest::Approx(0.8));
  CHECK(d.args.prefix_caching == false);
  CHECK(d.args.kv_cache_dtype == std::string("fp8"));
  CHECK(d.args.attention_dp == true);  // modelled: every rank its own requests
  CHECK(d.unmodelled.empty());
  CHECK(HasNote(d, "ignored (kvplan does not read them): some_new_option"));
  // The pool's own keys: max_gpu_total_bytes, the host pool and max_tokens.
  const std::string pools = WriteFile(dir, "pools.yaml",
                                      "kv_cache_config:\n  max_gpu_total_bytes: 32GiB\n"
                                      "  host_cache_size: 64GiB\n  max_tokens: 100000\n");
  DeployConfig p =
      ParseEngineCommand("trtllm-serve Qwen/Qwen3-8B --extra_llm_api_options " + pools);
  CHECK(p.args.max_gpu_total_bytes == uint64_t{32} << 30);
  CHECK(p.args.host_cache_size == uint64_t{64} << 30);
  CHECK(p.args.trtllm_max_tokens == uint64_t{100000});
  CHECK(p.unmodelled.empty());
}

TEST_CASE("engine lines: llama.cpp's -ngl, -ts and -nkvo are read") {
  DeployConfig a =
      ParseEngineCommand("llama-server -m qwen2.5-32b.gguf -c 32768 -ngl 40 -ts 10,6 -nkvo");
  CHECK(a.args.n_gpu_layers == std::string("40"));
  CHECK(a.args.tensor_split == std::string("10,6"));
  CHECK(a.args.no_kv_offload == true);
  CHECK(a.unmodelled.empty());
  // -ts names one GPU a share: the GPUs the line asks for.
  const EngineConfig ac = ToEngineConfig(a);
  CHECK(ac.pp == 2u);
  CHECK(ac.gpus_per_node == 2u);
  CHECK_THROWS_WITH(ParseEngineCommand("llama-server -m x.gguf -ts 10,x"),
                    "--engine-args: tensor_split: expected shares such as 10,6 (non-negative "
                    "numbers), got '10,x'");
}

TEST_CASE("engine lines: data-parallel attention and expert parallelism, each engine's way") {
  const DeployConfig s = ParseEngineCommand(
      "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 "
      "--enable-dp-attention");
  CHECK(s.args.attention_dp == true);
  CHECK(s.unmodelled.empty());
  const EngineConfig sc = ToEngineConfig(s);
  CHECK(sc.attention_dp == 8u);
  CHECK(sc.dp == 1u);  // the groups are inside the tp group: no more GPUs
  CHECK(sc.gpus_per_node == 8u);
  const EngineConfig vc = ToEngineConfig(
      ParseEngineCommand("vllm serve deepseek-ai/DeepSeek-V3 -dp 8 --enable-expert-parallel"));
  CHECK(vc.expert_parallel == 8u);
  CHECK(vc.dp == 8u);
  const EngineConfig ep =
      ToEngineConfig(ParseEngineCommand("vllm serve deepseek-ai/DeepSeek-V3 -tp 2 -dp 4 -ep"));
  CHECK(ep.expert_parallel == 8u);
}

TEST_CASE("engine lines: vLLM's --speculative-config is read") {
  const DeployConfig a = ParseEngineCommand(
      "vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --speculative-config "
      "'{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 1, "
      "\"draft_tensor_parallel_size\": 8}'");
  REQUIRE(a.args.speculative);
  CHECK(a.args.speculative->Mtp());
  CHECK(a.args.speculative->num_tokens == 1u);
  CHECK(HasNote(
      a, "ignored (no effect on the KV cache): speculative_config.draft_tensor_parallel_size"));
  const DeployConfig b = ParseEngineCommand(
      "vllm serve meta-llama/Llama-3.1-70B-Instruct --speculative-config "
      "'{\"model\": \"meta-llama/Llama-3.2-1B\", \"num_speculative_tokens\": 5}'");
  REQUIRE(b.args.speculative);
  CHECK_FALSE(b.args.speculative->Mtp());
  CHECK(b.args.speculative->model == "meta-llama/Llama-3.2-1B");
  CHECK_THROWS_WITH(ParseEngineCommand("vllm serve m --speculative-config '{\"method\": mtp}'"),
                    doctest::Contains("--speculative-config: not valid JSON"));
  CHECK_THROWS_WITH(
      ParseEngineCommand("vllm serve m --speculative-config '{\"num_speculative_tokens\": 0}'"),
      "--vllm-args: --speculative-config: num_speculative_tokens: expected 1 to 1024, got 0");
}

TEST_CASE("engine lines: vLLM's block override and max_model_len auto-fit are read") {
  DeployConfig a = ParseEngineCommand(
      "vllm serve Qwen/Qwen3-8B --num-gpu-blocks-override 512 --max-model-len -1");
  CHECK(a.args.num_gpu_blocks_override == uint64_t{512});
  CHECK(a.args.max_model_len_auto);
  CHECK_FALSE(a.args.max_model_len);
  CHECK(
      ParseEngineCommand("vllm serve Qwen/Qwen3-8B --max-model-len auto").args.max_model_len_auto);
  CHECK(ParseEngineCommand("vllm serve google/gemma-2-9b --disable-hybrid-kv-cache-manager")
            .args.disable_hybrid == true);
}

TEST_CASE("engine lines: vLLM through the same door, its version from the image tag") {
  DeployConfig a = ParseEngineCommand(
      "docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.10.1 --model "
      "meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192");
  CHECK(a.engine == "vllm");
  CHECK(a.args.max_model_len == uint64_t{8192});
  REQUIRE(a.vllm_version);
  CHECK(*a.vllm_version == ParseVllmVersion("0.10", "t"));
  // A Kubernetes argument list, command then args.
  DeployConfig k = ParseEngineCommand(
      R"(["python3", "-m", "sglang.launch_server"] ["--model-path", "Qwen/Qwen3-8B", "--tp", "2"])");
  CHECK(k.engine == "sglang");
  CHECK(k.args.tp == uint64_t{2});
}

TEST_CASE("engine lines: --revision is the revision the model resolves at") {
  CHECK(ParseEngineCommand("vllm serve Qwen/Qwen3-8B --revision 0a1b2c3").model_revision ==
        "0a1b2c3");
  CHECK(ParseEngineCommand("python -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                           "--revision=v2")
            .model_revision == "v2");
  CHECK(ParseEngineCommand("vllm serve Qwen/Qwen3-8B").model_revision == "main");
}

TEST_CASE("engine lines: errors are one line naming the flag") {
  CHECK_THROWS_WITH(ParseEngineCommand("nginx -g daemon"),
                    "--engine-args: cannot tell the engine of 'nginx' (expected vllm serve, python "
                    "-m sglang.launch_server, sglang serve, llama-server, llama-cli or "
                    "trtllm-serve)");
  CHECK_THROWS_WITH(ParseEngineCommand("llama-server -m m.gguf -c"),
                    "--engine-args: -c needs a value");
  CHECK_THROWS_WITH(ParseEngineCommand("llama-server -c 4096"),
                    "--engine-args: no model (expected -m MODEL.gguf or -hf REPO)");
  CHECK_THROWS_WITH(ParseEngineCommand("python -m sglang.launch_server --model-path m --tp x"),
                    "--engine-args: tp_size: expected a whole number, got 'x'");
  CHECK_THROWS_WITH(ParseEngineCommand("llama-server -m m.gguf -fa maybe"),
                    "--engine-args: unexpected argument 'maybe' (llama.cpp takes its model with "
                    "-m)");
  CHECK_THROWS_WITH(ParseEngineCommand("sglang serve --model-path m --tp 2 --tp-size 4"),
                    "--engine-args: --tp-size sets the same setting as --tp");
  CHECK_THROWS_WITH(ParseEngineCommand("[\"llama-server\", 3]"),
                    "--engine-args: every item of the list must be a string");
  CHECK_THROWS_WITH(ParseEngineCommand("docker run ubuntu bash"),
                    "--engine-args: a docker command without an engine image kvplan knows "
                    "(vllm/vllm-openai, lmsysorg/sglang, ggml-org/llama.cpp, "
                    "nvcr.io/nvidia/tensorrt-llm): give the engine's own command line");
}

TEST_CASE("check --engine-args: every engine's line checked, --strict on unmodelled flags") {
  auto s = RunKvplan(
      "check --engine-args \"python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 "
      "--mem-fraction-static 0.85 --enable-deepep-moe\" --gpu h100-sxm --require-concurrency 8");
  CHECK(s.exit_code == 0);
  CHECK(s.out.find("qwen3-8b on 2 x h100-sxm, sglang tp 2") != std::string::npos);
  CHECK(s.out.find("not modelled") != std::string::npos);
  auto strict = RunKvplan(
      "check --strict --engine-args \"python -m sglang.launch_server --model-path Qwen/Qwen3-8B "
      "--tp 2 --enable-deepep-moe\" --gpu h100-sxm");
  CHECK(strict.exit_code == 1);
  CHECK(strict.out.find("FAIL  all_flags_modelled") != std::string::npos);
  auto l = RunKvplan(
      "check --engine-args \"llama-server -m llama-3.1-8b -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa "
      "off\" --gpu rtx-4090");
  CHECK(l.exit_code == 1);
  CHECK(l.out.find("V cache quantization requires flash_attn") != std::string::npos);
  // --vllm-args is the same option, and its errors say --vllm-args.
  auto v = RunKvplan("check --vllm-args \"llama-server -c 4096\" --gpu h100-sxm");
  CHECK(v.exit_code == 2);
  CHECK(v.err == "kvplan: error: --vllm-args: no model (expected -m MODEL.gguf or -hf REPO)\n");
}
