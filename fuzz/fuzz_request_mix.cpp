// Fuzzes the request-mix readers: CSV, JSONL (ParseRequestMix), and the
// distribution spec of --mix (ParseMixSpec, then GenerateMix with at most 64
// requests so one input stays fast). The first byte picks the reader; the
// rest is the text. A mix the reader accepts must have requests, each with a
// prompt, and its statistics must be computable.
#include <algorithm>

#include "fuzz_common.h"
#include "spec/request_mix.h"
#include "spec/request_mix_reader.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text = fuzz::AsText(data + 1, size - 1);
  RequestMix mix;
  try {
    switch (data[0] % 4) {
      case 0:
        mix = ParseRequestMix(text, "fuzz.csv");
        break;
      case 1:
        mix = ParseRequestMix(text, "fuzz.jsonl");
        break;
      case 2:
        mix = ParseRequestMix(text, "fuzz.txt");
        break;  // chosen by content
      default: {
        MixParams p = ParseMixSpec(text, "--mix");
        p.count = std::min<uint64_t>(p.count, 64);
        mix = GenerateMix(p, text);
        for (const Request& r : mix.requests) {
          fuzz::Require(r.prompt_tokens >= p.prompt_min && r.prompt_tokens <= p.prompt_max,
                        "generated prompt outside its range");
          fuzz::Require(r.output_tokens >= p.output_min && r.output_tokens <= p.output_max,
                        "generated output outside its range");
        }
        break;
      }
    }
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
    return 0;
  }
  fuzz::Require(!mix.requests.empty(), "accepted mix has no requests");
  for (const Request& r : mix.requests) {
    fuzz::Require(r.prompt_tokens >= 1, "accepted request without prompt tokens");
  }
  MixStats s = ComputeMixStats(mix);
  fuzz::Require(s.count == mix.requests.size(), "stats count");
  fuzz::Require(s.min_tokens <= s.p50_tokens && s.p50_tokens <= s.max_tokens, "stats order");
  return 0;
}
