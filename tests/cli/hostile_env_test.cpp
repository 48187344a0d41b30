// The real binary under a hostile environment (docs/reliability.md, "The
// environment"): a file-size limit, stderr full or closed, FIFOs and devices
// as inputs, links and devices as outputs, hostile file names, and count
// flags past their range. Every command that reads or writes a path exits 2
// with one line, within a bounded time, and leaves nothing behind.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "xml_check.h"

using namespace kvplan::test;
namespace fs = std::filesystem;

namespace {

struct ShResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `script` with `shell` in `dir`, kvplan as $K, under `timeout 30` (a
// hang fails the test as exit 124 instead of hanging it). `script` does
// its own redirections of kvplan's descriptors; whatever reaches the
// shell's stdout and stderr is captured.
ShResult Sh(const std::string& dir, const std::string& script,
            const std::string& shell = "/bin/sh") {
  const std::string io = TempDir();
  WriteFile(io, "script.sh", script);
  const std::string cmd = "cd '" + dir +
                          "' && K='" KVPLAN_BINARY "' COLUMNS=" + std::to_string(kGoldenColumns) +
                          " timeout 30 " + shell + " '" + io + "/script.sh' >'" + io + "/out' 2>'" +
                          io + "/err' </dev/null";
  const int status = std::system(cmd.c_str());
  ShResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(io + "/out");
  r.err = ReadFile(io + "/err");
  return r;
}

// The names in `dir` (not recursive), to compare before and after a run.
std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// One line ending in '\n', with no control character other than that.
bool IsOneCleanLine(const std::string& s) {
  if (s.empty() || s.back() != '\n') return false;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

// "" when every character of `s` is one XML 1.0 allows (Char production)
// in valid UTF-8; else what is wrong and where.
std::string XmlCharsProblem(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80           ? 1
                     : (b >> 5) == 6    ? 2
                     : (b >> 4) == 0xe  ? 3
                     : (b >> 3) == 0x1e ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return "bad UTF-8 at " + std::to_string(i);
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 2) return "bad UTF-8 at " + std::to_string(i);
      cp = (cp << 6) | (c & 0x3fu);
    }
    const bool ok = cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
                    (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
    if (!ok) return "character U+" + std::to_string(cp) + " at " + std::to_string(i);
    i += n;
  }
  return "";
}

const std::string kDeploy = SourcePath("examples/llama-8b-chat.yaml");
const std::string kHfConfig = SourcePath("tests/data/hf/qwen3-8b.json");

}  // namespace

