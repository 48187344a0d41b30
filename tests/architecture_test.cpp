// The layering rule of docs/architecture.md, held against the sources: a
// file under src/<layer>/ includes only headers of its own layer and of the
// layers its arrow names. The rules are read from the document itself, so
// the document and the code cannot drift apart.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace kvplan::test {
namespace {

namespace fs = std::filesystem;

using LayerRules = std::map<std::string, std::set<std::string>>;

// The block after the "<!-- layers" marker: one "layer -> dep dep" per line.
LayerRules ReadLayerRules(const std::string& markdown) {
  LayerRules rules;
  const size_t marker = markdown.find("<!-- layers");
  if (marker == std::string::npos) return rules;
  const size_t open = markdown.find("```", marker);
  const size_t body = markdown.find('\n', open) + 1;
  const size_t close = markdown.find("```", body);
  std::istringstream in(markdown.substr(body, close - body));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string layer, arrow, dep;
    if (!(words >> layer >> arrow) || arrow != "->") continue;
    std::set<std::string>& deps = rules[layer];
    while (words >> dep) deps.insert(dep);
  }
  return rules;
}

// "file:line: layer 'spec' includes 'plan/capacity.h'" for every include of
// a layer that `rules` does not allow, and for a file in no known layer.
std::vector<std::string> LayeringViolations(const fs::path& src, const LayerRules& rules) {
  std::vector<std::string> out;
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"/]+)/[^"]*")re");
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".cpp" && ext != ".h" && ext != ".inc" && ext != ".cu" && ext != ".cuh") continue;
    const fs::path rel = fs::relative(e.path(), src);
    const std::string layer = rel.begin()->string();
    const std::string name = rel.generic_string();
    if (rel.begin() == std::prev(rel.end()) || !rules.contains(layer)) {
      out.push_back(fmt::format("{}: not in any layer of docs/architecture.md", name));
      continue;
    }
    const std::set<std::string>& allowed = rules.at(layer);
    std::ifstream f(e.path());
    std::string line;
    for (int n = 1; std::getline(f, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const std::string target = m[1];
      if (target == layer || allowed.contains(target)) continue;
      out.push_back(fmt::format("{}:{}: layer '{}' includes '{}'", name, n, layer, target));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

LayerRules ProjectRules() {
  return ReadLayerRules(ReadFile(SourcePath("docs/architecture.md")));
}

}  // namespace

TEST_CASE("architecture: docs/architecture.md names every layer and its arrows") {
  const LayerRules rules = ProjectRules();
  std::set<std::string> layers;
  for (const auto& [layer, deps] : rules) layers.insert(layer);
  CHECK(layers == std::set<std::string>{"cli", "demo", "import", "kernels", "measure", "plan",
                                        "report", "spec", "util"});
  CHECK(rules.at("util").empty());
  CHECK(rules.at("spec") == std::set<std::string>{"util"});
  // Every arrow points at a layer the document defines.
  for (const auto& [layer, deps] : rules) {
    for (const std::string& dep : deps) CHECK_MESSAGE(rules.contains(dep), layer << " -> " << dep);
  }
  // Every folder directly under src/ is a layer.
  for (const fs::directory_entry& e : fs::directory_iterator(SourcePath("src"))) {
    if (e.is_directory()) CHECK_MESSAGE(rules.contains(e.path().filename().string()), e.path());
  }
}

TEST_CASE("architecture: no source includes a header of a layer it may not use") {
  const std::vector<std::string> violations = LayeringViolations(SourcePath("src"), ProjectRules());
  for (const std::string& v : violations) MESSAGE(v);
  CHECK(violations.empty());
}

TEST_CASE("architecture: a planted include of a higher layer is found, with file and line") {
  const std::string dir = TempDir();
  fs::create_directories(dir + "/src/spec");
  fs::create_directories(dir + "/src/plan");
  WriteFile(dir + "/src/plan", "kv.h", "#pragma once\n#include \"spec/model_spec.h\"\n");
  WriteFile(dir + "/src/spec", "model_spec.h",
            "#pragma once\n#include <string>\n#include \"util/error.h\"\n"
            "  #  include \"plan/kv.h\"  // upward\n");
  WriteFile(dir + "/src", "stray.cpp", "int x;\n");
  const std::vector<std::string> violations = LayeringViolations(dir + "/src", ProjectRules());
  CHECK(violations == std::vector<std::string>{
                          "spec/model_spec.h:4: layer 'spec' includes 'plan'",
                          "stray.cpp: not in any layer of docs/architecture.md",
                      });
  // The same tree with the arrow granted passes.
  LayerRules loose = ProjectRules();
  loose["spec"].insert("plan");
  fs::remove(dir + "/src/stray.cpp");
  CHECK(LayeringViolations(dir + "/src", loose).empty());
}

TEST_CASE("architecture: the rule block is parsed as written") {
  const LayerRules rules = ReadLayerRules(
      "text\n<!-- layers -->\n```text\na -> \nb -> a\nc -> a b\nnot a rule\n```\nd -> a\n");
  CHECK(rules.size() == 3);
  CHECK(rules.at("a").empty());
  CHECK(rules.at("c") == std::set<std::string>{"a", "b"});
  CHECK(ReadLayerRules("no marker").empty());
}

}  // namespace kvplan::test

namespace kvplan::test {

TEST_CASE("architecture: no file under src/ over 500 lines unless docs/architecture.md names it") {
  namespace fs = std::filesystem;
  const std::string doc = ReadFile(SourcePath("docs/architecture.md"));
  const size_t limits = doc.find("## Size limits");
  REQUIRE(limits != std::string::npos);
  const std::string table = doc.substr(limits, doc.find("\n## ", limits + 1) - limits);
  std::vector<std::string> over;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(SourcePath("src"))) {
    if (!e.is_regular_file()) continue;
    const std::string text = ReadFile(e.path().string());
    const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    const std::string name = fs::relative(e.path(), SourcePath("src")).generic_string();
    // The table names an exception as `path` (a file) or `path`: `Function`.
    if (lines > 500 && table.find("`" + name + "`") == std::string::npos) {
      over.push_back(fmt::format("src/{}: {} lines", name, lines));
    }
  }
  CHECK_MESSAGE(over.empty(), fmt::format("{}", fmt::join(over, "; ")));
}

}  // namespace kvplan::test
