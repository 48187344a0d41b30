// import-hf: every fixture in tests/data/hf/ (verbatim published configs)
// must produce the bundled spec's cache exactly, and agree field by field.
#include "import/hf_import.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>

#include "cli_runner.h"
#include "import/resolve.h"
#include "plan/kv.h"
#include "plan/weights.h"
#include "spec/catalog.h"
#include "spec/model_reader.h"
#include "spec/spec_diff.h"

using namespace kvplan;
using kvplan::test::ReadFile;
using kvplan::test::RunKvplan;
using kvplan::test::RunKvplanInto;
using kvplan::test::SourcePath;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;

namespace {

// fixture file -> bundled model
const std::vector<std::pair<std::string, std::string>> kFixtures = {
    {"llama-3.1-8b", "llama-3.1-8b"},
    {"mistral-7b-v0.1", "mistral-7b-v0.1"},
    {"mixtral-8x7b", "mixtral-8x7b"},
    {"qwen2.5-7b", "qwen2.5-7b"},
    {"qwen3-8b", "qwen3-8b"},
    {"qwen3-30b-a3b", "qwen3-30b-a3b"},
    {"gemma-2-9b", "gemma-2-9b"},
    {"gemma-3-27b", "gemma-3-27b"},
    {"deepseek-v3", "deepseek-v3"},
    {"falcon-7b", "falcon-7b"},
    {"gpt2", "gpt2"},
    {"phi-3-mini", "phi-3-mini"},
    {"jamba-v0.1", "jamba-v0.1"},
    {"gpt-oss-20b", "gpt-oss-20b"},
    {"llama-4-scout-17b-16e-instruct", "llama-4-scout"},
    {"llama-4-maverick-17b-128e-instruct", "llama-4-maverick"},
    {"gemma-4-26b-a4b-it-4bit-mlx", "gemma-4-26b-a4b-it"},
};

std::string Fixture(const std::string& name) {
  return SourcePath("tests/data/hf/" + name + ".json");
}

std::vector<std::string> PerLayer(const ModelSpec& m) {
  std::vector<std::string> out;
  std::vector<size_t> map = m.LayerToGroup();
  for (size_t i = 0; i < m.layers; ++i) {
    const LayerGroup& g = m.groups[map[i]];
    out.push_back(std::string(LayerKindName(g.kind)) + "/" + std::to_string(g.window) + "/" +
                  std::to_string(g.state_bytes) + "/" + std::to_string(g.kv_heads) + "/" +
                  std::to_string(g.head_dim));
  }
  return out;
}

}  // namespace

TEST_CASE("every fixture imports to the bundled model's cache, exactly") {
  REQUIRE(std::filesystem::directory_iterator(SourcePath("tests/data/hf")) !=
          std::filesystem::directory_iterator());
  for (const auto& [file, bundled] : kFixtures) {
    CAPTURE(file);
    HfImport imp = ImportHfConfigFile(Fixture(file));
    ModelSpec want = LoadModel(bundled);
    const ModelSpec& got = imp.spec;
    CHECK(PerLayer(got) == PerLayer(want));
    for (const char* dtype : {"fp16", "fp8", "fp32"}) {
      KvCost a = ComputeKvCost(got, FindCacheDtype(dtype), 1);
      KvCost b = ComputeKvCost(want, FindCacheDtype(dtype), 1);
      CHECK(a.per_token_bytes == b.per_token_bytes);
      CHECK(a.fixed_bytes == b.fixed_bytes);
      CHECK(a.SequenceBytes(want.max_context) == b.SequenceBytes(want.max_context));
      CHECK(a.groups.size() == b.groups.size());
    }
    // Field by field, the import and the hand-written spec agree.
    std::vector<FieldDiff> diffs = DiffSpecs(want, got);
    for (const FieldDiff& d : diffs) {
      FAIL_CHECK(d.field << ": bundled " << d.spec_value << ", imported " << d.config_value);
    }
    // params is counted tensor by tensor, as plan/weights counts the bundled spec.
    CHECK(got.params == CountParams(BuildModelTensors(want)));
    // The emitted YAML reads back to the same spec, and says params is counted.
    ModelSpec again = ParseModelYaml(imp.yaml, "again.yaml");
    CHECK(DiffSpecs(again, got).empty());
    CHECK(again.params == got.params);
    CHECK(imp.yaml.find("COUNTED from the config shapes") != std::string::npos);
  }
}

TEST_CASE("the importer records its assumptions as comments") {
  std::string y = ImportHfConfigFile(Fixture("gemma-3-27b")).yaml;
  CHECK(y.find("head_dim: 128                         # explicit text_config.head_dim (NOT "
               "hidden_size / heads = 168)") != std::string::npos);
  CHECK(y.find("# no max_position_embeddings: gemma3 class default") != std::string::npos);
  CHECK(y.find("# Note: language-model values read from text_config") != std::string::npos);
  std::string f = ImportHfConfigFile(Fixture("falcon-7b")).yaml;
  CHECK(f.find("kv_heads: 1 ") != std::string::npos);
  CHECK(f.find("num_kv_heads is ignored in this mode") != std::string::npos);
  std::string g = ImportHfConfigFile(Fixture("gpt2")).yaml;
  CHECK(g.find("no torch_dtype in the config: transformers loads float32") != std::string::npos);
  std::string d = ImportHfConfigFile(Fixture("deepseek-v3")).yaml;
  CHECK(d.find("quantization:                         # quantization_config\n"
               "  format: fp8                         # quant_method fp8\n"
               "  block: 128                          # weight_block_size [128, 128]\n") !=
        std::string::npos);
  std::string o = ImportHfConfigFile(Fixture("gpt-oss-20b")).yaml;
  CHECK(o.find("  format: mxfp4                       # quant_method mxfp4\n"
               "  parts: [experts]                    # mxfp4 quantizes the MoE experts only\n") !=
        std::string::npos);
}

