// The local Hugging Face cache, laid out as huggingface_hub lays it out:
// <hub>/models--ORG--NAME/refs/<revision> holds a commit hash and
// <hub>/models--ORG--NAME/snapshots/<commit>/ holds that commit's files.
// kvplan reads config.json from it and stores what it fetches from the Hub
// there (config.json, the safetensors index, each safetensors header under
// `<file>.header`), so the next run needs no network. See
// docs/model-resolution.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvplan {

/// The hub cache folder: $HF_HUB_CACHE, else $HF_HOME/hub, else
/// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub; ""
/// when none is set (no HOME): then nothing is looked up or stored.
std::string HfHubCacheDir();

/// True for a Hub repo id ORG/NAME: one '/', each side 1..96 of
/// [A-Za-z0-9._-], not starting or ending in '.' or '-', no "--" or "..".
bool IsHfRepoId(std::string_view id);

/// True for a revision kvplan looks up or stores: a branch or tag name of
/// [A-Za-z0-9._-] (1..128, no "..", not starting with '.') or a commit hash.
bool IsHfRevision(std::string_view revision);

/// True for a 40-hex-digit commit hash (lower case, as the Hub writes it).
bool IsCommitHash(std::string_view s);

/// "models--ORG--NAME" for `repo` (which must satisfy IsHfRepoId).
std::string HfRepoFolderName(std::string_view repo);

/// The repo id a cache folder name stands for ("models--ORG--NAME" ->
/// "ORG/NAME"); nullopt for any other name.
std::optional<std::string> RepoIdFromFolderName(std::string_view folder);

/// The commit a refs file's text names: a commit hash, with surrounding
/// whitespace ignored; nullopt when the text is anything else.
std::optional<std::string> ParseRefText(std::string_view text);

struct CachedSnapshot {
  std::string folder;  // .../snapshots/<commit>
  std::string commit;  // the 40-hex commit
};

/// The snapshot of `repo` at `revision` (a branch/tag through refs/, or a
/// commit) in `hub_dir` that holds config.json; nullopt when there is none.
/// Throws Error for a refs file that is there but does not name a commit.
std::optional<CachedSnapshot> FindCachedSnapshot(const std::string& hub_dir, std::string_view repo,
                                                 std::string_view revision);

/// The repo ids in `hub_dir` with at least one snapshot holding config.json,
/// sorted (shell completion).
std::vector<std::string> CachedRepoIds(const std::string& hub_dir);

/// Stores `files` (name, bytes) as snapshots/<commit>/<name> of `repo` and
/// then refs/<revision> = commit (unless `revision` is the commit), each file
/// written to a temporary name and renamed into place, so a failed or
/// interrupted run leaves no half-written file and no ref to an incomplete
/// snapshot. Returns the snapshot folder. Throws Error.
std::string StoreSnapshot(const std::string& hub_dir, std::string_view repo,
                          std::string_view revision, const std::string& commit,
                          const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace kvplan
