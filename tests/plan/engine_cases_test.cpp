// The engines' own KV-sizing unit tests as kvplan's acceptance cases
// (docs/engine-tests.md). Each table under tests/data/engine-cases/ holds one
// engine's cases: every row names the engine's test file, test and commit, the
// geometry and flags the test builds, and the number the test asserts. This
// runner builds the model and the engine configuration a row describes, runs
// ComputeCapacity, and compares. A row where kvplan deliberately differs
// carries `kvplan:` (what kvplan gives) and `why:`; the runner then asserts
// kvplan's value and that it differs from the engine's.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "import/resolve.h"
#include "plan/capacity.h"
#include "spec/catalog.h"
#include "spec/engine.h"
#include "spec/model_reader.h"
#include "spec/yaml_reader.h"
#include "util/error.h"

using namespace kvplan;

namespace {

const std::string kDir = std::string(KVPLAN_SOURCE_DIR) + "/tests/data/engine-cases";

/// Integer arithmetic as the engines' tests write it: `16 * 2 * 64 * 4 * 2`,
/// `8 * GiB`, `(1024 + 129) * 3`, `20 * GiB // 32768`. + - * // and
/// parentheses over unsigned integers, KiB/MiB/GiB as names.
class Expr {
 public:
  explicit Expr(std::string text) : s_(std::move(text)) {}
  uint64_t Eval() {
    const uint64_t v = Sum();
    Skip();
    if (i_ != s_.size()) throw std::runtime_error("bad expression: " + s_);
    return v;
  }