TEST_CASE("FIFOs, sockets and devices as inputs: refused at once, one line, exit 2") {
  const std::string dir = TempDir();
  // A checkpoint folder whose config.json is a FIFO.
  REQUIRE(mkdir((dir + "/pipe.ckpt").c_str(), 0700) == 0);
  for (const char* name :
       {"pipe.yaml", "pipe.json", "pipe.csv", "pipe.gguf", "pipe.ckpt/config.json"}) {
    REQUIRE(mkfifo((dir + "/" + name).c_str(), 0600) == 0);
  }
  WriteFile(
      dir, "deploy-fifo-model.yaml",
      ReadFile(kDeploy).replace(ReadFile(kDeploy).find("model: llama-3.1-8b"),
                                std::string("model: llama-3.1-8b").size(), "model: ./pipe.yaml"));
  const std::string fifo = "is a FIFO (named pipe), not a regular file";
  // Every command that opens a path for reading, with a FIFO there.
  const std::vector<std::string> runs = {
      "size pipe.yaml",
      "size pipe.json",
      "size pipe.gguf",
      "size pipe.ckpt",
      "capacity pipe.gguf --gpu h100-sxm",
      "latency pipe.yaml --gpu h100-sxm",
      "capacity pipe.yaml --gpu h100-sxm",
      "compare llama-3.1-8b pipe.yaml --gpu h100-sxm",
      "tradeoff pipe.yaml --gpu h100-sxm",
      "models pipe.yaml",
      "models --verify pipe.yaml --against " + kHfConfig,
      "gpus pipe.yaml",
      "import-hf pipe.json",
      "import-hf pipe.json -o out.yaml",
      "check pipe.yaml",
      "check deploy-fifo-model.yaml",
      "check --vllm-args 'vllm serve llama-3.1-8b' --gpu pipe.yaml",
      "paging llama-3.1-8b --gpu h100-sxm --requests pipe.csv",
      "capacity llama-3.1-8b --gpu pipe.yaml",
      "latency llama-3.1-8b --profile pipe.yaml",
      "bench --quick --gpu pipe.yaml",
  };
  const std::set<std::string> before = Listing(dir);
  for (const std::string& args : runs) {
    CAPTURE(args);
    const ShResult r = Sh(dir, "\"$K\" " + args);
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(IsOneCleanLine(r.err));
    CHECK(r.err.find("pipe.") != std::string::npos);
    CHECK(r.err.find(fifo) != std::string::npos);
    CHECK(Listing(dir) == before);
  }
  // A socket and a character device are no input files either.
  const std::string sock = dir + "/sock.yaml";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (fd >= 0 && sock.size() < sizeof addr.sun_path) {
    sock.copy(addr.sun_path, sock.size());
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    const ShResult r = Sh(dir, "\"$K\" size sock.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "kvplan: error: sock.yaml: is a socket, not a regular file\n");
    close(fd);
  }
  for (const std::string args : {"size /dev/zero", "check /dev/null", "gpus /dev/urandom"}) {
    CAPTURE(args);
    const ShResult r = Sh(dir, "\"$K\" " + args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is a character device, not a regular file\n") != std::string::npos);
  }
  // A pipe the shell opened (/dev/stdin, <(...)) is still read to its end.
  const ShResult piped =
      Sh(dir, "cat '" + SourcePath("models/gpt2.yaml") + "' | \"$K\" size /dev/stdin -c 1K");
  CHECK(piped.exit_code == 0);
  CHECK(piped.out.find("gpt2") != std::string::npos);
}

TEST_CASE("a file-size limit (ulimit -f): the write fails as an error, nothing left behind") {
  const std::string dir = TempDir();
  const std::set<std::string> before = Listing(dir);
  // stderr goes through a pipe (`| cat`), which the limit does not cover.
  for (const std::string& args :
       {"import-hf " + kHfConfig + " -o new.yaml",
        std::string("tradeoff llama-3.1-8b --gpu h100-sxm --svg new.svg"),
        std::string("import-hf ") + kHfConfig + " -o " + std::string(240, 'n') + ".yaml"}) {
    for (const char* limit : {"0", "1"}) {
      CAPTURE(args);
      CAPTURE(limit);
      const ShResult r = Sh(dir, std::string("{ (ulimit -f ") + limit + "; exec \"$K\" " + args +
                                     " >/dev/null); echo \"rc=$?\"; } 2>&1 | cat");
      CHECK(r.out.find("\nrc=2\n") != std::string::npos);
      CHECK(r.out.rfind("kvplan: error: ", 0) == 0);
      CHECK(r.out.find("File too large") != std::string::npos);
      CHECK(r.out.find('\n') == r.out.find("\nrc="));  // one line, then the code
      CHECK(Listing(dir) == before);
    }
  }
  // Output to stdout redirected to a file under the limit: exit 2, one line.
  const ShResult r = Sh(dir,
                        "{ (ulimit -f 1; exec \"$K\" models --format json >out.json); "
                        "echo \"rc=$?\"; } 2>&1 | cat");
  CHECK(r.out == "kvplan: error: cannot write the output to stdout: File too large\nrc=2\n");
}

TEST_CASE("stderr full or closed: errors still exit 2, no abort, nothing written elsewhere") {
  const std::string dir = TempDir();
  WriteFile(dir, "bad.json", "{\"architectures\": [\"LlamaForCausalLM\"]}\n");
  const std::set<std::string> before = Listing(dir);
  for (const std::string redirect : {"2>/dev/full", "2>&-"}) {
    for (const std::string args :
         {"size nosuchmodel", "size llama-3.1-8b --format 'x\ry'", "nosuchcommand",
          "import-hf bad.json -o out.yaml", "check nosuch.yaml --format junit",
          "check nosuch.yaml --format github", "bench --threads 100000",
          "tradeoff llama-3.1-8b --svg nosuchdir/x.svg"}) {
      CAPTURE(redirect);
      CAPTURE(args);
      const ShResult r = Sh(dir, "\"$K\" " + args + " >/dev/null " + redirect + "; echo \"rc=$?\"");
      CHECK(r.out.find("rc=2\n") != std::string::npos);
      CHECK(r.out.find("kvplan") == std::string::npos);  // no error text on stdout
      CHECK(r.err == "");                                // no abort message from the shell
      CHECK(Listing(dir) == before);
    }
  }
  // Success with stderr closed is still success; stdout to /dev/full is an error.
  CHECK(Sh(dir, "\"$K\" size llama-3.1-8b -c 4K >/dev/null 2>&-").exit_code == 0);
  CHECK(Sh(dir, "\"$K\" size llama-3.1-8b -c 4K >/dev/full 2>/dev/full").exit_code == 2);
  CHECK(Sh(dir, "\"$K\" size llama-3.1-8b -c 4K >&- 2>&-").exit_code == 2);
}

TEST_CASE("outputs are checked before any work: links, devices, existing files, folders") {
  const std::string dir = TempDir();
  WriteFile(dir, "target.yaml", "keep\n");
  fs::create_symlink("target.yaml", dir + "/link.yaml");
  fs::create_symlink("nowhere.yaml", dir + "/dangling.yaml");
  REQUIRE(mkfifo((dir + "/pipe.yaml").c_str(), 0600) == 0);
  const std::string link =
      "is not a regular file (a symbolic link); kvplan only writes regular files";
  const std::string device =
      "is not a regular file (a device, pipe or socket); kvplan only writes regular files";
  struct Case {
    std::string out, flags, error;
  };
  const std::vector<Case> cases = {
      {"dangling.yaml", "", "dangling.yaml: file exists (use --force to overwrite)"},
      {"dangling.yaml", "--force", "dangling.yaml: " + link},
      {"link.yaml", "--force", "link.yaml: " + link},
      {"/dev/full", "--force", "/dev/full: " + device},
      {"pipe.yaml", "--force", "pipe.yaml: " + device},
      {"target.yaml", "", "target.yaml: file exists (use --force to overwrite)"},
      {"missing/p.yaml", "", "missing/p.yaml: the folder missing does not exist"},
      {".", "--force", ".: is a directory, not a file"},
  };
  const std::set<std::string> before = Listing(dir);
  // bench would measure for a minute before writing: it must refuse first
  // (the 30 s timeout fails the test otherwise). --quick --max-cache keep a
  // wrong run short anyway.
  for (const Case& c : cases) {
    for (const std::string& run : {"bench --quick --max-cache 1MiB --save " + c.out,
                                   "import-hf " + kHfConfig + " -o " + c.out,
                                   "tradeoff llama-3.1-8b --gpu h100-sxm --svg " + c.out}) {
      CAPTURE(run);
      CAPTURE(c.flags);
      const ShResult r = Sh(dir, "\"$K\" " + run + " " + c.flags);
      CHECK(r.exit_code == 2);
      CHECK(r.out == "");
      CHECK(r.err == "kvplan: error: " + c.error + "\n");
      CHECK(Listing(dir) == before);
      CHECK(ReadFile(dir + "/target.yaml") == "keep\n");
    }
  }
  // An input problem found after the output check still writes nothing.
  const ShResult r = Sh(dir, "\"$K\" import-hf nosuch.json -o fresh.yaml");
  CHECK(r.exit_code == 2);
  CHECK(Listing(dir) == before);
}

TEST_CASE("output names up to the folder's limit: the temporary name is short") {
  const std::string dir = TempDir();
  for (size_t len : {200u, 250u, 255u}) {
    const std::string name = std::string(len - 5, 'a') + ".yaml";
    CAPTURE(len);
    const ShResult r = Sh(dir, "\"$K\" import-hf " + kHfConfig + " -o " + name);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(dir + "/" + name));
    fs::remove(dir + "/" + name);
  }
  CHECK(Listing(dir).empty());
}

TEST_CASE("count flags outside their documented range: exit 2 before any work") {
  const std::string dir = TempDir();
  for (const std::string args :
       {"bench --threads 100000", "bench --threads 1025", "bench --threads 2147483647",
        "bench --threads -1", "bench --repeats 0", "bench --repeats 100000",
        "latency llama-3.1-8b --validate --threads 2", "latency llama-3.1-8b --max-batch 0",
        "capacity llama-3.1-8b --engine llama.cpp -np 70000",
        "capacity llama-3.1-8b --cuda-graph-max-bs 1000000", "capacity llama-3.1-8b -dp 0",
        "check --vllm-args 'vllm serve llama-3.1-8b' --require-concurrency 99999999999",
        "check --vllm-args 'vllm serve llama-3.1-8b' --gpu-count 0", "demo -n 100000",
        "size llama-3.1-8b -tp 0"}) {
    CAPTURE(args);
    const ShResult r = Sh(dir, "\"$K\" " + args);
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(IsOneCleanLine(r.err));
  }
  // The range is in the help text.
  const ShResult help = Sh(dir, "\"$K\" bench --help");
  CHECK(help.out.find("0 to 1024") != std::string::npos);
}

TEST_CASE("check --format github: file names cannot inject workflow commands") {
  const std::string dir = TempDir();
  const std::string text = ReadFile(kDeploy);
  for (const std::string name :
       {"x\n::error file=README.md,line=1::PWNED.yaml", "::warning::PWNED.yaml",
        " ::notice::PWNED.yaml", "a%0Ab.yaml", "c,line=1:d.yaml", "e\r::error::PWNED.yaml"}) {
    WriteFile(dir, name, text);
  }
  // A failing copy puts the file name into ::error properties too.
  std::string failing = text;
  failing.replace(failing.find("min_concurrency: 8 "), 18, "min_concurrency: 9999");
  WriteFile(dir, "f,a:i%l\n::error::x.yaml", failing);
  const ShResult r = Sh(dir, "\"$K\" check . --format github");
  CHECK(r.exit_code == 1);
  size_t start = 0;
  int lines = 0;
  while (start < r.out.size()) {
    const size_t end = r.out.find('\n', start);
    std::string line = r.out.substr(start, end - start);
    start = end == std::string::npos ? r.out.size() : end + 1;
    ++lines;
    CAPTURE(line);
    CHECK(line.find('\r') == std::string::npos);
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "::") == 0) {
      // A command: kvplan's own, with the name escaped in its properties, so
      // the name cannot end them early or add a key of its own.
      CHECK((line.rfind("::error file=", 0) == 0 || line.rfind("::notice file=", 0) == 0));
      const size_t space = line.find(' ');
      const size_t data = line.find("::", 2);
      REQUIRE(data != std::string::npos);
      REQUIRE(space < data);
      const std::string props = line.substr(space + 1, data - space - 1);
      size_t at = 0;
      while (at <= props.size()) {
        size_t comma = props.find(',', at);
        if (comma == std::string::npos) comma = props.size();
        const std::string key = props.substr(at, props.find('=', at) - at);
        CHECK((key == "file" || key == "line" || key == "col" || key == "title"));
        at = comma + 1;
      }
    }
  }
  CHECK(lines >= 7);
  CHECK(r.out.find("f%2Ca%3Ai%25l%0A%3A%3Aerror%3A%3Ax.yaml") != std::string::npos);
  // The text format keeps every file on one line too.
  const ShResult t = Sh(dir, "\"$K\" check .");
  CHECK(t.out.find("\n::") == std::string::npos);
  CHECK(t.out.find("\r") == std::string::npos);
}

