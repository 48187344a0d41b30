// llama.cpp's cache through the real binary: each sequence its own stream
// of padded cells unless --kv-unified, and the flags that change it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using kvplan::test::RunKvplan;
using kvplan::test::SourcePath;

namespace {

nlohmann::json Capacity(const std::string& args) {
  auto r = RunKvplan("capacity " + SourcePath("tests/data/models/gemma-3-270m.yaml") +
                     " --gpu h100-sxm --engine llama.cpp " + args + " --format json");
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("llama.cpp: -np pads each sequence's share, --kv-unified does not") {
  // The llama-server run of gemma-3-270m with -np 3 -c 1024 (f16):
  // PAD(1024 / 3, 256) = 512 cells a sequence, 1,536 in all, 27.0 MiB at
  // 18,432 bytes a cell (18 layers x 1 KV head x 256 x K and V x 2 bytes).
  const nlohmann::json split = Capacity("-c 1024 -np 3");
  CHECK(split["cells"] == 1536);
  CHECK(split["kv_used_bytes"] == 1536 * 18432);
  CHECK(split["kv_used_bytes"] == 27 * 1024 * 1024);
  // One unified cache: PAD(1024, 256) cells for all three.
  const nlohmann::json unified = Capacity("-c 1024 -np 3 --kv-unified");
  CHECK(unified["cells"] == 1024);
  CHECK(unified["kv_used_bytes"] == 1024 * 18432);
  CHECK(Capacity("-c 1024 -np 3 -kvu")["cells"] == 1024);
  // One sequence: the same either way.
  CHECK(Capacity("-c 1000")["cells"] == 1024);
  // The log line says the same.
  auto text = RunKvplan("capacity " + SourcePath("tests/data/models/gemma-3-270m.yaml") +
                        " --gpu h100-sxm --engine llama.cpp -c 1024 -np 3");
  CHECK(text.out.find("1,536 cells") != std::string::npos);
}

TEST_CASE("llama.cpp: -ctk/-ctv and -fa on the command line") {
  const std::string m = SourcePath("tests/data/models/gemma-3-270m.yaml");
  auto q = RunKvplan("capacity " + m +
                     " --gpu h100-sxm --engine llama.cpp -c 1024 -ctk q8_0 "
                     "-ctv q8_0 -fa on --format json");
  REQUIRE(q.exit_code == 0);
  CHECK(nlohmann::json::parse(q.out)["kv_cache_dtype"] == "q8_0");
  auto differ = RunKvplan("capacity " + m + " --gpu h100-sxm --engine llama.cpp -ctk q8_0");
  CHECK(differ.exit_code == 2);
  CHECK(differ.err ==
        "kvplan: error: -ctk q8_0 and -ctv f16 differ (llama.cpp's default is f16); kvplan "
        "models one cache type for K and V, so give both, equal\n");
  // A quantized V cache with flash attention off: llama.cpp refuses to start.
  auto off = RunKvplan("capacity " + m +
                       " --gpu h100-sxm --engine llama.cpp -ctk q8_0 -ctv q8_0 "
                       "-fa off");
  CHECK(off.exit_code == 2);
  CHECK(off.err.find("V cache quantization requires flash_attn") != std::string::npos);
  auto vllm = RunKvplan("capacity " + m + " --gpu h100-sxm -fa on");
  CHECK(vllm.exit_code == 2);
  CHECK(vllm.err ==
        "kvplan: error: -fa/--flash-attn is llama.cpp's flag, not vllm's (or use --engine "
        "llama.cpp)\n");
}

TEST_CASE("llama.cpp: -ngl, -ts and -nkvo on the command line, host memory in the JSON") {
  // gemma-3-270m has 18 layers: -ngl 10 leaves layers 0-7 on the CPU.
  const nlohmann::json part = Capacity("-c 1024 -ngl 10");
  CHECK(part["host_layers"] == 8);
  CHECK(part["host_kv_bytes"] == 8 * 1024 * 1024);  // 8 layers x 1,024 cells x 1,024 B
  CHECK(part["kv_used_bytes"] == 10 * 1024 * 1024);
  const nlohmann::json host = Capacity("-c 1024 -nkvo");
  CHECK(host["kv_used_bytes"] == 0);
  CHECK(host["host_kv_bytes"] == 18 * 1024 * 1024);
  // -ts sets one GPU per share.
  const nlohmann::json split = Capacity("-c 1024 -ts 3,1");
  CHECK(split["pp"] == 2);
  auto bad = RunKvplan("capacity " + SourcePath("tests/data/models/gemma-3-270m.yaml") +
                       " --gpu h100-sxm --engine llama.cpp -ts 3,-1");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err ==
        "kvplan: error: -ts: expected shares such as 10,6 (non-negative numbers), got '3,-1'\n");
  auto vllm = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm -ngl 10");
  CHECK(vllm.exit_code == 2);
  CHECK(vllm.err ==
        "kvplan: error: -ngl/--n-gpu-layers is llama.cpp's flag, not vllm's (or use "
        "--engine llama.cpp)\n");
}