 private:
  void Skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool Take(std::string_view op) {
    Skip();
    if (s_.compare(i_, op.size(), op) != 0) return false;
    i_ += op.size();
    return true;
  }
  uint64_t Sum() {
    uint64_t v = Product();
    for (;;) {
      if (Take("+")) {
        v += Product();
      } else if (Take("-")) {
        v -= Product();
      } else {
        return v;
      }
    }
  }
  uint64_t Product() {
    uint64_t v = Atom();
    for (;;) {
      if (Take("//")) {
        v /= Atom();
      } else if (Take("*")) {
        v *= Atom();
      } else {
        return v;
      }
    }
  }
  uint64_t Atom() {
    Skip();
    if (Take("(")) {
      const uint64_t v = Sum();
      if (!Take(")")) throw std::runtime_error("missing ) in: " + s_);
      return v;
    }
    static const std::map<std::string, uint64_t> names = {
        {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}};
    for (const auto& [name, value] : names) {
      if (Take(name)) return value;
    }
    size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      ++i_;
    if (start == i_) throw std::runtime_error("expected a number in: " + s_);
    std::string digits;
    for (size_t k = start; k < i_; ++k)
      if (s_[k] != '_') digits += s_[k];
    return std::stoull(digits);
  }
  std::string s_;
  size_t i_ = 0;
};

uint64_t Int(const YAML::Node& n) {
  return Expr(n.as<std::string>()).Eval();
}

/// The row's model: the table's defaults with the row's keys over them.
ModelSpec BuildModel(const YAML::Node& defaults, const YAML::Node& row, const std::string& id) {
  YAML::Node m(YAML::NodeType::Map);
  m["name"] = "case-" + id;
  m["source"] = "engine test";
  m["params"] = 1000000;
  for (const YAML::Node* src : {&defaults, &row}) {
    if (!*src) continue;
    for (const auto& kv : *src) {
      const std::string key = kv.first.as<std::string>();
      if (kv.second.IsScalar() && key != "weight_dtype" && key != "name") {
        m[key] = Int(kv.second);
      } else {
        m[key] = kv.second;
      }
    }
  }
  if (!m["query_heads"]) m["query_heads"] = m["kv_heads"];
  if (!m["hidden_size"])
    m["hidden_size"] = m["query_heads"].as<uint64_t>() * m["head_dim"].as<uint64_t>();
  if (!m["max_context"]) m["max_context"] = 1u << 20;
  if (!m["weight_dtype"]) m["weight_dtype"] = "fp16";
  YAML::Emitter out;
  out << m;
  return ParseModelYaml(out.c_str(), id + ".yaml");
}

/// The row's engine flags, under their EngineConfig names.
EngineConfig BuildConfig(Engine engine, const YAML::Node& defaults, const YAML::Node& row,
                         HardwareSpec& gpu) {
  EngineConfig c;
  c.engine = engine;
  for (const YAML::Node* src : {&defaults, &row}) {
    if (!*src) continue;
    for (const auto& kv : *src) {
      const std::string key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "kv_cache_dtype") {
        c.kv_cache_dtype = v.as<std::string>();
      } else if (key == "vllm_version") {
        c.vllm_version = ParseVllmVersion(v.as<std::string>(), "vllm_version");
      } else if (key == "memory_fraction") {
        c.memory_fraction = v.as<double>();
      } else if (key == "gpu_memory") {
        gpu.memory_bytes = Int(v);
        gpu.usable_memory_bytes = 0;
      } else if (key == "reserve") {
        c.reserve_bytes = Int(v);
      } else if (key == "kv_unified") {
        c.kv_unified = v.as<bool>();
      } else if (key == "max_model_len_auto") {
        c.max_model_len_auto = v.as<bool>();
      } else if (key == "disable_hybrid_kv_cache_manager") {
        c.disable_hybrid_kv_cache_manager = v.as<bool>();
      } else {
        static const std::map<std::string, uint64_t EngineConfig::*> ints = {
            {"max_model_len", &EngineConfig::max_model_len},
            {"max_num_seqs", &EngineConfig::max_num_seqs},
            {"max_num_batched_tokens", &EngineConfig::max_num_batched_tokens},
            {"block_size", &EngineConfig::block_size},
            {"tp", &EngineConfig::tp},
            {"pp", &EngineConfig::pp},
            {"kv_cache_memory_bytes", &EngineConfig::kv_cache_memory_bytes},
            {"num_gpu_blocks_override", &EngineConfig::num_gpu_blocks_override},
            {"max_gpu_total_bytes", &EngineConfig::max_gpu_total_bytes},
            {"host_cache_size", &EngineConfig::host_cache_size},
            {"trtllm_max_tokens", &EngineConfig::trtllm_max_tokens},
            {"max_total_tokens", &EngineConfig::max_total_tokens},
            {"n_ctx", &EngineConfig::n_ctx},
            {"n_parallel", &EngineConfig::n_parallel},
        };
        auto it = ints.find(key);
        if (it == ints.end()) FAIL("unknown config key '" << key << "'");
        c.*(it->second) = Int(v);
      }
    }
  }
  return c;
}