TEST_CASE("variants: Falcon new decoder, RW names, Qwen sliding windows, no layer_types") {
  // Falcon-40B style: new_decoder_architecture with num_kv_heads.
  HfImport f40 = ImportHfConfig(R"({"architectures": ["FalconForCausalLM"], "hidden_size": 8192,
      "num_attention_heads": 128, "num_hidden_layers": 60, "num_kv_heads": 8,
      "new_decoder_architecture": true, "vocab_size": 65024, "torch_dtype": "bfloat16"})",
                                "f40.json");
  CHECK(f40.spec.kv_heads == 8);
  CHECK(f40.spec.max_context == 2048);
  CHECK(ComputeKvCost(f40.spec, FindCacheDtype("fp16")).per_token_bytes ==
        ComputeKvCost(LoadModel("falcon-40b"), FindCacheDtype("fp16")).per_token_bytes);
  // Falcon multi_query: false is MHA.
  HfImport mha = ImportHfConfig(R"({"architectures": ["FalconForCausalLM"], "hidden_size": 2048,
      "num_attention_heads": 32, "num_hidden_layers": 24, "multi_query": false,
      "new_decoder_architecture": false, "vocab_size": 50304})",
                                "rw.json");
  CHECK(mha.spec.kv_heads == 32);
  // Qwen2 with use_sliding_window and max_window_layers 0: every layer slides.
  HfImport q = ImportHfConfig(R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 1024,
      "num_attention_heads": 16, "num_key_value_heads": 2, "num_hidden_layers": 4,
      "use_sliding_window": true, "sliding_window": 512, "max_window_layers": 0,
      "max_position_embeddings": 8192, "vocab_size": 1000, "intermediate_size": 2816})",
                              "q.json");
  REQUIRE(q.spec.groups.size() == 1);
  CHECK(q.spec.groups[0].kind == LayerKind::kSliding);
  CHECK(q.spec.groups[0].window == 512);
  CHECK_THROWS_WITH(
      ImportHfConfig(
          R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 1024, "intermediate_size": 4096,
      "num_attention_heads": 16, "num_key_value_heads": 2, "num_hidden_layers": 4,
      "use_sliding_window": true, "sliding_window": 512, "max_window_layers": 2})",
          "q2.json"),
      "q2.json: use_sliding_window with max_window_layers 2 (layers 2+ slide) is a "
      "layer range, which a kvplan spec cannot describe; write the spec by hand");
  // Gemma 2 without layer_types and Gemma 3 with an explicit layer_types list.
  HfImport g2 = ImportHfConfig(
      R"({"architectures": ["Gemma2ForCausalLM"], "hidden_size": 3584, "intermediate_size": 14336,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
      "num_hidden_layers": 42, "sliding_window": 4096, "max_position_embeddings": 8192,
      "layer_types": [)" +
          [] {
            std::string s;
            for (int i = 0; i < 42; ++i)
              s += std::string(i ? "," : "") +
                   (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
            return s;
          }() +
          "]}",
      "g2.json");
  CHECK(PerLayer(g2.spec) == PerLayer(LoadModel("gemma-2-9b")));
  // DeepSeek-V2-Lite: MLA without query compression (q_lora_rank null).
  HfImport v2 =
      ImportHfConfig(R"({"architectures": ["DeepseekV2ForCausalLM"], "first_k_dense_replace": 1,
      "hidden_size": 2048, "intermediate_size": 10944, "kv_lora_rank": 512,
      "max_position_embeddings": 163840, "moe_intermediate_size": 1408, "moe_layer_freq": 1,
      "n_routed_experts": 64, "n_shared_experts": 2, "num_attention_heads": 16,
      "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16,
      "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
      "vocab_size": 102400, "torch_dtype": "bfloat16", "tie_word_embeddings": false})",
                     "v2.json");
  CHECK(DiffSpecs(LoadModel("deepseek-v2-lite"), v2.spec).empty());
  CHECK(ComputeKvCost(v2.spec, FindCacheDtype("bf16")).per_token_bytes == 27 * 576 * 2);
  // A pattern that is not periodic lists its layers: full at 0, 3 and 4.
  const HfImport odd = ImportHfConfig(
      R"({"architectures": ["Gemma2ForCausalLM"], "hidden_size": 64, "intermediate_size": 4096,
      "num_attention_heads": 4, "num_hidden_layers": 5, "sliding_window": 16, "layer_types":
      ["full_attention", "sliding_attention", "sliding_attention", "full_attention", "full_attention"]})",
      "odd.json");
  CHECK(odd.spec.LayerToGroup() == std::vector<size_t>{1, 0, 0, 1, 1});  // sliding listed first
  CHECK(odd.yaml.find("at: [1, 2]") != std::string::npos);
}

TEST_CASE("import-hf: quantization_config becomes a quantization block where kvplan sizes it") {
  const std::string base = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
      "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "float16",
      "quantization_config": )";
  const auto imp = [&](const std::string& qc) { return ImportHfConfig(base + qc + "}", "q.json"); };
  HfImport awq = imp(R"({"quant_method": "awq", "bits": 4, "group_size": 64})");
  REQUIRE(awq.spec.quantization);
  CHECK(awq.spec.quantization->format == "int4");
  CHECK(awq.spec.quantization->group_size == 64);
  CHECK(awq.spec.weight_dtype == "fp16");
  HfImport fp8 = imp(R"({"quant_method": "fp8", "fmt": "e4m3"})");
  REQUIRE(fp8.spec.quantization);
  CHECK(fp8.spec.quantization->block == 0);  // one scale per tensor
  // What kvplan does not size keeps weight_dtype and says so in a comment.
  for (const char* qc : {R"({"quant_method": "gptq", "bits": 4, "group_size": -1})",
                         R"({"quant_method": "gptq", "bits": 3})",
                         R"({"quant_method": "fp8", "weight_block_size": [128, 64]})",
                         R"({"quant_method": "mxfp4"})", R"({"quant_method": "bitsandbytes"})"}) {
    CAPTURE(qc);
    HfImport i = imp(qc);
    CHECK_FALSE(i.spec.quantization);
    CHECK(i.yaml.find("the published weights are smaller than this dtype implies") !=
          std::string::npos);
  }
  CHECK(
      imp(R"({"quant_method": "mxfp4"})").yaml.find("MoE experts only, and this model has none") !=
      std::string::npos);
  CHECK(imp(R"({"quant_method": "gptq", "bits": 4, "group_size": -1})")
            .yaml.find("group_size -1: scales per output channel") != std::string::npos);
  // Shapes that are no numbers are errors at their position.
  CHECK_THROWS_WITH(imp(R"({"quant_method": "fp8", "weight_block_size": "128"})"),
                    "q.json:4:75: quantization_config.weight_block_size: expected two numbers, "
                    "e.g. [128, 128]");
  CHECK_THROWS_WITH(imp(R"({"quant_method": "awq", "bits": 4, "group_size": 1000000000000})"),
                    "q.json:4:79: quantization_config.group_size: 1000000000000 is over kvplan's "
                    "limit of 16777216");
}

