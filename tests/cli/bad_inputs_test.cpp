// The bad-input corpus (tests/bad-inputs/cases.yaml, docs/reliability.md):
// every case runs the real kvplan from a scratch directory holding a copy of
// tests/bad-inputs/files/ and must exit 2 with exactly the expected one line
// on stderr, print nothing on stdout and write nothing.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace kvplan::test;

namespace {

struct BadInput {
  std::string run;  // arguments to kvplan, shell-quoted
  std::string stderr_line;
  std::string make_path;  // optional generated input (too big or odd to commit)
  std::string make_line;
  size_t make_count = 0;
  bool make_dir = false;
};

std::vector<BadInput> LoadCases() {
  std::vector<BadInput> out;
  YAML::Node root = YAML::LoadFile(SourcePath("tests/bad-inputs/cases.yaml"));
  for (const YAML::Node& n : root) {
    BadInput c;
    c.run = n["run"].as<std::string>();
    c.stderr_line = n["stderr"].as<std::string>();
    if (n["make"]) {
      c.make_path = n["make"]["path"].as<std::string>();
      if (n["make"]["dir"]) {
        c.make_dir = n["make"]["dir"].as<bool>();
      } else {
        c.make_line = n["make"]["line"].as<std::string>();
        c.make_count = n["make"]["count"].as<size_t>();
      }
    }
    out.push_back(c);
  }
  return out;
}

// Every path under `dir` with its bytes (a directory as "<dir>"): what a
// command could have written. Whole contents, not sizes, so an overwrite
// with text of the same length is caught too.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string bytes = "<dir>";
    if (e.is_regular_file()) {
      std::ifstream f(e.path(), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    out[e.path().string()] = bytes;
  }
  return out;
}

}  // namespace

TEST_CASE("bad-input corpus: each case exits 2 with its one expected line and writes nothing") {
  std::vector<BadInput> cases = LoadCases();
  CHECK(cases.size() >= 270);  // a truncated or mis-parsed cases.yaml fails here
  for (const BadInput& c : cases) {
    CAPTURE(c.run);
    std::string dir = TempDir();
    fs::copy(SourcePath("tests/bad-inputs/files"), dir + "/files", fs::copy_options::recursive);
    if (c.make_dir) {
      fs::create_directories(dir + "/" + c.make_path);
    } else if (!c.make_path.empty()) {
      std::ofstream f(dir + "/" + c.make_path, std::ios::binary);
      for (size_t i = 0; i < c.make_count; ++i) f << c.make_line << '\n';
    }
    std::map<std::string, std::string> before = Snapshot(dir);
    CliResult r = RunKvplan(c.run, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(r.err == c.stderr_line + "\n");
    CHECK(LineCount(r.err) == 1);
    CHECK(Snapshot(dir) == before);
  }
}