/// What the row's expectation `key` reads from kvplan's result, as text.
std::string Actual(const CapacityResult& r, const std::string& key, const YAML::Node& want) {
  static const std::map<std::string, uint64_t CapacityResult::*> ints = {
      {"num_blocks", &CapacityResult::num_blocks},
      {"largest_max_model_len", &CapacityResult::largest_max_model_len},
      {"block_bytes", &CapacityResult::block_bytes},
      {"page_bytes", &CapacityResult::page_bytes},
      {"bytes_per_token", &CapacityResult::bytes_per_token},
      {"max_tokens", &CapacityResult::max_tokens},
      {"kv_budget_bytes", &CapacityResult::kv_budget_bytes},
      {"kv_used_bytes", &CapacityResult::kv_used_bytes},
      {"blocks_per_request", &CapacityResult::blocks_per_request},
      {"block_size", &CapacityResult::block_size},
      {"max_requests", &CapacityResult::max_requests},
      {"host_bytes", &CapacityResult::host_bytes},
      {"cells", &CapacityResult::cells},
      {"max_model_len", &CapacityResult::max_model_len},
  };
  if (auto it = ints.find(key); it != ints.end()) return std::to_string(r.*(it->second));
  if (key == "usable_blocks") return std::to_string(r.UsableBlocks());
  if (key == "max_concurrency") {
    // As the engine computes it (a float division), to 6 decimals.
    return fmt::format("{:.6f}", r.max_concurrency);
  }
  if (key == "fits") return r.fits && !EngineRefusesToStart(r) ? "true" : "false";
  if (key == "groups") return std::to_string(r.kv_cache_groups.size());
  if (key == "windows") {
    // TRT-LLM's windows after adjust_window_sizes_for_vswa: "window: layers, ...".
    std::string out;
    for (const TrtllmWindow& w : r.trtllm_windows)
      out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", w.window, w.layers);
    return out;
  }
  if (key == "lint" || key == "error") {
    // The lint whose code (lint) or message (error) holds the expected text.
    const std::string text = want.as<std::string>();
    for (const Lint& l : r.lints) {
      if (key == "lint" ? l.code == text : l.message.find(text) != std::string::npos) return text;
    }
    std::string codes;
    for (const Lint& l : r.lints) codes += l.code + ": " + l.message + "; ";
    return "(no such lint; lints: " + codes + ")";
  }
  if (key == "request_blocks") {
    // tokens -> blocks one request of that many tokens holds.
    std::string out;
    for (const auto& kv : want)
      out += fmt::format("{}:{} ", Int(kv.first), r.BlocksForRequest(Int(kv.first)));
    return out;
  }
  FAIL("unknown expectation key '" << key << "'");
  return "";
}

/// The expected value as text, in the form Actual() writes it.
std::string Expected(const std::string& key, const YAML::Node& want) {
  if (key == "max_concurrency") return fmt::format("{:.6f}", want.as<double>());
  if (key == "fits") return want.as<bool>() ? "true" : "false";
  if (key == "lint" || key == "error" || key == "windows") return want.as<std::string>();
  if (key == "request_blocks") {
    std::string out;
    for (const auto& kv : want) out += fmt::format("{}:{} ", Int(kv.first), Int(kv.second));
    return out;
  }
  return std::to_string(Int(want));
}

/// A range a test asserts: "> 0, <= 32 * 16" (each part an operator and an
/// expression; "% 128": a multiple of 128), for `expect` values the
/// engine's test does not pin exactly.
struct Bound {
  std::vector<std::pair<std::string, uint64_t>> parts;
  bool Holds(uint64_t v) const {
    for (const auto& [op, x] : parts) {
      if ((op == "<" && !(v < x)) || (op == "<=" && !(v <= x)) || (op == ">" && !(v > x)) ||
          (op == ">=" && !(v >= x)) || (op == "%" && (x == 0 || v % x != 0)))
        return false;
    }
    return true;
  }
};

std::optional<Bound> ParseBound(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  const std::string s = n.as<std::string>();
  if (s.empty() || (s[0] != '<' && s[0] != '>' && s[0] != '%')) return std::nullopt;
  Bound b;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string part = s.substr(start, end - start);
    while (!part.empty() && part[0] == ' ') part.erase(0, 1);
    const size_t op_len = part.size() > 1 && part[1] == '=' ? 2 : 1;
    b.parts.emplace_back(part.substr(0, op_len), Expr(part.substr(op_len)).Eval());
    start = end + 1;
  }
  return b;
}

struct Table {
  std::string file;
  Engine engine;
  YAML::Node doc;
};

Table LoadTable(const std::string& name) {
  const std::string path = kDir + "/" + name;
  Table t{path, Engine::kVllm, ParseYaml(ReadTextFile(path), path)};
  t.engine = ParseEngine(t.doc["engine"].as<std::string>());
  return t;
}

const std::vector<std::string> kTables = {"vllm.yaml", "trtllm.yaml", "sglang.yaml",
                                          "llamacpp.yaml"};