TEST_CASE("import-hf: absent keys take the transformers class's defaults, not MHA") {
  const auto imp = [](const std::string& arch, const std::string& extra) {
    return ImportHfConfig(R"({"architectures": [")" + arch +
                              R"("], "hidden_size": 4096, "num_attention_heads": 32,
        "num_hidden_layers": 4, "intermediate_size": 8192, "vocab_size": 1000)" +
                              extra + "}",
                          "d.json");
  };
  HfImport mistral = imp("MistralForCausalLM", "");
  CHECK(mistral.spec.kv_heads == 8);  // MistralConfig(num_key_value_heads=8)
  CHECK(mistral.yaml.find("kv_heads: 8                           # no num_key_value_heads: "
                          "mistral class default") != std::string::npos);
  CHECK(imp("LlamaForCausalLM", "").spec.kv_heads == 32);  // None: the query heads (MHA)
  CHECK(imp("MistralForCausalLM", R"(, "num_key_value_heads": null)").spec.kv_heads == 32);
  CHECK(imp("Qwen2ForCausalLM", "").spec.kv_heads == 32);
  CHECK(imp("Qwen3MoeForCausalLM", R"(, "moe_intermediate_size": 768, "num_experts": 8,
      "num_experts_per_tok": 2)")
            .spec.kv_heads == 4);
  // head_dim: Qwen3 128 and Gemma 2 256 (not hidden / heads = 128 and 128 here: a
  // narrower model shows it).
  HfImport q3 = ImportHfConfig(R"({"architectures": ["Qwen3ForCausalLM"], "hidden_size": 2048,
      "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 4,
      "intermediate_size": 6144, "vocab_size": 1000})",
                               "q3.json");
  CHECK(q3.spec.head_dim == 128);  // hidden / heads would be 128 too: check the comment
  CHECK(q3.yaml.find("# no head_dim: qwen3 class default") != std::string::npos);
  HfImport g2 = ImportHfConfig(R"({"architectures": ["Gemma2ForCausalLM"], "hidden_size": 2304,
      "num_attention_heads": 8, "num_hidden_layers": 4, "intermediate_size": 9216,
      "vocab_size": 1000})",
                               "g2.json");
  CHECK(g2.spec.head_dim == 256);  // 2304 / 8 = 288 would be wrong
  CHECK(g2.spec.kv_heads == 4);
  // A small Gemma 3 leaves heads, KV heads and head_dim to the text config's
  // defaults (8, 4, 256); a null inside text_config is null, not the root's.
  HfImport g3 = ImportHfConfig(R"({"architectures": ["Gemma3ForConditionalGeneration"],
      "text_config": {"hidden_size": 2560, "num_hidden_layers": 6, "intermediate_size": 10240,
      "sliding_window": 1024, "model_type": "gemma3_text"}, "num_key_value_heads": 2})",
                               "g3.json");
  CHECK(g3.spec.query_heads == 8);
  CHECK(g3.spec.kv_heads == 2);  // a root key still fills what text_config leaves out
  CHECK(g3.spec.head_dim == 256);
  CHECK(g3.yaml.find("# no num_attention_heads: gemma3 class default") != std::string::npos);
  HfImport g3n = ImportHfConfig(R"({"architectures": ["Gemma3ForConditionalGeneration"],
      "text_config": {"hidden_size": 2560, "num_hidden_layers": 6, "intermediate_size": 10240,
      "num_attention_heads": 8, "num_key_value_heads": null}, "num_key_value_heads": 2})",
                                "g3n.json");
  CHECK(g3n.spec.kv_heads == 8);
  // A class default that does not divide the config's own heads is an error,
  // as transformers would build a broken model.
  CHECK_THROWS_WITH(ImportHfConfig(R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584,
      "num_attention_heads": 28, "num_hidden_layers": 4, "intermediate_size": 8192,
      "vocab_size": 1000})",
                                   "q2.json"),
                    "q2.json:2:30: num_attention_heads: 28 heads, and with no num_key_value_heads "
                    "the qwen2 class default of 32 KV heads does not divide them; add "
                    "num_key_value_heads");
  CHECK_THROWS_WITH(ImportHfConfig(R"({"architectures": ["Gemma3ForConditionalGeneration"],
      "text_config": {"hidden_size": 2560, "num_hidden_layers": 6, "intermediate_size": 10240,
      "num_attention_heads": 6, "model_type": "gemma3_text"}})",
                                   "g3.json"),
                    "g3.json:3:30: text_config.num_attention_heads: 6 heads, and with no "
                    "text_config.num_key_value_heads the gemma3 class default of 4 KV heads does "
                    "not divide them; add text_config.num_key_value_heads");
}

TEST_CASE("unknown architectures are refused with the supported list") {
  std::string dir = TempDir();
  std::string path = WriteFile(dir, "config.json",
                               R"({"architectures": ["MambaForCausalLM"], "hidden_size": 768})");
  auto r = RunKvplan("import-hf " + path);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  std::string list;
  for (const std::string& a : SupportedHfArchitectures()) list += (list.empty() ? "" : ", ") + a;
  CHECK(r.err == "kvplan: error: " + path +
                     ": unsupported architecture 'MambaForCausalLM': kvplan "
                     "will not guess its cache layout (supported: " +
                     list +
                     "); write a spec YAML by "
                     "hand (docs/model-spec.md)\n");
  CHECK(list.find("JambaForCausalLM") != std::string::npos);
  // Type errors name the line and column.
  std::string bad = WriteFile(dir, "bad.json",
                              "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": "
                              "2,\n \"hidden_size\": \"big\"}");
  r = RunKvplan("import-hf " + bad);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kvplan: error: " + bad +
                     ":2:17: hidden_size: expected an integer, got the string \"big\"\n");
  // A missing required key says which.
  std::string missing = WriteFile(dir, "missing.json",
                                  R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64})");
  r = RunKvplan("import-hf " + missing);
  CHECK(r.err ==
        "kvplan: error: " + missing + ": LlamaForCausalLM config has no 'num_hidden_layers'\n");
}