TEST_CASE("JUnit and JSON reports are valid for any file name or model name") {
  const std::string dir = TempDir();
  const std::string text = ReadFile(kDeploy);
  WriteFile(dir, "bad\xff.yaml", text);
  WriteFile(dir, "ctl\x01\x1b.yaml", text);
  std::string named = text;
  named.replace(named.find("name: llama-8b-chat"), 19, "name: \"te\\uFFFEst\\uFFFF\"");
  WriteFile(dir, "named.yaml", named);
  WriteFile(dir, "invalid\xfe.yaml", "model: [\n");
  for (const std::string format : {"junit", "json"}) {
    CAPTURE(format);
    const ShResult r = Sh(dir, "\"$K\" check . --format " + format);
    CHECK(r.exit_code == 2);  // the invalid file
    if (format == "json") {
      CHECK(nlohmann::json::accept(r.out));
    } else {
      XmlCheck xml;
      CHECK(xml.Check(r.out) == "");
      CHECK(XmlCharsProblem(r.out) == "");
      CHECK(r.out.find("te\xef\xbf\xbdst") != std::string::npos);
    }
  }
}

TEST_CASE("errors are one line with control characters escaped") {
  const std::string dir = TempDir();
  WriteFile(dir, "new\nline.yaml", "model: [\n");
  for (const std::string args :
       {"size llama-3.1-8b --format $'x\\ry\\x1b[2J'", "--format $'a\\x1bb'",
        "size 'new\nline.yaml'", "check 'new\nline.yaml'", "size $'no\\rsuch\\x1b'",
        "capacity llama-3.1-8b --engine $'v\\x07llm'", "$'co\\x1bmmand'"}) {
    CAPTURE(args);
    const ShResult r = Sh(dir, "\"$K\" " + args, "bash");
    CHECK(r.exit_code == 2);
    CHECK(IsOneCleanLine(r.err));
  }
}
