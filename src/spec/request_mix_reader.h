// Reading request mixes: a CSV file (header prompt_tokens,output_tokens), a
// JSONL file ({"prompt_tokens": N, "output_tokens": M} per line), or a
// distribution spec ("uniform:prompt=100..2000,output=50..500"). Strict: every
// error names file:line:col (or the spec's key) in one line. Format:
// docs/request-mix.md.
#pragma once

#include <string>
#include <string_view>

#include "spec/request_mix.h"

namespace kvplan {

/// Limits on request-mix input.
struct RequestMixLimits {
  // What reading costs at the limit is measured in docs/request-mix.md: a
  // 32 MiB CSV (3.6M requests) in ~3 s of CPU and ~130 MB; 256 MiB took 36 s
  // and 3.4 GB, since every request is kept (24 bytes each) for the stats.
  static constexpr uint64_t kMaxFileBytes = 32ull * 1024 * 1024;
  static constexpr uint64_t kMaxTokens = 1ull << 40;    // per field of one request
  static constexpr uint64_t kMaxGenerated = 4'000'000;  // n= of a distribution (~140 MB)
};

/// Parses a request mix from `text`, named `file` in messages. CSV or JSONL is
/// chosen by the extension (.csv; .jsonl/.ndjson/.json), else by the first
/// non-blank character ('{' = JSONL). Throws Error on any malformed line.
RequestMix ParseRequestMix(std::string_view text, const std::string& file);

/// Reads and parses the request-mix file at `path`.
RequestMix LoadRequestMix(const std::string& path);

/// Parses a distribution spec such as
///   uniform:prompt=100..2000,output=50..500[,n=1000][,seed=1]
///   lognormal:prompt_mean=1000,prompt_sigma=0.8,output_mean=200,output_sigma=1[,prompt=1..32768][,output=1..8192][,n=..][,seed=..]
/// Throws Error naming `what` (the flag) and the offending key.
MixParams ParseMixSpec(std::string_view spec, std::string_view what = "--mix");

/// ParseMixSpec then GenerateMix, the spec text recorded as the source.
RequestMix MixFromSpec(std::string_view spec, std::string_view what = "--mix");

}  // namespace kvplan