TEST_CASE("output that cannot be written is an error (exit 2), not a silent success") {
  if (!std::filesystem::exists("/dev/full")) {
    MESSAGE("skipped: no /dev/full here");
    return;
  }
  const std::string kErr =
      "kvplan: error: cannot write the output to stdout: No space left on device\n";
  for (const std::string& args :
       {"import-hf " + Fixture("qwen3-8b"), std::string("size llama-3.1-8b -c 4K"),
        "check " + SourcePath("examples/llama-8b-chat.yaml") + " --format junit",
        std::string("--help")}) {
    CAPTURE(args);
    const auto r = RunKvplanInto(args, "/dev/full");
    CHECK(r.exit_code == 2);
    CHECK(r.err == kErr);
  }
}

TEST_CASE("import-hf: a config with no architecture, and a text_config that is not a map") {
  CHECK_THROWS_WITH(ImportHfConfig("{}", "c.json"),
                    doctest::Contains("c.json: no architectures or model_type in the config: "
                                      "kvplan will not guess its cache layout (supported: "));
  CHECK_THROWS_WITH(ImportHfConfig("{\"architectures\": [\"Gemma3ForConditionalGeneration\"],\n"
                                   " \"text_config\": []}",
                                   "c.json"),
                    "c.json:2:17: text_config: expected a map (the language model's settings)");
}

TEST_CASE("import-hf: config.json is read as JSON, as Python's json module reads it") {
  // What YAML would read and a JSON parser refuses, at its line and column.
  CHECK_THROWS_WITH(
      ImportHfConfig("{\"architectures\": [\"LlamaForCausalLM\"],\n \"hidden_size\": 64,}",
                     "c.json"),
      "c.json:2:19: malformed JSON: a trailing ',' before '}'");
  CHECK_THROWS_WITH(ImportHfConfig("{\"architectures\": ['LlamaForCausalLM']}", "c.json"),
                    "c.json:1:20: malformed JSON: expected a value, found '''");
  // NaN and Infinity are values (Python writes them), named as written.
  CHECK_THROWS_WITH(
      ImportHfConfig(
          "{\"architectures\": [\"LlamaForCausalLM\"],\n \"num_hidden_layers\": Infinity}",
          "c.json"),
      "c.json:2:23: num_hidden_layers: expected a whole number, got 'Infinity'");
  // Cut short inside a list.
  CHECK_THROWS_WITH(ImportHfConfig("{\"architectures\": [\"LlamaForCausalLM\",\n", "c.json"),
                    "c.json:2:1: malformed JSON: end of sequence flow not found");
}

TEST_CASE("import-hf: a name with a control character is refused naming where it came from") {
  const std::string config = ReadFile(Fixture("qwen3-8b"));
  CHECK_THROWS_WITH(ImportHfConfig(config, "q.json", "a\nb"),
                    "--name: has a control character (U+000A); a name is one line of printable "
                    "text");
  CHECK_THROWS_WITH(ImportHfConfig(config, "q.json",
                                   "a\x01"
                                   "b"),
                    "--name: has a control character (U+0001); a name is one line of printable "
                    "text");
  // _name_or_path becomes hf_repo as it is (the name from it is sanitised).
  std::string bad = config;
  bad.insert(bad.find('{') + 1, "\"_name_or_path\": \"org/a\\nb\", ");
  CHECK_THROWS_WITH(ImportHfConfig(bad, "q.json"),
                    "q.json:1:19: _name_or_path: has a control character (U+000A); a name is one "
                    "line of printable text");
}

TEST_CASE("import-hf: names YAML would read as null, a bool or a number are quoted") {
  for (const std::string name : {"null", "~", "Yes", "off", "123", "1.5b", "+x"}) {
    CAPTURE(name);
    const HfImport imp = ImportHfConfig(ReadFile(Fixture("qwen3-8b")), "qwen3-8b.json", name);
    CHECK(imp.spec.name == name);
    CHECK(imp.yaml.find("\nname: \"" + name + "\"\n") != std::string::npos);
  }
  CHECK(ImportHfConfig(ReadFile(Fixture("qwen3-8b")), "q.json", "my-qwen")
            .yaml.find("\nname: my-qwen\n") != std::string::npos);
}

TEST_CASE("output files: links and devices are not replaced, dangling links count as existing") {
  namespace fs = std::filesystem;
  const std::string dir = TempDir();
  WriteFile(dir, "target.yaml", "keep\n");
  fs::create_symlink("target.yaml", dir + "/link.yaml");
  fs::create_symlink("nowhere.yaml", dir + "/dangling.yaml");
  const std::string run = "import-hf " + Fixture("gpt2") + " -o ";
  auto r = RunKvplan(run + "dangling.yaml", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kvplan: error: dangling.yaml: file exists (use --force to overwrite)\n");
  r = RunKvplan(run + "link.yaml --force", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "kvplan: error: link.yaml: is not a regular file (a symbolic link); kvplan only "
        "writes regular files\n");
  CHECK(fs::is_symlink(dir + "/link.yaml"));
  CHECK(ReadFile(dir + "/target.yaml") == "keep\n");
  CHECK(!fs::exists(dir + "/nowhere.yaml"));
  // A named pipe stands for a device (as root, /dev/null was once replaced
  // by a file; a test must not risk that).
  REQUIRE(mkfifo((dir + "/pipe.yaml").c_str(), 0600) == 0);
  r = RunKvplan(run + "pipe.yaml --force", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "kvplan: error: pipe.yaml: is not a regular file (a device, pipe or socket); "
        "kvplan only writes regular files\n");
  CHECK(fs::is_fifo(dir + "/pipe.yaml"));
  int files = 0;  // no temporary file left behind
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename().string()[0] == '.';
  CHECK(files == 0);
}

TEST_CASE("import-hf writes atomically and never overwrites without --force") {
  std::string dir = TempDir();
  auto r = RunKvplan("import-hf " + Fixture("qwen3-8b"));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("head_dim: 128") != std::string::npos);
  r = RunKvplan("import-hf " + Fixture("qwen3-8b") + " -o out.yaml --name my-qwen", dir);
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  std::string first = ReadFile(dir + "/out.yaml");
  CHECK(first.find("name: my-qwen\n") != std::string::npos);
  r = RunKvplan("import-hf " + Fixture("gpt2") + " -o out.yaml", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kvplan: error: out.yaml: file exists (use --force to overwrite)\n");
  CHECK(ReadFile(dir + "/out.yaml") == first);
  // A new file gets 0666 less the umask, as open(2) would give it.
  namespace fs = std::filesystem;
  const mode_t mask = umask(0);
  umask(mask);
  CHECK(static_cast<mode_t>(fs::status(dir + "/out.yaml").permissions()) == (0666 & ~mask));
  // Overwriting keeps the file's own mode.
  fs::permissions(dir + "/out.yaml", fs::perms::owner_read | fs::perms::owner_write);
  r = RunKvplan("import-hf " + Fixture("gpt2") + " -o out.yaml --force", dir);
  CHECK(r.exit_code == 0);
  CHECK(ReadFile(dir + "/out.yaml").find("name: gpt2\n") != std::string::npos);
  CHECK(fs::status(dir + "/out.yaml").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write));
  // ...but not set-id bits: new content is not made setuid.
  fs::permissions(dir + "/out.yaml", static_cast<fs::perms>(04755));
  r = RunKvplan("import-hf " + Fixture("gpt2") + " -o out.yaml --force", dir);
  CHECK(r.exit_code == 0);
  CHECK(static_cast<unsigned>(fs::status(dir + "/out.yaml").permissions()) == 0755u);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);
  // The written spec is a MODEL like any other, and so is the config itself.
  auto a = RunKvplan("size out.yaml -c 1K --kv-cache-dtype fp16 --format json", dir);
  auto b = RunKvplan("size " + Fixture("gpt2") + " -c 1K --kv-cache-dtype fp16 --format json");
  auto c = RunKvplan("size gpt2 -c 1K --kv-cache-dtype fp16 --format json");
  CHECK(a.exit_code == 0);
  CHECK(b.exit_code == 0);
  CHECK(a.out.find("\"bytes_total\": 37748736") != std::string::npos);
  CHECK(b.out.find("\"bytes_total\": 37748736") != std::string::npos);
  CHECK(c.out.find("\"bytes_total\": 37748736") != std::string::npos);
}

