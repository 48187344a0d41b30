// Every input a fuzzer once crashed on (tests/data/fuzz-regressions/<harness>/,
// docs/reliability.md) runs through the same reader again in the ordinary
// test build: it must now be read or refused with one clean kvplan::Error,
// with the same extra properties the harness in fuzz/ checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "import/engine_command.h"
#include "import/hf_import.h"
#include "spec/hardware_spec.h"
#include "spec/model_reader.h"
#include "spec/request_mix.h"
#include "spec/request_mix_reader.h"
#include "util/units.h"

namespace fs = std::filesystem;
using namespace kvplan;
using namespace kvplan::test;

namespace {

std::vector<std::string> Inputs(const std::string& harness) {
  std::vector<std::string> out;
  fs::path dir = SourcePath("tests/data/fuzz-regressions/" + harness);
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `read`; an Error is fine if its message is one non-empty line.
template <typename F>
void ReadsOrRefusesCleanly(F&& read) {
  try {
    read();
  } catch (const Error& e) {
    std::string m = e.what();
    CHECK(!m.empty());
    CHECK(m.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("fuzz regressions: model spec reader") {
  for (const std::string& path : Inputs("model_spec")) {
    CAPTURE(path);
    ReadsOrRefusesCleanly([&] { ParseModelYaml(ReadFile(path), "fuzz.yaml"); });
  }
}

TEST_CASE("fuzz regressions: hardware spec reader and its writer round trip") {
  std::vector<std::string> inputs = Inputs("hardware_spec");
  CHECK(!inputs.empty());
  for (const std::string& path : inputs) {
    CAPTURE(path);
    ReadsOrRefusesCleanly([&] {
      HardwareSpec h = ParseHardwareYaml(ReadFile(path), "fuzz.yaml");
      HardwareSpec back = ParseHardwareYaml(HardwareToYaml(h), "roundtrip.yaml");
      CHECK(back.name == h.name);
      CHECK(back.display_name == h.display_name);
      CHECK(back.source == h.source);
      CHECK(back.memory_bandwidth_gbps == h.memory_bandwidth_gbps);
      CHECK(back.flops == h.flops);
    });
  }
}

TEST_CASE("fuzz regressions: token and memory unit parsers") {
  std::vector<std::string> inputs = Inputs("units");
  CHECK(!inputs.empty());
  for (const std::string& path : inputs) {
    CAPTURE(path);
    std::string data = ReadFile(path);
    REQUIRE(!data.empty());
    bool tokens = (static_cast<unsigned char>(data[0]) & 1) == 0;  // as fuzz/fuzz_units.cpp
    std::string text = data.substr(1);
    ReadsOrRefusesCleanly([&] { tokens ? ParseTokens(text) : ParseBytes(text); });
  }
}

TEST_CASE("fuzz regressions: request-mix readers") {
  for (const std::string& path : Inputs("request_mix")) {
    CAPTURE(path);
    std::string data = ReadFile(path);
    REQUIRE(!data.empty());
    std::string text = data.substr(1);
    ReadsOrRefusesCleanly([&] {  // the first byte picks the reader, as fuzz/fuzz_request_mix.cpp
      switch (static_cast<unsigned char>(data[0]) % 4) {
        case 0:
          ParseRequestMix(text, "fuzz.csv");
          break;
        case 1:
          ParseRequestMix(text, "fuzz.jsonl");
          break;
        case 2:
          ParseRequestMix(text, "fuzz.txt");
          break;
        default: {
          MixParams p = ParseMixSpec(text, "--mix");
          p.count = std::min<uint64_t>(p.count, 64);
          GenerateMix(p, text);
        }
      }
    });
  }
}

TEST_CASE("fuzz regressions: Hugging Face config importer and its output read back") {
  std::vector<std::string> inputs = Inputs("hf_import");
  CHECK(!inputs.empty());
  for (const std::string& path : inputs) {
    CAPTURE(path);
    ReadsOrRefusesCleanly([&] {
      HfImport imp = ImportHfConfig(ReadFile(path), "fuzz/config.json");
      ModelSpec back = ParseModelYaml(imp.yaml, "imported.yaml");
      CHECK(back.layers == imp.spec.layers);
      CHECK(back.groups.size() == imp.spec.groups.size());
    });
  }
}

TEST_CASE("one-line errors: a newline or control character in an echoed value is escaped") {
  CHECK_THROWS_WITH(ParseTokens("5\n6", "--context"),
                    "--context: '5\\n6' has an unknown suffix '\\n6' (use k/m/g = 1000s, K/M/G = "
                    "1024s)");
  CHECK(Error("a\tb\x01").what() == std::string("a\\tb\\x01"));
}

TEST_CASE(
    "fuzz regression: a \\N escape is refused, not read into a spec that cannot be written back") {
  // yaml-cpp decodes "\N" to the lone byte 0x85: before the fix the reader
  // accepted it and HardwareToYaml wrote a file that failed its own UTF-8 check.
  const std::string path =
      SourcePath("tests/data/fuzz-regressions/hardware_spec/escape-n-not-utf8.yaml");
  CHECK_THROWS_WITH_AS(ParseHardwareYaml(ReadFile(path), "fuzz.yaml"),
                       doctest::Contains("source: an escape decodes to a byte that is not UTF-8"),
                       kvplan::Error);
  CHECK_THROWS_WITH_AS(
      ParseHardwareYaml("name: x\ndisplay_name: \"a\\_b\"\nmemory_bytes: 1\n"
                        "memory_bandwidth_gbps: 1\nsource: s\n",
                        "nbsp.yaml"),
      "nbsp.yaml:2:15: display_name: an escape decodes to a byte that is not UTF-8 "
      "(\\N and \\_ are not supported; write the character itself)",
      kvplan::Error);
  // The escapes that decode to UTF-8 stay accepted.
  HardwareSpec ok = ParseHardwareYaml(
      "name: x\ndisplay_name: \"a\\u00e9\\tb\"\nmemory_bytes: 1\n"
      "memory_bandwidth_gbps: 1\nsource: s\n",
      "ok.yaml");
  CHECK(ok.display_name == "a\xc3\xa9\tb");
}

TEST_CASE("fuzz regressions: engine launch lines") {
  // A word of dashes alone ("--") once threw std::out_of_range from the key
  // of a llama.cpp flag: now one clean Error.
  std::vector<std::string> inputs = Inputs("engine_args");
  CHECK(!inputs.empty());
  for (const std::string& path : inputs) {
    CAPTURE(path);
    const std::string text = ReadFile(path);
    ReadsOrRefusesCleanly([&] { (void)ParseEngineCommand(text); });
  }
  CHECK_THROWS_WITH(ParseEngineCommand("llama-server -m m.gguf -- -c 4"),
                    "--engine-args: '--' names no flag (llama.cpp takes no positional arguments "
                    "after it)");
}
