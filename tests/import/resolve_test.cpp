// The resolution order's pieces without a network: derivative names, the
// Hugging Face cache layout, the readers of what the Hub serves, the token
// file, and ResolveModel over a cache folder the test writes.
#include "import/resolve.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "cli_runner.h"
#include "import/derivative_names.h"
#include "import/hf_cache.h"
#include "import/hub_client.h"
#include "plan/kv.h"
#include "util/error.h"

using namespace kvplan;
using kvplan::test::ReadFile;
using kvplan::test::SourcePath;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for one scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const std::string kCommit = "0e9e39f249a16976918f6564b8830bc894c89659";

// A cache folder holding `repo` at refs/main with `fixture` as config.json.
std::string CacheWith(const std::string& repo, const std::string& fixture) {
  const std::string hub = TempDir();
  StoreSnapshot(hub, repo, "main", kCommit,
                {{"config.json", ReadFile(SourcePath("tests/data/hf/" + fixture + ".json"))}});
  return hub;
}

}  // namespace

TEST_CASE("derivative names map to their catalog base") {
  struct Case {
    const char* name;
    const char* base;
    const char* quant;  // "" when the name gives no weight format
  };
  const Case cases[] = {
      {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", ""},
      {"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b", ""},
      {"meta-llama/Llama-3.3-70B", "llama-3.3-70b", ""},
      {"unsloth/DeepSeek-R1-0528", "deepseek-r1", ""},
      {"meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b", ""},
      {"Qwen/Qwen3-8B-FP8", "qwen3-8b", "fp8"},
      {"hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "llama-3.1-70b", "int4"},
      {"neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "llama-3.1-8b", "fp8"},
      {"Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "qwen2.5-7b", "int4"},
      {"RedHatAI/Llama-3.1-8B-Instruct-quantized.w8a8", "llama-3.1-8b", "int8"},
      {"meta-llama/Llama-2-7b-chat-hf", "llama-2-7b", ""},
      {"google/gemma-2-9b-it", "gemma-2-9b", ""},
      {"nvidia/Llama-3.1-8B-Instruct-NVFP4", "llama-3.1-8b", "nvfp4"},
      {"llama-3.1-8b-instruct", "llama-3.1-8b", ""},
      {"bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "llama-3.1-8b", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::optional<Derivative> d = MatchDerivative(c.name);
    REQUIRE(d);
    CHECK(d->base == c.base);
    CHECK(d->spec.name == c.name);
    if (*c.quant) {
      REQUIRE(d->spec.quantization);
      CHECK(d->spec.quantization->format == c.quant);
      CHECK(d->note.find("suffix") != std::string::npos);
    }
    CHECK(d->note.find(c.base) != std::string::npos);
  }
  CHECK(MatchDerivative("Qwen/Qwen3-8B-FP8")->quant_suffix == "-FP8");
  // llm-compressor's names say the stored layout too.
  CHECK(
      MatchDerivative("RedHatAI/Llama-3.1-8B-Instruct-quantized.w8a8")->spec.quantization->scheme ==
      "ct-w8a8");
  CHECK(MatchDerivative("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8-dynamic")
            ->spec.quantization->scheme == "fp8-channel");
  CHECK(MatchDerivative("Qwen/Qwen3-8B-FP8")->spec.quantization->scheme.empty());
  // The geometry is the base's: the same cache bytes per token.
  const ModelSpec base = LoadModel("llama-3.1-70b");
  const ModelSpec d = MatchDerivative("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")->spec;
  CHECK(ComputeKvCost(d, FindCacheDtype("fp16"), 1).per_token_bytes ==
        ComputeKvCost(base, FindCacheDtype("fp16"), 1).per_token_bytes);
  // Nothing but a suffix, or an unknown base, is no derivative.
  CHECK_FALSE(MatchDerivative("foo/bar"));
  CHECK_FALSE(MatchDerivative("acme/Llama-9-8B-Instruct"));
  CHECK_FALSE(MatchDerivative("-Instruct"));
  CHECK_FALSE(MatchDerivative(""));
}

TEST_CASE("the Hugging Face cache layout: repo ids, refs, folder names") {
  CHECK(IsHfRepoId("meta-llama/Llama-3.1-8B-Instruct"));
  CHECK(IsHfRepoId("Qwen/Qwen2.5-7B"));
  CHECK_FALSE(IsHfRepoId("llama-3.1-8b"));
  CHECK_FALSE(IsHfRepoId("a/b/c"));
  CHECK_FALSE(IsHfRepoId("../x"));
  CHECK_FALSE(IsHfRepoId("a/.."));
  CHECK_FALSE(IsHfRepoId("a--b/c"));
  CHECK_FALSE(IsHfRepoId("a/b c"));
  CHECK_FALSE(IsHfRepoId("/b"));
  CHECK(HfRepoFolderName("meta-llama/Llama-3.1-8B") == "models--meta-llama--Llama-3.1-8B");
  CHECK(RepoIdFromFolderName("models--meta-llama--Llama-3.1-8B") == "meta-llama/Llama-3.1-8B");
  CHECK_FALSE(RepoIdFromFolderName("datasets--a--b"));
  CHECK_FALSE(RepoIdFromFolderName("models--ab"));
  CHECK(ParseRefText(kCommit + "\n") == kCommit);
  CHECK_FALSE(ParseRefText("main"));
  CHECK_FALSE(ParseRefText(kCommit + "0"));
  CHECK_FALSE(ParseRefText(""));
  CHECK(IsHfRevision("main"));
  CHECK(IsHfRevision("v1.0"));
  CHECK(IsHfRevision(kCommit));
  CHECK_FALSE(IsHfRevision("../main"));
  CHECK_FALSE(IsHfRevision("a/b"));
  CHECK_FALSE(IsHfRevision(""));
}

TEST_CASE("the cache folder: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache") {
  {
    ScopedEnv a("HF_HUB_CACHE", "/x/hub");
    CHECK(HfHubCacheDir() == "/x/hub");
  }
  ScopedEnv a("HF_HUB_CACHE", std::nullopt);
  {
    ScopedEnv b("HF_HOME", "/y");
    CHECK(HfHubCacheDir() == "/y/hub");
  }
  ScopedEnv b("HF_HOME", std::nullopt);
  ScopedEnv c("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv d("HOME", "/home/u");
  CHECK(HfHubCacheDir() == "/home/u/.cache/huggingface/hub");
}

TEST_CASE("a cached snapshot is found by refs/<revision> or by commit") {
  const std::string hub = CacheWith("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct");
  const std::string root = hub + "/models--meta-llama--Llama-3.1-8B-Instruct";
  CHECK(ReadFile(root + "/refs/main") == kCommit);
  CHECK(fs::is_regular_file(root + "/snapshots/" + kCommit + "/config.json"));
  auto snap = FindCachedSnapshot(hub, "meta-llama/Llama-3.1-8B-Instruct", "main");
  REQUIRE(snap);
  CHECK(snap->commit == kCommit);
  CHECK(FindCachedSnapshot(hub, "meta-llama/Llama-3.1-8B-Instruct", kCommit));
  CHECK_FALSE(FindCachedSnapshot(hub, "meta-llama/Llama-3.1-8B-Instruct", "v2"));
  CHECK_FALSE(FindCachedSnapshot(hub, "meta-llama/Llama-3.1-8B", "main"));
  CHECK(CachedRepoIds(hub) == std::vector<std::string>{"meta-llama/Llama-3.1-8B-Instruct"});
  // A damaged refs file is an error naming it, not a silent miss.
  WriteFile(root + "/refs", "main", "not a commit\n");
  CHECK_THROWS_WITH_AS(FindCachedSnapshot(hub, "meta-llama/Llama-3.1-8B-Instruct", "main"),
                       doctest::Contains("refs/main: expected a 40-hex-digit commit hash"), Error);
  // No temporary file is left beside what was stored.
  for (const auto& e : fs::recursive_directory_iterator(hub)) {
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  }
}

TEST_CASE("StoreSnapshot refuses names it must not write") {
  const std::string hub = TempDir();
  CHECK_THROWS_AS(StoreSnapshot(hub, "a/b", "main", kCommit, {{"../x", "1"}}), Error);
  CHECK_THROWS_AS(StoreSnapshot(hub, "a/b", "main", kCommit, {{".hidden", "1"}}), Error);
  CHECK_THROWS_AS(StoreSnapshot(hub, "a/b", "main", "abc", {{"config.json", "{}"}}), Error);
  CHECK_THROWS_AS(StoreSnapshot(hub, "a/b/c", "main", kCommit, {{"config.json", "{}"}}), Error);
  CHECK_THROWS_AS(StoreSnapshot(hub, "a/b", "../x", kCommit, {{"config.json", "{}"}}), Error);
  CHECK(fs::is_empty(hub));
}

TEST_CASE("ResolveModel: the local cache, then a derivative name offline") {
  const std::string hub = CacheWith("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct");
  ScopedEnv cache("HF_HUB_CACHE", hub);
  ScopedEnv offline("HF_HUB_OFFLINE", "1");
  ResolvedModel r = ResolveModel("meta-llama/Llama-3.1-8B-Instruct");
  CHECK(r.kind == ModelRoute::kCache);
  CHECK(r.route ==
        "model: meta-llama/Llama-3.1-8B-Instruct, config.json from the local Hugging Face cache, "
        "snapshot 0e9e39f");
  CHECK(r.spec.name == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(r.spec.hf_repo == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(ComputeKvCost(r.spec, FindCacheDtype("fp16"), 1).per_token_bytes == 131072);
  // --revision: a revision the cache does not hold falls through to the next step.
  ResolveOptions v2;
  v2.revision = "v2";
  CHECK(ResolveModel("meta-llama/Llama-3.1-8B-Instruct", v2).kind == ModelRoute::kDerivative);
  // Not cached, offline: the derivative name's base, with a note.
  ResolvedModel d = ResolveModel("Qwen/Qwen3-8B-FP8");
  CHECK(d.kind == ModelRoute::kDerivative);
  CHECK(d.route == "model: Qwen/Qwen3-8B-FP8, catalog model qwen3-8b assumed from the name");
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].find("HF_HUB_OFFLINE") != std::string::npos);
  CHECK(d.notes[0].find("-FP8 suffix") != std::string::npos);
  // Neither: an error naming the ways to supply it.
  CHECK_THROWS_WITH_AS(ResolveModel("foo/bar"),
                       doctest::Contains("`huggingface-cli download foo/bar config.json`"), Error);
  // The catalog and paths come first, unchanged.
  CHECK(ResolveModel("meta-llama/Llama-3.1-8B").kind == ModelRoute::kCatalog);
  CHECK(ResolveModel(SourcePath("tests/data/hf/qwen3-8b-fp8.json")).kind ==
        ModelRoute::kConfigFile);
  CHECK_FALSE(RouteIsIndirect(ModelRoute::kCatalog));
  CHECK(RouteIsIndirect(ModelRoute::kCache));
}

TEST_CASE("the readers of what the Hub serves") {
  CHECK(ParseSafetensorsIndexShards(
            R"({"metadata":{"total_size":10},"weight_map":{"a":"m-1.safetensors",)"
            R"("b":"m-2.safetensors","c":"m-1.safetensors"}})",
            "idx") == std::vector<std::string>{"m-1.safetensors", "m-2.safetensors"});
  CHECK_THROWS_WITH_AS(
      ParseSafetensorsIndexShards(R"({"weight_map":{"a":"../x.safetensors"}})", "idx"),
      doctest::Contains("is not a .safetensors file of the repo"), Error);
  CHECK_THROWS_AS(ParseSafetensorsIndexShards(R"({"weight_map":{}})", "idx"), Error);
  CHECK_THROWS_AS(ParseSafetensorsIndexShards("[1]", "idx"), Error);
  CHECK_THROWS_AS(ParseSafetensorsIndexShards("{", "idx"), Error);
  CHECK(ParseSafetensorsHeaderLength(std::string("\x10\x00\x00\x00\x00\x00\x00\x00", 8), "h") ==
        16);
  CHECK_THROWS_AS(ParseSafetensorsHeaderLength("1234567", "h"), Error);
  CHECK_THROWS_AS(ParseSafetensorsHeaderLength(std::string(8, '\xff'), "h"), Error);
  CHECK_NOTHROW(CheckSafetensorsHeaderJson(R"({"__metadata__":{}})", "h"));
  CHECK_THROWS_AS(CheckSafetensorsHeaderJson("[]", "h"), Error);
  CHECK(ParseRevisionSha(R"({"id":"a/b","sha":")" + kCommit + "\"}", "api") == kCommit);
  CHECK_THROWS_AS(ParseRevisionSha(R"({"sha":"main"})", "api"), Error);
}

TEST_CASE("the token: HF_TOKEN, else the token file; never echoed") {
  CHECK(ParseTokenText("  hf_abc\n", "f") == "hf_abc");
  CHECK_FALSE(ParseTokenText("\n", "f"));
  CHECK_THROWS_WITH_AS(ParseTokenText("hf_a b", "f"),
                       "f: not a Hugging Face token (one word of printable ASCII, at most 1024 "
                       "bytes)",
                       Error);
  CHECK_THROWS_AS(ParseTokenText(std::string(2000, 'a'), "f"), Error);
  const std::string dir = TempDir();
  ScopedEnv token("HF_TOKEN", std::nullopt);
  ScopedEnv path("HF_TOKEN_PATH", WriteFile(dir, "token", "hf_secret\n"));
  HubSettings s = HubSettingsFromEnv();
  CHECK(s.token == "hf_secret");
  CHECK(s.token_from == dir + "/token");
  {
    ScopedEnv t("HF_TOKEN", "hf_env");
    CHECK(HubSettingsFromEnv().token == "hf_env");
  }
  {
    ScopedEnv bad("HF_TOKEN_PATH", WriteFile(dir, "bad", std::string("hf\x01secret", 9)));
    CHECK_THROWS_WITH_AS(HubSettingsFromEnv(), doctest::Contains("/bad: not a Hugging Face token"),
                         Error);
  }
  ScopedEnv ep("HF_ENDPOINT", "https://hub.example/");
  CHECK(HubSettingsFromEnv().endpoint == "https://hub.example");
  {
    ScopedEnv bad("HF_ENDPOINT", "ftp://x");
    CHECK_THROWS_AS(HubSettingsFromEnv(), Error);
  }
  ScopedEnv t("KVPLAN_HUB_TIMEOUT", "0");
  CHECK_THROWS_AS(HubSettingsFromEnv(), Error);
  CHECK(EnvFlagTrue("1"));
  CHECK(EnvFlagTrue("TRUE"));
  CHECK_FALSE(EnvFlagTrue("0"));
  CHECK_FALSE(EnvFlagTrue(""));
}