TEST_CASE("models --verify reports every differing field, exit 1; agreement exits 0") {
  auto ok = RunKvplan("models --verify " + SourcePath("models/jamba-v0.1.yaml") + " --against " +
                      Fixture("jamba-v0.1"));
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("agrees with") != std::string::npos);
  std::string dir = TempDir();
  std::string spec = ReadFile(SourcePath("models/llama-3.1-8b.yaml"));
  spec.replace(spec.find("kv_heads: 8 "), 12, "kv_heads: 4 ");
  spec.replace(spec.find("max_context: 131072"), 19, "max_context: 8192  ");
  std::string path = WriteFile(dir, "wrong.yaml", spec);
  auto r = RunKvplan("models --verify wrong.yaml --against " + Fixture("llama-3.1-8b"), dir);
  CHECK(r.exit_code == 1);
  CHECK(r.out == "wrong.yaml:12:11: kv_heads: spec says 4, " + Fixture("llama-3.1-8b") +
                     " says 8\nwrong.yaml:14:14: max_context: spec says 8192, " +
                     Fixture("llama-3.1-8b") +
                     " says 131072\n2 fields differ between wrong.yaml "
                     "and " +
                     Fixture("llama-3.1-8b") + "\n");
  auto j = RunKvplan(
      "models --verify wrong.yaml --against " + Fixture("llama-3.1-8b") + " --format json", dir);
  CHECK(j.exit_code == 1);
  CHECK(j.out.find("\"field\": \"kv_heads\"") != std::string::npos);
  auto bad = RunKvplan("models --verify wrong.yaml", dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "kvplan: error: --verify needs --against config.json\n");
}

TEST_CASE(
    "import-hf from a path with a newline: the path is quoted and escaped, the spec reads back") {
  const std::string dir = TempDir();
  const std::string sub = dir + "/we\nird";
  std::filesystem::create_directories(sub);
  std::filesystem::copy_file(SourcePath("tests/data/hf/falcon-7b.json"), sub + "/config.json");
  kvplan::test::CliResult r = RunKvplan("import-hf 'we\nird/config.json'", dir);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("# Imported by `kvplan import-hf` from \"we\\x0aird/config.json\".\n", 0) == 0);
  CHECK(r.out.find("\nsource: \"we\\x0aird/config.json\"\n") != std::string::npos);
  CHECK(RunKvplan("size 'we\nird/config.json'", dir).exit_code == 0);
}

namespace {

// A hybrid family's config.json: the shared keys plus `extra`.
std::string Hybrid(const std::string& arch, uint64_t layers, const std::string& extra) {
  return fmt::format(
      R"({{"architectures": ["{}"], "hidden_size": 1024, "num_hidden_layers": {},
      "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
      "max_position_embeddings": 8192, "torch_dtype": "bfloat16", "vocab_size": 32000,
      "intermediate_size": 4096, {}}})",
      arch, layers, extra);
}

const LayerGroup& GroupOf(const ModelSpec& s, LayerKind kind) {
  for (const LayerGroup& g : s.groups) {
    if (g.kind == kind) return g;
  }
  FAIL("no group of kind " << LayerKindName(kind));
  throw;
}

}  // namespace

TEST_CASE("import-hf: Qwen3-Next and Qwen3.5, Gated DeltaNet from the linear_* keys") {
  const std::string gdn =
      R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
      "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 64,
      "linear_value_head_dim": 64, "linear_conv_kernel_dim": 4)";
  // full_attention_interval 4: layers 3 and 7 attend, six keep a state.
  const HfImport a = ImportHfConfig(
      Hybrid("Qwen3NextForCausalLM", 8, gdn + R"(, "full_attention_interval": 4)"), "qn.json");
  const LayerGroup& full = GroupOf(a.spec, LayerKind::kFull);
  CHECK(full.every == 4);
  CHECK(full.offset == 3);
  const LayerGroup& st = GroupOf(a.spec, LayerKind::kState);
  CHECK(st.layers == 6);
  CHECK(st.state_form == StateForm::kGatedDeltaNet);
  // conv (2 x 4 x 64 + 8 x 64) x 3 + recurrent 8 x 64 x 64, bf16.
  CHECK(st.state_bytes == ((512 + 512) * 3 + 32768) * 2);
  CHECK(a.yaml.find("linear_attention:") != std::string::npos);
  // Qwen3.5: layer_types and an fp32 SSM state (mamba_ssm_dtype).
  const HfImport b = ImportHfConfig(
      Hybrid("Qwen3_5MoeForConditionalGeneration", 4,
             gdn + R"(, "mamba_ssm_dtype": "float32", "layer_types": ["linear_attention",
             "linear_attention", "linear_attention", "full_attention"])"),
      "q35.json");
  CHECK(GroupOf(b.spec, LayerKind::kState).state_bytes == (512 + 512) * 3 * 2 + 32768 * 4);
  CHECK(b.yaml.find("state_dtype: fp32") != std::string::npos);
  // A layer type with no cache form is an error naming it.
  CHECK_THROWS_WITH(
      ImportHfConfig(Hybrid("Qwen3NextForCausalLM", 2,
                            gdn + R"(, "layer_types": ["full_attention", "kda_attention"])"),
                     "bad.json"),
      doctest::Contains("layer type 'kda_attention' has no cache form in kvplan"));
}