/// Runs every row of one table; returns how many rows it ran.
size_t RunTable(const std::string& name) {
  Table t = LoadTable(name);
  const YAML::Node commits = t.doc["commits"];
  const YAML::Node defaults = t.doc["defaults"];
  std::set<std::string> ids;
  size_t rows = 0;
  for (const YAML::Node& row : t.doc["cases"]) {
    const std::string id = row["id"].as<std::string>();
    CAPTURE(name);
    CAPTURE(id);
    CHECK(ids.insert(id).second);
    // Every row cites its source: a test in a file of the engine's repo, read
    // at a named commit.
    CHECK(row["source"].as<std::string>().find("::") != std::string::npos);
    // A full commit, or the 12-digit one a PR thread quotes.
    const std::string sha = commits[row["commit"].as<std::string>()]["sha"].as<std::string>();
    CHECK((sha.size() == 40 || sha.size() == 12));
    CHECK(sha.find_first_not_of("0123456789abcdef") == std::string::npos);
    HardwareSpec gpu = LoadHardware("b200");
    EngineConfig c = BuildConfig(t.engine, defaults["config"], row["config"], gpu);
    ModelSpec m = BuildModel(defaults["model"], row["model"], id);
    CapacityResult r = ComputeCapacity(m, gpu, c);
    const YAML::Node kvplan = row["kvplan"];
    for (const auto& kv : row["expect"]) {
      const std::string key = kv.first.as<std::string>();
      CAPTURE(key);
      const std::string engine_says = ParseBound(kv.second) ? "" : Expected(key, kv.second);
      if (kvplan && kvplan[key]) {
        // A deliberate difference: kvplan's own figure, explained in `why`.
        CHECK(!row["why"].as<std::string>().empty());
        CHECK(Actual(r, key, kvplan[key]) == Expected(key, kvplan[key]));
        CHECK(Expected(key, kvplan[key]) != engine_says);
      } else if (const std::optional<Bound> b = ParseBound(kv.second)) {
        // The test asserts a range ("0 < max_model_len <= 32 * 16").
        const uint64_t got = std::stoull(Actual(r, key, kv.second));
        CAPTURE(got);
        CHECK(b->Holds(got));
      } else {
        CHECK(Actual(r, key, kv.second) == engine_says);
      }
    }
    ++rows;
  }
  return rows;
}

}  // namespace

TEST_SUITE("engine-cases") {
  TEST_CASE("the integer expressions of the case tables") {
    CHECK(Expr("16 * 2 * 64 * 4 * 2 * 2 * 32").Eval() == 1048576);
    CHECK(Expr("(1024 + 129) * 3").Eval() == 3459);
    CHECK(Expr("20 * GiB // 32768").Eval() == 655360);
    CHECK(Expr("1_000").Eval() == 1000);
    CHECK(ParseBound(YAML::Load("'> 0, <= 512'"))->Holds(512));
    CHECK_FALSE(ParseBound(YAML::Load("'> 0, <= 512'"))->Holds(0));
    CHECK(ParseBound(YAML::Load("'% 128'"))->Holds(256));
    CHECK_FALSE(ParseBound(YAML::Load("'% 128'"))->Holds(300));
    CHECK_FALSE(ParseBound(YAML::Load("512")));
    CHECK_THROWS(Expr("2 +").Eval());
    CHECK_THROWS(Expr("(2").Eval());
  }

  TEST_CASE("vLLM's own tests") {
    CHECK(RunTable("vllm.yaml") >= 30);
  }

  TEST_CASE("TensorRT-LLM's own tests") {
    CHECK(RunTable("trtllm.yaml") >= 5);
  }

  TEST_CASE("SGLang's own tests") {
    CHECK(RunTable("sglang.yaml") >= 5);
  }

  TEST_CASE("llama.cpp's own tests") {
    CHECK(RunTable("llamacpp.yaml") >= 5);
  }

  TEST_CASE("at least 60 cases across the four engines") {
    size_t total = 0;
    for (const std::string& name : kTables) total += LoadTable(name).doc["cases"].size();
    CHECK(total >= 60);
  }
}
