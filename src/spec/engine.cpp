#include "spec/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "util/error.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {

std::string_view EngineName(Engine engine) {
  switch (engine) {
    case Engine::kVllm:
      return "vllm";
    case Engine::kSglang:
      return "sglang";
    case Engine::kTrtllm:
      return "trtllm";
    case Engine::kLlamaCpp:
      return "llama.cpp";
  }
  return "vllm";
}

const std::vector<Engine>& AllEngines() {
  static const std::vector<Engine> kAll = {Engine::kVllm, Engine::kSglang, Engine::kTrtllm,
                                           Engine::kLlamaCpp};
  return kAll;
}

Engine ParseEngine(std::string_view name) {
  const std::string s = Lower(name);
  if (s == "vllm") return Engine::kVllm;
  if (s == "sglang") return Engine::kSglang;
  if (s == "trtllm" || s == "tensorrt-llm" || s == "trt-llm" || s == "tensorrt_llm") {
    return Engine::kTrtllm;
  }
  if (s == "llama.cpp" || s == "llamacpp" || s == "llama-cpp" || s == "llama-server") {
    return Engine::kLlamaCpp;
  }
  Fail("unknown engine '{}' (known: vllm, sglang, trtllm, llama.cpp){}", name,
       DidYouMean(s, {"vllm", "sglang", "trtllm", "llama.cpp"}));
}

uint64_t ParseVllmVersion(std::string_view text, std::string_view what) {
  if (text == "latest") return kVllmCurrent;
  std::string_view s = text;
  if (s.starts_with('v')) s.remove_prefix(1);
  // MAJOR.MINOR, then what a release adds (".1", ".0rc1", ".1.dev3+g12ab"):
  // only the first two numbers change what kvplan models.
  const auto bad = [&] {
    Fail("{}: expected a vLLM version such as 0.20, 0.21.1 or latest, got '{}'", what, text);
  };
  uint64_t parts[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) {
      parts[i] = parts[i] * 10 + static_cast<uint64_t>(s[digits] - '0');
      if (++digits > 3) bad();
    }
    if (digits == 0 || (digits > 1 && s[0] == '0')) bad();  // "0.020" is no release
    s.remove_prefix(digits);
    // A dot after the major number; after the minor, the end or a dot.
    if (i == 0 ? !s.starts_with('.') : !(s.empty() || s.starts_with('.'))) bad();
    if (i == 0) s.remove_prefix(1);
  }
  // What follows the minor (".1", ".0rc1"): dot-separated parts, none empty.
  if (!s.empty() && (s.find("..") != std::string_view::npos || s.back() == '.')) bad();
  for (const char ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '+' && ch != '-') bad();
  }
  return parts[0] * 1000 + parts[1];
}

std::string VllmVersionName(uint64_t version) {
  if (version == kVllmCurrent) return "latest";
  return fmt::format("{}.{}", version / 1000, version % 1000);
}

std::optional<uint64_t> ParseGpuLayers(std::string_view text, std::string_view what) {
  if (text == "all" || text == "auto" || text == "-1") return std::nullopt;
  if (text.empty() || text.find_first_not_of("0123456789") != text.npos) {
    Fail("{}: expected a layer count, all or -1, got '{}'", what, text);
  }
  if (text.size() > 3) return std::nullopt;  // "-ngl 9999": every layer
  const uint64_t n = std::stoull(std::string(text));
  if (n >= 999) return std::nullopt;  // "-ngl 999": every layer
  return n;
}

std::vector<double> ParseTensorSplit(std::string_view text, std::string_view what) {
  std::vector<double> shares;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(",/", start);
    if (end == text.npos) end = text.size();
    const std::string_view part = text.substr(start, end - start);
    const std::optional<double> v = TryParseReal(part);
    if (!v || *v < 0) {
      Fail("{}: expected shares such as 10,6 (non-negative numbers), got '{}'", what, text);
    }
    shares.push_back(*v);
    if (shares.size() > 64) Fail("{}: more than 64 shares in '{}'", what, text);
    start = end + 1;
  }
  if (std::all_of(shares.begin(), shares.end(), [](double s) { return s == 0; })) {
    Fail("{}: the shares in '{}' add up to 0", what, text);
  }
  return shares;
}

}  // namespace kvplan