TEST_CASE("import-hf: Nemotron-H's hybrid_override_pattern: Mamba-2, attention, MLP only") {
  const std::string m2 =
      R"("mamba_num_heads": 16, "mamba_head_dim": 64, "n_groups": 2, "ssm_state_size": 32,
      "conv_kernel": 4, "attention_head_dim": 128, "hybrid_override_pattern": "M-M*-M-M")";
  const HfImport h = ImportHfConfig(Hybrid("NemotronHForCausalLM", 8, m2), "nh.json");
  const ModelSpec& s = h.spec;
  CHECK(s.LayerToGroup().size() == 8);
  CHECK(s.GroupLayers(0) != s.GroupLayers(1));
  CHECK(GroupOf(s, LayerKind::kFull).layers == 1);
  CHECK(GroupOf(s, LayerKind::kNone).layers == 3);
  const LayerGroup& st = GroupOf(s, LayerKind::kState);
  CHECK(st.layers == 4);
  // conv (16 x 64 + 2 x 2 x 32) x 3 in bf16 + SSM 16 x 64 x 32 in fp32: the config names no
  // mamba_ssm_cache_dtype, so vLLM's NemotronH default (float32) holds.
  CHECK(st.state_bytes == (1024 + 128) * 3 * 2 + 32768 * 4);
  CHECK(st.state_dtype_bytes == 4);
  CHECK(h.yaml.find("state_dtype: fp32") != std::string::npos);
  CHECK(h.yaml.find("vLLM's NemotronH default") != std::string::npos);
  // A config that names bfloat16 keeps it.
  const HfImport bf = ImportHfConfig(
      Hybrid("NemotronHForCausalLM", 8, m2 + R"(, "mamba_ssm_cache_dtype": "bfloat16")"),
      "nh.json");
  CHECK(GroupOf(bf.spec, LayerKind::kState).state_bytes == ((1024 + 128) * 3 + 32768) * 2);
  CHECK(s.mlp == "plain");
  // One block per layer: a Mamba-2 layer (0) has no MLP, an MLP-only layer (1) has one.
  CHECK_FALSE(s.mixer_mlp);
  const ModelTensors t = BuildModelTensors(s);
  const auto has_mlp = [&](uint64_t layer) {
    for (const WeightTensor& w : t.layers[layer]) {
      if (w.part == TensorPart::kMlp) return true;
    }
    return false;
  };
  CHECK_FALSE(has_mlp(0));
  CHECK(has_mlp(1));
  CHECK(h.yaml.find("mixer_mlp: false") != std::string::npos);
  // The pattern is not periodic: the spec lists layers, and reads back the same.
  CHECK(h.yaml.find("at: [") != std::string::npos);
  CHECK_THROWS_WITH(ImportHfConfig(Hybrid("NemotronHForCausalLM", 8,
                                          R"("mamba_num_heads": 16, "mamba_head_dim": 64,
      "n_groups": 2, "ssm_state_size": 32, "conv_kernel": 4, "hybrid_override_pattern": "M-M*-MX-")"),
                                   "nh.json"),
                    doctest::Contains("hybrid_override_pattern[6] is 'X', a block kvplan has no "
                                      "cache form for"));
}

TEST_CASE("import-hf: granite-4.0-h, Falcon-H1 and MiniMax-M1") {
  const std::string mamba =
      R"("mamba_n_heads": 16, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 32,
      "mamba_d_conv": 4)";
  const HfImport g =
      ImportHfConfig(Hybrid("GraniteMoeHybridForCausalLM", 4,
                            mamba + R"(, "num_local_experts": 4, "num_experts_per_tok": 2,
             "layer_types": ["mamba", "mamba", "attention", "mamba"])"),
                     "granite.json");
  CHECK(GroupOf(g.spec, LayerKind::kFull).layers == 1);
  CHECK(GroupOf(g.spec, LayerKind::kState).state_bytes == ((1024 + 64) * 3 + 32768) * 2);
  // Falcon-H1: every layer attends and keeps a Mamba-2 state beside it.
  const HfImport f = ImportHfConfig(
      Hybrid("FalconH1ForCausalLM", 4, mamba + R"(, "mamba_d_ssm": 1024)"), "falcon.json");
  CHECK(GroupOf(f.spec, LayerKind::kFull).layers == 4);
  CHECK(GroupOf(f.spec, LayerKind::kState).parallel);
  CHECK(f.yaml.find("parallel: true") != std::string::npos);
  // Its weights count the Mamba-2 mixer beside each layer's attention: in_proj (1024 + 1088 +
  // 16) x 1024, conv 1088 x 5, 3 x 16 per-head values, a 1024 norm and out_proj 1024 x 1024.
  ModelSpec attention_only = f.spec;
  attention_only.groups.pop_back();
  CHECK(CountParams(BuildModelTensors(f.spec)) - CountParams(BuildModelTensors(attention_only)) ==
        4 * (2128 * 1024 + 1088 * 5 + 48 + 1024 + 1024 * 1024));
  CHECK_THROWS_WITH(
      ImportHfConfig(Hybrid("FalconH1ForCausalLM", 4, mamba + R"(, "mamba_d_ssm": 2048)"),
                     "falcon.json"),
      doctest::Contains("mamba_d_ssm 2048 is not mamba_n_heads x mamba_d_head = 1024"));
  // MiniMax: one softmax layer in four, lightning (8 heads x 128 x 128) on the rest.
  const HfImport x = ImportHfConfig(
      Hybrid("MiniMaxM1ForCausalLM", 4, R"("num_local_experts": 4, "num_experts_per_tok": 2,
             "attn_type_list": [0, 0, 0, 1])"),
      "minimax.json");
  CHECK(GroupOf(x.spec, LayerKind::kState).state_bytes == 8 * 128 * 128 * 2);
  CHECK(GroupOf(x.spec, LayerKind::kFull).offset == 3);
}

