// Speculative decoding read in each engine's own words: vLLM's
// speculative_config (JSON on the line, a map or JSON string in a config),
// TensorRT-LLM's speculative_config (decoding_type MTP, Eagle3,
// DraftTarget, ...) in its LLM API options, SGLang's --speculative-algorithm
// and draft path. Each launch line is from the engine's docs, named beside it.
#include "import/speculative_config.h"

#include <doctest/doctest.h>

#include <string>

#include "cli_runner.h"
#include "import/deploy_config_reader.h"
#include "import/engine_command.h"
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

// A deployment config for `engine` with `args` under engine.args.
DeployConfig Config(const std::string& engine, const std::string& args) {
  return ParseDeployConfig(
      "name: d\nmodel: deepseek-v3\nhardware:\n  gpu: h200\n  count: 8\nengine:\n"
      "  name: " +
          engine + "\n  args:\n" + args + "requirements:\n  min_concurrency: 1\n",
      "d.yaml");
}

}  // namespace

TEST_CASE("speculative: SGLang's algorithms, from its docs") {
  // docs.sglang.io, DeepSeek V3/R1 usage, "Multi-token Prediction": EAGLE
  // with no draft path serves the model's own NextN layer.
  DeployConfig a = ParseEngineCommand(
      "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3-0324 "
      "--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
      "--speculative-num-draft-tokens 2 --trust-remote-code --tp 8");
  REQUIRE(a.args.speculative);
  CHECK(a.args.speculative->Mtp());
  CHECK(a.args.speculative->model.empty());
  CHECK(a.args.speculative->num_tokens == 2u);
  CHECK(a.unmodelled.empty());
  // NEXTN is SGLang's other name for it; a draft path naming the model too.
  CHECK(ParseEngineCommand("sglang serve --model-path m --speculative-algorithm NEXTN")
            .args.speculative->Mtp());
  CHECK(ParseEngineCommand("sglang serve --model-path m --speculative-algorithm EAGLE "
                           "--speculative-draft-model-path m --speculative-num-steps 3")
            .args.speculative->num_tokens == 3u);
  // docs.sglang.io, Speculative Decoding, "EAGLE-3 Decoding": a draft head.
  DeployConfig b = ParseEngineCommand(
      "python3 -m sglang.launch_server --model meta-llama/Llama-3.1-8B-Instruct "
      "--speculative-algorithm EAGLE3 --speculative-draft-model-path "
      "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B --speculative-num-steps 5 "
      "--speculative-eagle-topk 8 --speculative-num-draft-tokens 32 --mem-fraction 0.6");
  REQUIRE(b.args.speculative);
  CHECK(b.args.speculative->method == "eagle3");
  CHECK(b.args.speculative->model == "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B");
  CHECK(b.args.speculative->num_tokens == 32u);
  CHECK(ParseEngineCommand("sglang serve --model-path m --speculative-algorithm STANDALONE "
                           "--speculative-draft-model-path small")
            .args.speculative->method == "draft_model");
  // N-gram speculation loads nothing.
  DeployConfig n = ParseEngineCommand("sglang serve --model-path m --speculative-algorithm NGRAM");
  REQUIRE(n.args.speculative);
  CHECK(n.args.speculative->model.empty());
  CHECK_FALSE(n.args.speculative->Mtp());
  // Without an algorithm SGLang speculates nothing: the other keys are idle.
  DeployConfig idle =
      ParseEngineCommand("sglang serve --model-path m --speculative-num-draft-tokens 4");
  CHECK_FALSE(idle.args.speculative);
  CHECK(HasNote(idle, "speculative_num_draft_tokens"));

  CHECK_THROWS_WITH(
      ParseEngineCommand("sglang serve --model-path m --speculative-algorithm MEDUSA"),
      doctest::Contains("speculative_algorithm: 'MEDUSA' is none of EAGLE, EAGLE3, NEXTN, "
                        "STANDALONE, NGRAM, LOOKAHEAD"));
  CHECK_THROWS_WITH(
      ParseEngineCommand("sglang serve --model-path m --speculative-algorithm EAGLE3"),
      doctest::Contains("speculative_algorithm: EAGLE3 needs speculative_draft_model_path"));
  CHECK_THROWS_WITH(ParseEngineCommand("sglang serve --model-path m --speculative-algorithm "
                                       "EAGLE --speculative-num-draft-tokens x"),
                    doctest::Contains("speculative_num_draft_tokens"));
}

