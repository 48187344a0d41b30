// Fuzzes the readers of what the Hub serves (import/hub_client): the
// safetensors index's weight_map, a header's 8 length bytes, the header's
// JSON, and the /api/models revision answer. The first byte picks the
// reader. Accepted shard names must be plain .safetensors file names (they
// become file names in the cache), a length must be within the format's
// limit, a sha a commit hash.
#include "fuzz_common.h"
#include "import/hf_cache.h"
#include "import/hub_client.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = fuzz::AsText(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        for (const std::string& s : ParseSafetensorsIndexShards(text, "fuzz/index.json")) {
          fuzz::Require(s.ends_with(".safetensors"), "a shard that is not .safetensors");
          fuzz::Require(s.find('/') == std::string::npos && !s.starts_with("."),
                        "a shard outside the repo");
        }
        break;
      case 1: {
        const uint64_t n = ParseSafetensorsHeaderLength(text, "fuzz/header");
        fuzz::Require(n >= 2 && n <= 100000000, "header length out of range");
        break;
      }
      case 2:
        CheckSafetensorsHeaderJson(text, "fuzz/header");
        break;
      case 3:
        fuzz::Require(IsCommitHash(ParseRevisionSha(text, "fuzz/api")), "a sha that is no commit");
        break;
    }
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  return 0;
}
