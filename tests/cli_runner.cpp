#include "cli_runner.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace kvplan::test {
namespace fs = std::filesystem;

namespace {

struct TempDirs {
  std::vector<fs::path> dirs;
  ~TempDirs() {
    for (const fs::path& d : dirs) {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  }
};

TempDirs& AllTempDirs() {
  static TempDirs dirs;
  return dirs;
}

}  // namespace

std::string TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "kvplan-test-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* made = mkdtemp(buf.data());
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  AllTempDirs().dirs.emplace_back(made);
  return made;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

int LineCount(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

std::string SourcePath(const std::string& rel) {
  return std::string(KVPLAN_SOURCE_DIR) + "/" + rel;
}

std::string CpuVendorId() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("vendor_id", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) return "";
      const size_t start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "";
}

CliResult RunKvplan(const std::string& args, const std::string& cwd, const std::string& env) {
  std::string dir = cwd.empty() ? TempDir() : cwd;
  std::string io = TempDir();
  std::string cmd = "cd '" + dir + "' && unset COLUMNS && " + env + " '" KVPLAN_BINARY "' " + args +
                    " >'" + io + "/out' 2>'" + io + "/err' </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(io + "/out");
  r.err = ReadFile(io + "/err");
  return r;
}

void CheckOneLineError(const CliResult& r, const std::string& line) {
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err == "kvplan: error: " + line + "\n");
}

CliResult RunKvplanInto(const std::string& args, const std::string& stdout_path) {
  std::string io = TempDir();
  std::string cmd = "cd '" + TempDir() + "' && COLUMNS=" + std::to_string(kGoldenColumns) +
                    " '" KVPLAN_BINARY "' " + args + " >'" + stdout_path + "' 2>'" + io +
                    "/err' </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = ReadFile(io + "/err");
  return r;
}

}  // namespace kvplan::test