TEST_CASE("speculative: TensorRT-LLM's speculative_config in its LLM API options") {
  const std::string dir = TempDir();
  // TensorRT-LLM docs, "Speculative Decoding" and the DeepSeek-R1 example:
  // MTP with three draft tokens (MTP-Eagle reruns the model's one layer).
  const std::string mtp =
      WriteFile(dir, "mtp.yaml",
                "kv_cache_config:\n  free_gpu_memory_fraction: 0.8\nspeculative_config:\n"
                "  decoding_type: MTP\n  num_nextn_predict_layers: 3\n");
  DeployConfig a = ParseEngineCommand(
      "trtllm-serve deepseek-ai/DeepSeek-R1 --tp_size 8 "
      "--extra_llm_api_options " +
      mtp);
  REQUIRE(a.args.speculative);
  CHECK(a.args.speculative->Mtp());
  CHECK(a.args.speculative->num_tokens == 3u);
  CHECK(a.args.speculative->mtp_layers == 0u);  // the model's own count
  CHECK(a.unmodelled.empty());
  // Vanilla MTP runs num_nextn_predict_layers layers of the model's.
  DeployConfig v = Config("trtllm",
                          "    speculative_config:\n      decoding_type: MTP\n"
                          "      num_nextn_predict_layers: 2\n      use_mtp_vanilla: true\n");
  CHECK(v.args.speculative->mtp_layers == 2u);
  // TensorRT-LLM docs, "EAGLE 3": a draft model directory.
  DeployConfig e = Config("trtllm",
                          "    speculative_config:\n      decoding_type: Eagle3\n"
                          "      max_draft_len: 4\n"
                          "      speculative_model_dir: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
                          "      eagle3_one_model: true\n");
  CHECK(e.args.speculative->method == "eagle3");
  CHECK(e.args.speculative->model == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B");
  CHECK(e.args.speculative->num_tokens == 4u);
  CHECK(HasNote(e, "speculative_config.eagle3_one_model"));
  CHECK(Config("trtllm",
               "    speculative_config:\n      decoding_type: NGram\n      max_draft_len: 4\n")
            .args.speculative->model.empty());
  // Medusa heads are built into the engine: named, not sized.
  DeployConfig m = Config("trtllm", "    speculative_config: {decoding_type: Medusa}\n");
  CHECK(m.unmodelled == std::vector<std::string>{"speculative_config medusa"});

  CHECK_THROWS_WITH(
      Config("trtllm", "    speculative_config:\n      decoding_type: DraftTarget\n"),
      "d.yaml:10:7: speculative_config: decoding_type DraftTarget needs speculative_model_dir "
      "(the draft model)");
  CHECK_THROWS_WITH(Config("trtllm", "    speculative_config: {decoding_type: Mtp}\n"),
                    doctest::Contains("speculative_config: decoding_type: 'Mtp' is none of MTP, "
                                      "Eagle, Eagle3, DraftTarget, NGram"));
  CHECK_THROWS_WITH(Config("trtllm", "    speculative_config: {max_draft_len: 3}\n"),
                    doctest::Contains("speculative_config: decoding_type is missing"));
  CHECK_THROWS_WITH(
      Config("trtllm",
             "    speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 0}\n"),
      doctest::Contains("num_nextn_predict_layers: expected 1 to 1024, got 0"));
  CHECK_THROWS_WITH(Config("trtllm", "    speculative_config: MTP\n"),
                    doctest::Contains("speculative_config: "));
}

TEST_CASE("speculative: vLLM's speculative_config in a deployment config") {
  DeployConfig a = Config("vllm",
                          "    speculative_config:\n      method: deepseek_mtp\n"
                          "      num_speculative_tokens: 1\n");
  REQUIRE(a.args.speculative);
  CHECK(a.args.speculative->Mtp());
  CHECK(a.unmodelled.empty());
  // As vLLM's --speculative-config takes it: a JSON string.
  DeployConfig b =
      Config("vllm",
             "    speculative_config: '{\"model\": \"llama-3.2-1b\", \"num_speculative_tokens\": "
             "5}'\n");
  CHECK(b.args.speculative->model == "llama-3.2-1b");
  CHECK(b.args.speculative->num_tokens == 5u);
  CHECK_THROWS_WITH(
      Config("vllm", "    speculative_config:\n      num_speculative_tokens: 0\n"),
      "d.yaml:10:7: speculative_config: num_speculative_tokens: expected 1 to 1024, got 0");
  CHECK_THROWS_WITH(Config("vllm", "    speculative_config: '{\"method\": mtp}'\n"),
                    doctest::Contains("speculative_config: not valid JSON"));
  CHECK_THROWS_WITH(Config("vllm", "    speculative_config: {}\n"),
                    doctest::Contains("give a method (mtp, eagle, ngram, ...) or a draft model"));
}

TEST_CASE("speculative: the MTP layers in the cache from each engine's line") {
  // DeepSeek-V3's MTP layer is a 62nd MLA layer: 62 x 1,152 bytes a token.
  // Each engine's line holds the tokens `capacity --speculative-config` says.
  struct Line {
    const char* engine;
    const char* line;
  };
  for (const Line& l :
       {Line{"sglang",
             "python3 -m sglang.launch_server --model-path deepseek-v3 --tp 8 "
             "--speculative-algorithm EAGLE --speculative-num-draft-tokens 2 --context-length "
             "32768"},
        Line{"vllm",
             "vllm serve deepseek-v3 -tp 8 --max-model-len 32768 --speculative-config "
             "'{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": 1}'"}}) {
    const std::string line = l.line;
    CAPTURE(line);
    auto cap = RunKvplan(std::string("capacity deepseek-v3 --gpu h200 -tp 8 --max-model-len 32768 "
                                     "--speculative-config '{\"method\": \"mtp\"}' --format json "
                                     "--engine ") +
                         l.engine);
    REQUIRE(cap.exit_code == 0);
    CHECK(cap.out.find("\"bytes_per_token\": 71424") != std::string::npos);
    const size_t at = cap.out.find("\"max_tokens\": ");
    REQUIRE(at != std::string::npos);
    const std::string tokens = cap.out.substr(at + 14, cap.out.find_first_of(",\n", at) - at - 14);
    auto r = RunKvplan(std::string("check --engine-args \"") + l.line +
                       "\" --gpu h200 --gpu-count 8 --format json");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"kv_cache_tokens\": " + tokens + ",") != std::string::npos);
  }
  // A model without MTP layers: the error says to give a draft model.
  auto bad = RunKvplan(
      "check --engine-args \"sglang serve --model-path llama-3.1-8b --speculative-algorithm "
      "NEXTN\" --gpu h100-sxm");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("llama-3.1-8b has no MTP layers") != std::string::npos);
}
