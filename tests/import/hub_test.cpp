// kvplan against a fake Hub (tests/fake_hub.py) on 127.0.0.1: the six
// "where it stands" command lines of issue 37 from the Hub and then from the
// cache it filled, offline by derivative name, and every failure as one
// error line within a bounded time with nothing written in the cache. No
// test reaches any other address.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"

using kvplan::test::CliResult;
using kvplan::test::LineCount;
using kvplan::test::ReadFile;
using kvplan::test::RunKvplan;
using kvplan::test::SourcePath;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;
namespace fs = std::filesystem;

namespace {

// A safetensors file of `tensors` bf16 tensors of 2x3 (12 bytes each).
std::string Safetensors(int tensors, const std::string& prefix) {
  std::string json = "{";
  for (int i = 0; i < tensors; ++i) {
    if (i) json += ",";
    json += "\"" + prefix + std::to_string(i) + ".weight\":{\"dtype\":\"BF16\",\"shape\":[2,3]," +
            "\"data_offsets\":[" + std::to_string(12 * i) + "," + std::to_string(12 * (i + 1)) +
            "]}";
  }
  json += "}";
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + json + std::string(12 * tensors, '\x11');
}

// The fake Hub process, serving repos from a temporary folder.
class FakeHub {
 public:
  FakeHub() : root_(TempDir()), io_(TempDir()) {
    const std::string cmd = "python3 '" + SourcePath("tests/fake_hub.py") + "' --root '" + root_ +
                            "' --port-file '" + io_ + "/port' --log '" + io_ +
                            "/log' --lifetime 300 >/dev/null 2>&1 & echo $! >'" + io_ + "/pid'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    for (int i = 0; i < 600 && !fs::exists(io_ + "/port"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    port_ = ReadFile(io_ + "/port");
    REQUIRE(!port_.empty());
  }
  ~FakeHub() {
    const std::string pid = ReadFile(io_ + "/pid");
    if (!pid.empty()) kill(static_cast<pid_t>(std::stol(pid)), SIGTERM);
  }
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  // Adds repo ORG/NAME with `fixture` (tests/data/hf/<fixture>.json) as its config.
  std::string Repo(const std::string& repo, const std::string& fixture) {
    const std::string dir = root_ + "/" + repo;
    fs::create_directories(dir);
    WriteFile(dir, "config.json", ReadFile(SourcePath("tests/data/hf/" + fixture + ".json")));
    return dir;
  }
  std::string Endpoint() const { return "http://127.0.0.1:" + port_; }
  std::string Log() const { return ReadFile(io_ + "/log"); }

 private:
  std::string root_, io_, port_;
};

// The environment of a run against `hub` with the cache in `cache`.
std::string Env(const FakeHub& hub, const std::string& cache, const std::string& more = "") {
  return "COLUMNS=1000 HF_HUB_OFFLINE=0 HF_ENDPOINT=" + hub.Endpoint() + " HF_HUB_CACHE='" + cache +
         "' KVPLAN_HUB_TIMEOUT=2 " + more;
}

// The regular files under `dir`.
std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  }
  return out;
}

// The six repos of the issue, each with its published config.json. Two are
// catalog models now (their hf_repo), which step 2 of the resolution order
// answers before the cache or the Hub is asked.
struct Six {
  const char* repo;
  const char* fixture;
  const char* base;
  bool catalog;
};
constexpr Six kSix[] = {
    {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct", "llama-3.1-8b", false},
    {"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b-instruct", "qwen2.5-7b", false},
    {"meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct", "llama-3.3-70b", true},
    {"deepseek-ai/DeepSeek-R1", "deepseek-r1", "deepseek-r1", true},
    {"Qwen/Qwen3-8B-FP8", "qwen3-8b-fp8", "qwen3-8b", false},
    {"hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "meta-llama-3.1-70b-instruct-awq-int4",
     "llama-3.1-70b", false},
};

}  // namespace

TEST_CASE("the six repos of issue 37: from the Hub, then from the cache it filled") {
  FakeHub hub;
  for (const Six& s : kSix) hub.Repo(s.repo, s.fixture);
  const std::string cache = TempDir();
  for (const Six& s : kSix) {
    CAPTURE(s.repo);
    CliResult r = RunKvplan(std::string("size ") + s.repo + " -c 8K", "", Env(hub, cache));
    CHECK(r.exit_code == 0);
    if (s.catalog) {  // the catalog's own file: no route line, nothing fetched
      CHECK(r.err.empty());
      CHECK(r.out.find(s.base) == 0);
      continue;
    }
    CHECK(r.err.find(std::string("kvplan: model: ") + s.repo + ", config.json from the Hub (" +
                     hub.Endpoint() + "), snapshot ") == 0);
    CHECK(r.out.find(s.repo) != std::string::npos);
    // Offline now: the same model from the cache.
    CliResult again = RunKvplan(std::string("size ") + s.repo + " -c 8K", "",
                                Env(hub, cache, "HF_HUB_OFFLINE=1"));
    CHECK(again.exit_code == 0);
    CHECK(again.err.find(std::string("kvplan: model: ") + s.repo +
                         ", config.json from the local Hugging Face cache, snapshot ") == 0);
    CHECK(again.out == r.out);
  }
  // The CI gate's command line passes the model stage.
  CliResult check = RunKvplan(
      "check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192\" "
      "--gpu h100-sxm",
      "", Env(hub, cache, "HF_HUB_OFFLINE=1"));
  CHECK(check.exit_code == 0);
  CHECK(check.err.find("config.json from the local Hugging Face cache") != std::string::npos);
  // Shell completion's list of cached repo ids.
  CliResult cached = RunKvplan("models --cached", "", Env(hub, cache));
  CHECK(cached.exit_code == 0);
  CHECK(cached.out.find("Qwen/Qwen3-8B-FP8\n") != std::string::npos);
  CHECK(LineCount(cached.out) == 4);
}

