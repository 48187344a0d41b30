// Fuzzes the readers of the local Hugging Face cache (import/hf_cache): a
// refs file's text, a cache folder's name, repo ids and revisions, and the
// lookup of a snapshot through a refs file holding the fuzzer's bytes. The
// first byte picks the reader. Accepted values must keep their promises: a
// ref is a commit hash, a folder name round-trips to the same repo id, a
// repo id or revision never climbs out of the cache folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fuzz_common.h"
#include "import/hf_cache.h"

using namespace kvplan;
namespace fs = std::filesystem;

namespace {

// A cache folder with one repo whose refs/main the fuzzer writes.
const std::string& CacheDir() {
  static const std::string dir = [] {
    std::string d =
        (fs::temp_directory_path() / ("kvplan-fuzz-hf-cache-" + std::to_string(getpid()))).string();
    fs::create_directories(d + "/models--acme--m/refs");
    fs::create_directories(d +
                           "/models--acme--m/snapshots/0e9e39f249a16976918f6564b8830bc894c89659");
    std::ofstream(d +
                  "/models--acme--m/snapshots/0e9e39f249a16976918f6564b8830bc894c89659/config.json")
        << "{}";
    return d;
  }();
  return dir;
}

bool Climbs(const std::string& s) {
  return s.find("..") != std::string::npos || s.starts_with("/") ||
         s.find('\\') != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = fuzz::AsText(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        if (std::optional<std::string> c = ParseRefText(text)) {
          fuzz::Require(IsCommitHash(*c), "a ref that is not a commit hash");
        }
        break;
      case 1:
        if (std::optional<std::string> id = RepoIdFromFolderName(text)) {
          fuzz::Require(IsHfRepoId(*id), "a folder name giving a bad repo id");
          fuzz::Require(HfRepoFolderName(*id) == text, "folder name does not round-trip");
        }
        break;
      case 2:
        if (IsHfRepoId(text)) fuzz::Require(!Climbs(text), "a repo id that climbs");
        if (IsHfRevision(text)) {
          fuzz::Require(!Climbs(text) && text.find('/') == std::string::npos,
                        "a revision that climbs");
        }
        break;
      case 3: {
        std::ofstream(CacheDir() + "/models--acme--m/refs/main", std::ios::binary | std::ios::trunc)
            << text;
        if (std::optional<CachedSnapshot> s = FindCachedSnapshot(CacheDir(), "acme/m", "main")) {
          fuzz::Require(IsCommitHash(s->commit), "a snapshot named by no commit");
        }
        break;
      }
    }
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  return 0;
}