TEST_CASE("import-hf: DeepSeek-V3.2's indexer keys beside the MLA latent") {
  const HfImport d = ImportHfConfig(
      R"({"architectures": ["DeepseekV32ForCausalLM"], "hidden_size": 1024,
      "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8,
      "max_position_embeddings": 8192, "torch_dtype": "bfloat16", "vocab_size": 32000,
      "intermediate_size": 4096, "n_routed_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 256, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
      "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 256, "index_n_heads": 8,
      "index_head_dim": 128, "index_topk": 2048})",
      "v32.json");
  CHECK(d.spec.mla->index_head_dim == 128);
  CHECK(d.spec.mla->index_topk == 2048);
  CHECK(d.yaml.find("index_topk: 2048") != std::string::npos);
}

TEST_CASE("import-hf: num_key_value_heads as a per-layer list, 0 for a layer without attention") {
  const HfImport h = ImportHfConfig(
      R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 4,
      "num_attention_heads": 8, "num_key_value_heads": [8, 2, 0, 2], "head_dim": 128,
      "max_position_embeddings": 8192, "torch_dtype": "bfloat16", "vocab_size": 32000,
      "intermediate_size": 4096})",
      "kv-list.json");
  const ModelSpec& s = h.spec;
  CHECK(s.kv_heads == 8);
  // 8 x 128 x 2 x 2 B + 2 x (2 x 128 x 2 x 2 B): layer 2 keeps nothing.
  CHECK(ComputeKvCost(s, FindCacheDtype("bf16")).per_token_bytes == 4096 + 2 * 1024);
  CHECK(s.groups[s.LayerToGroup()[2]].kind == LayerKind::kNone);
  CHECK(h.yaml.find("kv_heads: 2") != std::string::npos);
  CHECK_THROWS_WITH(ImportHfConfig(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 1024,
      "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": [8, 3],
      "vocab_size": 32000, "intermediate_size": 4096})",
                                   "kv-list.json"),
                    doctest::Contains("num_key_value_heads[1]: 3 KV heads do not divide the 8 "
                                      "query heads"));
}

namespace {

// A Llama-4 text config of `layers` layers with `extra` keys (a JSON fragment).
std::string Llama4(uint64_t layers, const std::string& extra) {
  return fmt::format(
      R"({{"architectures": ["Llama4ForConditionalGeneration"], "text_config": {{
      "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
      "num_hidden_layers": {}, "intermediate_size": 256, "intermediate_size_mlp": 1024,
      "num_local_experts": 4, "vocab_size": 1000, "torch_dtype": "bfloat16"{}}}}})",
      layers, extra.empty() ? "" : ", " + extra);
}

}  // namespace

TEST_CASE("import-hf: Llama-4's chunked RoPE layers and global NoPE layers, MoE interleaved") {
  // Maverick (the fixture): no_rope_layers [1, 1, 1, 0] x 12 -- 1 is RoPE with chunked
  // attention over attention_chunk_size 8192, 0 a global layer; moe_layers the odd layers, the
  // even ones dense at intermediate_size_mlp 16384.
  const HfImport mav = ImportHfConfigFile(Fixture("llama-4-maverick-17b-128e-instruct"));
  CHECK(GroupOf(mav.spec, LayerKind::kFull).layers == 12);
  CHECK(GroupOf(mav.spec, LayerKind::kChunked).window == 8192);
  REQUIRE(mav.spec.moe);
  CHECK(mav.spec.moe->period == 2);
  CHECK(mav.spec.moe->offset == 1);
  CHECK(mav.spec.moe->shared_experts == 1);
  CHECK(mav.spec.intermediate_size == 16384);
  CHECK(mav.yaml.find("intermediate_size_mlp: the dense layers' MLP (24 of 48 layers are MoE)") !=
        std::string::npos);
  // Without the lists, transformers derives them: every no_rope_layer_interval-th layer (i + 1)
  // is NoPE, every interleave_moe_layer_step-th layer (range(step - 1, L, step)) is MoE.
  const HfImport derived =
      ImportHfConfig(Llama4(12, R"("attention_chunk_size": 1024, "no_rope_layer_interval": 3,
      "interleave_moe_layer_step": 3)"),
                     "l4.json");
  const LayerGroup& full = GroupOf(derived.spec, LayerKind::kFull);
  CHECK(full.layers == 4);
  CHECK(full.every == 3);
  CHECK(full.offset == 2);
  CHECK(GroupOf(derived.spec, LayerKind::kChunked).window == 1024);
  CHECK(derived.spec.moe->period == 3);
  CHECK(derived.spec.moe->offset == 2);
  CHECK(derived.spec.intermediate_size == 1024);
  // The class defaults: interval 4, step 1 (every layer MoE, so the dense width is unused).
  const HfImport defaults = ImportHfConfig(Llama4(8, R"("attention_chunk_size": 8192)"), "l4.json");
  CHECK(GroupOf(defaults.spec, LayerKind::kFull).layers == 2);
  CHECK(defaults.spec.moe->period == 1);
  CHECK(defaults.spec.intermediate_size == 256);
  // No chunk size: every layer global. An empty moe_layers: every layer dense.
  const HfImport dense = ImportHfConfig(Llama4(8, R"("moe_layers": [])"), "l4.json");
  REQUIRE(dense.spec.groups.size() == 1);
  CHECK(dense.spec.groups[0].kind == LayerKind::kFull);
  CHECK_FALSE(dense.spec.moe);
  CHECK(dense.spec.intermediate_size == 1024);
  // What a spec cannot say is refused, naming the key.
  CHECK_THROWS_WITH(
      ImportHfConfig(Llama4(8, R"("moe_layers": [1, 2, 5])"), "l4.json"),
      doctest::Contains("text_config.moe_layers: the MoE layers are not every N-th layer"));
  CHECK_THROWS_WITH(ImportHfConfig(Llama4(4, R"("attention_chunk_size": 8192,
      "no_rope_layers": [1, 1, 2, 0])"),
                                   "l4.json"),
                    doctest::Contains("text_config.no_rope_layers[2]: expected 1 (RoPE, chunked) "
                                      "or 0 (NoPE, global), got 2"));
  CHECK_THROWS_WITH(ImportHfConfig(Llama4(4, R"("attention_chunk_size": 8192,
      "no_rope_layers": [1, 0])"),
                                   "l4.json"),
                    doctest::Contains("text_config.no_rope_layers: expected a list of 4 flags"));
  CHECK_THROWS_WITH(ImportHfConfig(Llama4(4, R"("interleave_moe_layer_step": 0)"), "l4.json"),
                    doctest::Contains("text_config.interleave_moe_layer_step: 0 is not a layer "
                                      "period"));
}

