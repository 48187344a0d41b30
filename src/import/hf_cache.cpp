#include "import/hf_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/input_file.h"

namespace kvplan {
namespace fs = std::filesystem;
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// One side of a repo id: what the Hub accepts for an owner or a repo name.
bool IsRepoPart(std::string_view s) {
  if (s.empty() || s.size() > 96) return false;
  if (!std::all_of(s.begin(), s.end(), IsNameChar)) return false;
  if (s.front() == '.' || s.front() == '-' || s.back() == '.' || s.back() == '-') return false;
  return s.find("--") == std::string_view::npos && s.find("..") == std::string_view::npos;
}

// A file name kvplan writes into a snapshot: one path component of the
// name characters, never "." or ".." or hidden.
bool IsSnapshotFileName(std::string_view s) {
  return !s.empty() && s.size() <= 255 && s.front() != '.' &&
         std::all_of(s.begin(), s.end(), IsNameChar);
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

std::string HfHubCacheDir() {
  if (std::string v = Env("HF_HUB_CACHE"); !v.empty()) return v;
  if (std::string v = Env("HF_HOME"); !v.empty()) return (fs::path(v) / "hub").string();
  if (std::string v = Env("XDG_CACHE_HOME"); !v.empty()) {
    return (fs::path(v) / "huggingface" / "hub").string();
  }
  if (std::string home = Env("HOME"); !home.empty()) {
    return (fs::path(home) / ".cache" / "huggingface" / "hub").string();
  }
  return "";  // no cache folder: never a path relative to the working directory
}

bool IsHfRepoId(std::string_view id) {
  const size_t slash = id.find('/');
  if (slash == std::string_view::npos) return false;
  return IsRepoPart(id.substr(0, slash)) && IsRepoPart(id.substr(slash + 1));
}

bool IsCommitHash(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool IsHfRevision(std::string_view r) {
  return !r.empty() && r.size() <= 128 && r.front() != '.' &&
         r.find("..") == std::string_view::npos && std::all_of(r.begin(), r.end(), IsNameChar);
}

std::string HfRepoFolderName(std::string_view repo) {
  const size_t slash = repo.find('/');
  return "models--" + std::string(repo.substr(0, slash)) + "--" +
         std::string(repo.substr(slash + 1));
}

std::optional<std::string> RepoIdFromFolderName(std::string_view folder) {
  constexpr std::string_view kPrefix = "models--";
  if (!folder.starts_with(kPrefix)) return std::nullopt;
  folder.remove_prefix(kPrefix.size());
  const size_t sep = folder.find("--");
  if (sep == std::string_view::npos) return std::nullopt;
  std::string id = std::string(folder.substr(0, sep)) + "/" + std::string(folder.substr(sep + 2));
  if (!IsHfRepoId(id)) return std::nullopt;
  return id;
}

std::optional<std::string> ParseRefText(std::string_view text) {
  auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  if (!IsCommitHash(text)) return std::nullopt;
  return std::string(text);
}

std::optional<CachedSnapshot> FindCachedSnapshot(const std::string& hub_dir, std::string_view repo,
                                                 std::string_view revision) {
  if (hub_dir.empty() || !IsHfRepoId(repo) || !IsHfRevision(revision)) return std::nullopt;
  std::error_code ec;
  const fs::path root = fs::path(hub_dir) / HfRepoFolderName(repo);
  if (!fs::is_directory(root, ec)) return std::nullopt;
  std::string commit;
  const fs::path ref = root / "refs" / std::string(revision);
  if (fs::is_regular_file(ref, ec)) {
    // A refs file is one commit hash; anything bigger is not one.
    if (fs::file_size(ref, ec) > 4096 || ec) Fail("{}: not a Hugging Face refs file", ref.string());
    std::optional<std::string> parsed = ParseRefText(ReadInputFile(ref.string(), 4096));
    if (!parsed) {
      Fail(
          "{}: expected a 40-hex-digit commit hash (a damaged Hugging Face cache: delete the file)",
          ref.string());
    }
    commit = *parsed;
  } else if (IsCommitHash(revision)) {
    commit = std::string(revision);
  } else {
    return std::nullopt;
  }
  const fs::path snapshot = root / "snapshots" / commit;
  if (!fs::is_regular_file(snapshot / "config.json", ec)) return std::nullopt;
  return CachedSnapshot{snapshot.string(), commit};
}

std::vector<std::string> CachedRepoIds(const std::string& hub_dir) {
  std::vector<std::string> ids;
  if (hub_dir.empty()) return ids;
  std::error_code ec;
  fs::directory_iterator it(hub_dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::optional<std::string> id = RepoIdFromFolderName(it->path().filename().string());
    if (!id) continue;
    std::error_code ec2;
    fs::directory_iterator snap(it->path() / "snapshots", ec2);
    for (; !ec2 && snap != end; snap.increment(ec2)) {
      if (fs::is_regular_file(snap->path() / "config.json", ec2)) {
        ids.push_back(*id);
        break;
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string StoreSnapshot(const std::string& hub_dir, std::string_view repo,
                          std::string_view revision, const std::string& commit,
                          const std::vector<std::pair<std::string, std::string>>& files) {
  if (hub_dir.empty())
    Fail("{}: no Hugging Face cache folder to store it in (set HF_HUB_CACHE)", repo);
  if (!IsHfRepoId(repo)) Fail("'{}': not a Hugging Face repo id (ORG/NAME)", repo);
  if (!IsHfRevision(revision)) Fail("--revision: '{}' is not a branch, tag or commit", revision);
  if (!IsCommitHash(commit)) Fail("{}: the Hub named commit '{}', not a commit hash", repo, commit);
  for (const auto& [name, bytes] : files) {
    if (!IsSnapshotFileName(name))
      Fail("{}: the Hub named a file '{}' kvplan will not write", repo, name);
  }
  const fs::path root = fs::path(hub_dir) / HfRepoFolderName(repo);
  const fs::path snapshot = root / "snapshots" / commit;
  std::error_code ec;
  fs::create_directories(snapshot, ec);
  if (ec) Fail("{}: cannot create the cache folder: {}", snapshot.string(), ec.message());
  fs::create_directories(root / "refs", ec);
  if (ec) Fail("{}: cannot create the cache folder: {}", (root / "refs").string(), ec.message());
  // config.json last: a snapshot counts as cached once it holds config.json.
  for (const auto& [name, bytes] : files) {
    if (name != "config.json") WriteFileAtomic((snapshot / name).string(), bytes, true);
  }
  for (const auto& [name, bytes] : files) {
    if (name == "config.json") WriteFileAtomic((snapshot / name).string(), bytes, true);
  }
  if (revision != commit)
    WriteFileAtomic((root / "refs" / std::string(revision)).string(), commit, true);
  return snapshot.string();
}

}  // namespace kvplan