TEST_CASE("the six repos of issue 37 offline and not cached: the derivative's base, with a note") {
  const std::string cache = TempDir();
  for (const Six& s : kSix) {
    CAPTURE(s.repo);
    CliResult r = RunKvplan(std::string("size ") + s.repo + " -c 8K", "",
                            "COLUMNS=1000 HF_HUB_OFFLINE=1 HF_HUB_CACHE='" + cache + "'");
    CHECK(r.exit_code == 0);
    if (s.catalog) {
      CHECK(r.err.empty());
      continue;
    }
    CHECK(r.err.find(std::string("kvplan: model: ") + s.repo + ", catalog model " + s.base +
                     " assumed from the name\nkvplan: note: ") == 0);
    CHECK(LineCount(r.err) == 2);
  }
  CliResult check = RunKvplan(
      "check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192\" "
      "--gpu h100-sxm",
      "", "HF_HUB_OFFLINE=1 HF_HUB_CACHE='" + cache + "'");
  CHECK(check.exit_code == 0);
  CHECK(FilesUnder(cache).empty());
}

TEST_CASE("from the Hub: only config.json, the index and the safetensors headers") {
  FakeHub hub;
  const std::string dir = hub.Repo("acme/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct");
  WriteFile(
      dir, "model.safetensors.index.json",
      R"({"metadata":{"total_size":36},"weight_map":{"a0.weight":"model-00001-of-00002.safetensors",)"
      R"("a1.weight":"model-00001-of-00002.safetensors","b0.weight":"model-00002-of-00002.safetensors"}})");
  WriteFile(dir, "model-00001-of-00002.safetensors", Safetensors(2, "a"));
  WriteFile(dir, "model-00002-of-00002.safetensors", Safetensors(1, "b"));
  const std::string cache = TempDir();
  CliResult r =
      RunKvplan("models --resolve acme/Llama-3.1-8B-Instruct --format json", "", Env(hub, cache));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"route\": \"hub\"") != std::string::npos);
  std::vector<std::string> files = FilesUnder(cache);
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 5);
  CHECK(files[0] == "models--acme--Llama-3.1-8B-Instruct/refs/main");
  // Headers are stored under .header, never under a weights file's name.
  for (const std::string& f : files) {
    CAPTURE(f);
    CHECK_FALSE(f.ends_with(".safetensors"));
    CHECK(f.find(".tmp") == std::string::npos);
  }
  const std::string root = cache + "/models--acme--Llama-3.1-8B-Instruct";
  const std::string commit = ReadFile(root + "/refs/main");
  CHECK(commit.size() == 40);
  const std::string s = root + "/snapshots/" + commit + "/";
  CHECK(ReadFile(s + "config.json") ==
        ReadFile(SourcePath("tests/data/hf/llama-3.1-8b-instruct.json")));
  const std::string whole = Safetensors(2, "a");
  CHECK(ReadFile(s + "model-00001-of-00002.safetensors.header") ==
        whole.substr(0, whole.size() - 24));
  CHECK(fs::exists(s + "model-00002-of-00002.safetensors.header"));
  CHECK(fs::exists(s + "model.safetensors.index.json"));
  // Every request for a weights file was a range request, through the redirect.
  const std::string log = hub.Log();
  CHECK(log.find("GET /cdn/acme/Llama-3.1-8B-Instruct/model-00001-of-00002.safetensors "
                 "range=bytes=0-7") != std::string::npos);
  size_t at = 0;
  while ((at = log.find("GET /cdn/", at)) != std::string::npos) {
    const size_t end = log.find('\n', at);
    CHECK(log.substr(at, end - at).find("range=bytes=") != std::string::npos);
    at = end;
  }
  // The route line in text.
  CliResult text = RunKvplan("models --resolve acme/Llama-3.1-8B-Instruct", "",
                             Env(hub, cache, "HF_HUB_OFFLINE=1"));
  CHECK(
      text.out.starts_with("model: acme/Llama-3.1-8B-Instruct, config.json from the local "
                           "Hugging Face cache, snapshot " +
                           commit.substr(0, 7) + "\n"));
}