TEST_CASE("models --verify compares the state forms, per-layer KV heads and parallel mixers") {
  ModelSpec a = LoadModel("falcon-h1-0.5b-instruct");
  ModelSpec b = a;
  CHECK(DiffSpecs(a, b).empty());
  b.mamba->groups = 2;
  b.mixer_mlp = false;
  std::vector<std::string> fields;
  for (const FieldDiff& d : DiffSpecs(a, b)) fields.push_back(d.field);
  CHECK(fields == std::vector<std::string>{"mamba.groups", "mixer_mlp"});
  // A parallel state group is part of each layer it sits beside.
  ModelSpec c = a;
  for (LayerGroup& g : c.groups) {
    if (g.parallel) g.state_bytes += 2;
  }
  const std::vector<FieldDiff> layers = DiffSpecs(a, c);
  REQUIRE(layers.size() == 1);
  CHECK(layers[0].field == "layer_groups");
  CHECK(layers[0].config_value.find("36 layers differ") != std::string::npos);
  // A group's own head width (Gemma 4's global layers) is part of its layers.
  ModelSpec g4 = LoadModel("gemma-4-31b-it");
  ModelSpec g4b = g4;
  for (LayerGroup& g : g4b.groups) {
    if (g.kind == LayerKind::kFull) g.head_dim = 256;
  }
  REQUIRE(DiffSpecs(g4, g4b).size() == 1);
  CHECK(DiffSpecs(g4, g4b)[0].spec_value.find("(K 512 wide)") != std::string::npos);
  ModelSpec q = LoadModel("qwen3-next-80b-a3b-instruct");
  ModelSpec r = q;
  r.linear_attention->value_heads = 16;
  REQUIRE(DiffSpecs(q, r).size() == 1);
  CHECK(DiffSpecs(q, r)[0].field == "linear_attention.value_heads");
  // The stored layout is part of the quantization: plain int8 (fp32 row scales) is not
  // compressed-tensors' (16-bit ones).
  const HfImport ct =
      ImportHfConfigFile(SourcePath("tests/data/hf/tinyllama-1.1b-chat-v1.0-w8a16-e2e.json"));
  ModelSpec plain = ct.spec;
  plain.quantization->scheme.clear();
  REQUIRE(DiffSpecs(plain, ct.spec).size() == 1);
  CHECK(DiffSpecs(plain, ct.spec)[0].field == "quantization");
  CHECK(DiffSpecs(plain, ct.spec)[0].config_value == "int8 (ct-w8a16)");
}

TEST_CASE("import-hf: Gemma 4's global layers of their own width and KV heads, shared layers") {
  // The 26B-A4B (the fixture): 25 sliding layers of 8 KV heads x 256 over 1,024 tokens, 5 full
  // layers of 2 global KV heads x 512 whose values come from k_proj (attention_k_eq_v).
  const HfImport g = ImportHfConfigFile(Fixture("gemma-4-26b-a4b-it-4bit-mlx"));
  const LayerGroup& full = GroupOf(g.spec, LayerKind::kFull);
  CHECK(full.kv_heads == 2);
  CHECK(full.head_dim == 512);
  CHECK(full.k_eq_v);
  CHECK(GroupOf(g.spec, LayerKind::kSliding).window == 1024);
  // K and V are both cached: 5 x 2 x 2 x 512 x 2 B + 25 x 2 x 8 x 256 x 2 B a token.
  CHECK(ComputeKvCost(g.spec, FindCacheDtype("bf16"), 1).per_token_bytes == 20'480 + 204'800);
  // The dense MLP beside the experts: intermediate_size 2112 = 3 shared experts of 704.
  REQUIRE(g.spec.moe);
  CHECK(g.spec.moe->shared_experts == 3);
  CHECK(g.yaml.find("k_eq_v: true") != std::string::npos);
  CHECK(g.yaml.find("head_dim: 512") != std::string::npos);
  // An E4B-shaped config: no layer_types (five sliding to one full, the last full), no k_eq_v
  // (full layers keep the model's 2 KV heads at global_head_dim 512), the last 18 of 42
  // layers reuse earlier layers' cache.
  const HfImport e = ImportHfConfig(
      R"({"architectures": ["Gemma4ForConditionalGeneration"], "text_config": {
      "hidden_size": 2560, "num_attention_heads": 8, "num_key_value_heads": 2,
      "num_hidden_layers": 42, "intermediate_size": 10240, "sliding_window": 512,
      "num_kv_shared_layers": 18, "hidden_size_per_layer_input": 256, "dtype": "bfloat16"}})",
      "e4b.json");
  CHECK(GroupOf(e.spec, LayerKind::kShared).layers == 18);
  CHECK(GroupOf(e.spec, LayerKind::kFull).layers == 4);  // 5, 11, 17, 23
  CHECK(GroupOf(e.spec, LayerKind::kSliding).layers == 20);
  CHECK(GroupOf(e.spec, LayerKind::kFull).head_dim == 512);
  CHECK_FALSE(GroupOf(e.spec, LayerKind::kFull).k_eq_v);
  // 4 x 2 x 2 x 512 x 2 B + 20 x 2 x 2 x 256 x 2 B = 16 KiB + 40 KiB a token.
  CHECK(ComputeKvCost(e.spec, FindCacheDtype("bf16"), 1).per_token_bytes == 16'384 + 40'960);
  CHECK(e.yaml.find("per-layer input embeddings and double-wide MLPs are not counted") !=
        std::string::npos);
  CHECK_THROWS_WITH(ImportHfConfig(
                        R"({"architectures": ["Gemma4ForCausalLM"], "hidden_size": 512,
      "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 4,
      "intermediate_size": 1024, "num_kv_shared_layers": 4})",
                        "g4.json"),
                    doctest::Contains("num_kv_shared_layers: 4 shared layers leave none of the 4 "
                                      "layers to keep a cache"));
  CHECK_THROWS_WITH(ImportHfConfig(
                        R"({"architectures": ["Gemma4ForCausalLM"], "hidden_size": 512,
      "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 4,
      "intermediate_size": 1000, "enable_moe_block": true, "num_experts": 8, "top_k_experts": 2,
      "moe_intermediate_size": 300})",
                        "g4.json"),
                    doctest::Contains("is not a whole number of experts"));
}
