// The Hugging Face Hub, read through libcurl for the few small files kvplan
// needs: a repo's config.json, its safetensors index, and each safetensors
// file's header (two HTTP range requests: the 8-byte length, then the JSON).
// Weights are never downloaded. $HF_ENDPOINT names the Hub (the public Hub
// by default), $HF_TOKEN or the token file opens gated repos, and
// HF_HUB_OFFLINE=1 forbids any request. Every failure (401/403, 404, a cut
// short body, a stalled server, too many redirects) is one Error line
// within a bounded time. See docs/model-resolution.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.h"

namespace kvplan {

struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // no trailing '/'
  bool offline = false;                             // HF_HUB_OFFLINE
  std::optional<std::string> token;                 // never printed
  std::string token_from;                           // "HF_TOKEN" or the token file's path
  long timeout_s = 60;                              // per request (KVPLAN_HUB_TIMEOUT)
};

/// The settings from the environment: HF_ENDPOINT, HF_HUB_OFFLINE, HF_TOKEN
/// (else the token file, see ReadHfTokenFile), KVPLAN_HUB_TIMEOUT. Throws
/// Error for a value that does not parse.
HubSettings HubSettingsFromEnv();

/// True for the values huggingface_hub takes as true (1, true, yes, on).
bool EnvFlagTrue(std::string_view value);

/// The token file's path: $HF_TOKEN_PATH, else $HF_HOME/token, else
/// $XDG_CACHE_HOME/huggingface/token, else ~/.cache/huggingface/token.
std::string HfTokenPath();

/// The token a token file's text holds (surrounding whitespace ignored);
/// nullopt for an empty file. Throws Error naming `file` (never echoing the
/// text) when it is not one word of printable ASCII of at most 1024 bytes.
std::optional<std::string> ParseTokenText(std::string_view text, const std::string& file);

/// Thrown when the Hub cannot be reached at all (no DNS, connection
/// refused): the resolver then falls back to a derivative name.
class HubUnreachable : public Error {
 public:
  using Error::Error;
};

/// The files of one repo at one revision, as fetched.
struct HubFiles {
  std::string commit;                                      // 40-hex
  std::vector<std::pair<std::string, std::string>> files;  // name -> bytes
  std::vector<std::string> notes;                          // e.g. no safetensors found
};

/// Fetches config.json, model.safetensors.index.json (when the repo has
/// one) and every safetensors header (stored as "<file>.header": the 8
/// length bytes and the JSON exactly as served) of `repo` at `revision`.
/// Throws Error (HubUnreachable when no connection could be made).
HubFiles FetchFromHub(const HubSettings& settings, std::string_view repo,
                      std::string_view revision);

// The readers of what the Hub serves, exposed for the tests and fuzzers.

/// The shard file names a safetensors index's weight_map names, unique, in
/// first-seen order. Throws Error naming `what`.
std::vector<std::string> ParseSafetensorsIndexShards(std::string_view body,
                                                     const std::string& what);

/// The header length N a safetensors file's first 8 bytes hold (little
/// endian); Throws Error when `bytes` is not 8 bytes or N is 0 or over the
/// format's 100,000,000-byte limit.
uint64_t ParseSafetensorsHeaderLength(std::string_view bytes, const std::string& what);

/// Checks that a safetensors header is one JSON object. Throws Error.
void CheckSafetensorsHeaderJson(std::string_view json, const std::string& what);

/// The "sha" of the Hub's /api/models/ORG/NAME/revision/REV answer.
/// Throws Error when it holds no commit hash.
std::string ParseRevisionSha(std::string_view body, const std::string& what);

}  // namespace kvplan
