#include "cli/config_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace kvplan {
namespace {

// Walks `dir` in name order, adding its *.yaml and *.yml files to `found`
// and each folder it cannot read, with the reason, to `unreadable`, then
// going on with the rest. Hidden folders (.github/workflows, .git) hold YAML
// that is no deployment config: not entered. Linked folders are not
// followed (as recursive_directory_iterator does not); a linked config is
// listed whatever its link leads to, so one that leads nowhere (dangling,
// a loop, no permission) fails when read instead of being skipped, which
// would pass a gate with a config missing.
void WalkConfigs(const std::filesystem::path& dir, std::vector<std::string>& found,
                 std::vector<std::pair<std::string, std::string>>& unreadable) {
  // `unreadable` also takes *.yaml entries that are no file (a FIFO, whose
  // open would wait for a writer forever and hang the CI job; a device; a
  // socket), with the reason: a config named there is not checked.
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    entries.push_back(*it);
  }
  if (ec) unreadable.emplace_back(dir.string(), "cannot read the folder: " + ec.message());
  std::sort(entries.begin(), entries.end(),
            [](const fs::directory_entry& x, const fs::directory_entry& y) {
              return x.path() < y.path();
            });
  for (const fs::directory_entry& e : entries) {
    std::error_code lec;
    const bool link = e.is_symlink(lec);
    const std::string name = e.path().filename().string();
    if (!link && e.is_directory(lec)) {
      if (name.size() > 1 && name[0] == '.') continue;
      WalkConfigs(e.path(), found, unreadable);
      continue;
    }
    const std::string ext = e.path().extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    std::error_code sec;
    const fs::file_status target = fs::status(e.path(), sec);  // follows a link
    if (sec || fs::is_regular_file(target)) {
      // A regular file, or a link that leads nowhere: reading it says why.
      found.push_back(e.path().string());
    } else if (!fs::is_directory(target) || link) {
      unreadable.emplace_back(e.path().string(), fs::is_fifo(target) ? "a FIFO, not a config file"
                                                 : fs::is_directory(target)
                                                     ? "a link to a folder, not a config file"
                                                     : "a device or socket, not a config file");
    }
  }
}

}  // namespace

std::vector<CheckOutcome> ExpandPaths(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<CheckOutcome> out;
  // A file named twice (itself and in its folder) is checked once.
  std::set<std::string> seen;
  const auto add = [&](CheckOutcome x) {
    std::error_code ec;
    const fs::path canon = fs::weakly_canonical(x.file, ec);
    if (seen.insert(ec ? x.file : canon.string()).second) out.push_back(std::move(x));
  };
  for (const std::string& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      std::vector<std::pair<std::string, std::string>> unreadable;
      WalkConfigs(a, found, unreadable);
      // A folder that cannot be read is an error: the configs in it would
      // otherwise go unchecked and the gate pass. The rest are still checked.
      for (const auto& [entry, why] : unreadable) {
        add({entry, std::nullopt, fmt::format("{}: {}", entry, why)});
      }
      if (found.empty() && unreadable.empty()) {
        add({a, std::nullopt, a + ": no deployment configs (*.yaml, *.yml) in this folder"});
      }
      for (const std::string& f : found) add({f, std::nullopt, ""});
    } else {
      add({a, std::nullopt, ""});
    }
  }
  return out;
}

}  // namespace kvplan