TEST_CASE("a Hub without X-Repo-Commit: the commit from /api/models") {
  FakeHub hub;
  const std::string dir = hub.Repo("acme/nocommit", "qwen3-8b");
  WriteFile(dir, ".nocommit", "");
  const std::string cache = TempDir();
  CliResult r = RunKvplan("size acme/nocommit -c 4K", "", Env(hub, cache));
  CHECK(r.exit_code == 0);
  CHECK(hub.Log().find("GET /api/models/acme/nocommit/revision/main") != std::string::npos);
  CHECK(ReadFile(cache + "/models--acme--nocommit/refs/main").size() == 40);
}

TEST_CASE("gated repos: 401 says to set HF_TOKEN; the token opens them") {
  FakeHub hub;
  WriteFile(hub.Repo("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"), ".gated", "");
  const std::string cache = TempDir();
  CliResult r = RunKvplan("size meta-llama/Llama-3.1-8B-Instruct", "", Env(hub, cache));
  kvplan::test::CheckOneLineError(
      r,
      "meta-llama/Llama-3.1-8B-Instruct: the Hub answered 401 (a gated or private repo): accept "
      "its terms on its Hub page, then set HF_TOKEN or run `huggingface-cli login`");
  CHECK(FilesUnder(cache).empty());
  CliResult wrong =
      RunKvplan("size meta-llama/Llama-3.1-8B-Instruct", "", Env(hub, cache, "HF_TOKEN=bad-token"));
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("with the token from HF_TOKEN") != std::string::npos);
  CHECK(wrong.err.find("bad-token") == std::string::npos);
  CliResult env = RunKvplan("size meta-llama/Llama-3.1-8B-Instruct", "",
                            Env(hub, cache, "HF_TOKEN=good-token"));
  CHECK(env.exit_code == 0);
  const std::string tokens = TempDir();
  const std::string file = WriteFile(tokens, "token", "good-token\n");
  const std::string cache2 = TempDir();
  CliResult from_file = RunKvplan("size meta-llama/Llama-3.1-8B-Instruct", "",
                                  Env(hub, cache2, "HF_TOKEN_PATH='" + file + "'"));
  CHECK(from_file.exit_code == 0);
}

TEST_CASE("Hub failures: one error line, bounded time, nothing written") {
  FakeHub hub;
  struct Case {
    const char* marker;
    const char* error_part;
  };
  const Case cases[] = {
      {"truncate", "the answer was cut short"},
      {"stall", "no complete answer within 2 s"},
      {"loop", "more than 5 redirects"},
      {"norange", "is over the 8 bytes expected (kvplan never downloads weights)"},
      {"error500", "the Hub answered HTTP 500"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.marker);
    const std::string repo = std::string("acme/") + c.marker;
    const std::string dir = hub.Repo(repo, "qwen3-8b");
    WriteFile(dir, std::string(".") + c.marker, "");
    if (std::string(c.marker) == "norange")
      WriteFile(dir, "model.safetensors", Safetensors(3, "w"));
    const std::string cache = TempDir();
    const auto start = std::chrono::steady_clock::now();
    CliResult r = RunKvplan("size " + repo, "", Env(hub, cache));
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(took < std::chrono::seconds(10));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(LineCount(r.err) == 1);
    CHECK(r.err.starts_with("kvplan: error: "));
    CHECK(r.err.find(c.error_part) != std::string::npos);
    CHECK(FilesUnder(cache).empty());
  }
  const std::string cache = TempDir();
  CliResult missing = RunKvplan("size acme/missing", "", Env(hub, cache));
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("acme/missing: not found on the Hub") != std::string::npos);
  CHECK(FilesUnder(cache).empty());
}

TEST_CASE("an unreachable Hub falls back to the derivative name, saying why") {
  const std::string cache = TempDir();
  // Port 1 on 127.0.0.1: nothing listens, the connection is refused at once.
  CliResult r = RunKvplan("size Qwen/Qwen2.5-7B-Instruct -c 4K", "",
                          "HF_HUB_OFFLINE=0 HF_ENDPOINT=http://127.0.0.1:1 HF_HUB_CACHE='" + cache +
                              "' KVPLAN_HUB_TIMEOUT=2");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("cannot reach the Hub") != std::string::npos);
  CHECK(r.err.find("catalog model qwen2.5-7b assumed from the name") != std::string::npos);
  CliResult unknown = RunKvplan("size acme/unknown-model", "",
                                "HF_HUB_OFFLINE=0 HF_ENDPOINT=http://127.0.0.1:1 HF_HUB_CACHE='" +
                                    cache + "' KVPLAN_HUB_TIMEOUT=2");
  CHECK(unknown.exit_code == 2);
  CHECK(LineCount(unknown.err) == 1);
  CHECK(unknown.err.find("huggingface-cli download acme/unknown-model config.json") !=
        std::string::npos);
  CHECK(FilesUnder(cache).empty());
}
