// kvplan check DEPLOY.yaml... | DIR: the CI gate. Each requirement is
// reported as measured vs required, PASS or FAIL, with the startup failures
// the engine itself would hit. Exit 0 all pass, 1 any fails, 2 invalid input.
#include "plan/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "report/json.h"
#include "spec/catalog.h"
#include "spec/deploy_config.h"
#include "spec/vllm_args.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct CheckOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::string vllm_args;
  std::optional<std::string> vllm_version;
  std::string gpu;
  uint64_t gpu_count = 0;
  // Unset unless given: a given 0, negative or NaN is an error, not "no requirement".
  std::optional<uint64_t> require_concurrency;
  std::string require_tokens;
  std::optional<double> require_headroom;
};

// One checked file: a report, or the reason it could not be checked.
struct Outcome {
  std::string file;
  std::optional<CheckReport> report;
  std::string error;  // one line, "file:line:col: field: why" where known
};

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

// The files the arguments name: each file as given, each folder's *.yaml
// and *.yml files (name order, WalkConfigs). A folder with none is an
// Outcome of its own, an error, so that --format junit and json still print
// a whole document; so is each folder the walk cannot read.
std::vector<Outcome> ExpandPaths(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<Outcome> out;
  // A file named twice (itself and in its folder) is checked once.
  std::set<std::string> seen;
  const auto add = [&](Outcome x) {
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

// Loads the model and GPU a config names; their errors point at the config's line.
CheckReport CheckConfig(const DeployConfig& d) {
  ModelSpec model;
  HardwareSpec gpu;
  try {
    model = LoadModel(d.model);
  } catch (const Error& e) {
    Fail("{}model: {}", d.model_pos.Prefix(), e.what());
  }
  try {
    gpu = LoadHardware(d.gpu);
  } catch (const Error& e) {
    Fail("{}gpu: {}", d.gpu_pos.Prefix(), e.what());
  }
  return RunChecks(model, gpu, d);
}

Outcome CheckFile(const std::string& path) {
  Outcome o;
  o.file = path;
  try {
    o.report = CheckConfig(ReadDeployConfig(path));
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

Outcome CheckCommandLine(const CheckOptions& opt) {
  Outcome o;
  o.file = "--vllm-args";
  try {
    if (opt.gpu.empty()) Fail("--vllm-args needs --gpu (a catalog name or a profile YAML)");
    DeployConfig d = ParseVllmCommand(opt.vllm_args);
    if (opt.vllm_version) d.vllm_version = ParseVllmVersion(*opt.vllm_version, "--vllm-version");
    d.file = "";
    d.gpu = opt.gpu;
    d.gpu_count = opt.gpu_count;
    Requirements& q = d.requirements;
    // The same limits as a config file's requirements (deploy_config.cpp).
    if (opt.require_concurrency) {
      if (*opt.require_concurrency == 0) Fail("--require-concurrency: must be at least 1");
      q.min_concurrency = opt.require_concurrency;
      q.pos["min_concurrency"] = {};
    }
    if (!opt.require_tokens.empty()) {
      q.min_tokens_in_cache = ParseTokens(opt.require_tokens, "--require-tokens");
      if (*q.min_tokens_in_cache == 0) Fail("--require-tokens: must be at least 1 token");
      q.pos["min_tokens_in_cache"] = {};
    }
    if (opt.require_headroom) {
      const double h = *opt.require_headroom;
      if (!(h >= 0 && h < 100)) {
        Fail("--require-headroom: {} is not a percentage from 0 to below 100", h);
      }
      if (!q.min_concurrency) Fail("--require-headroom needs --require-concurrency");
      q.min_headroom_percent = h;
      q.pos["min_headroom_percent"] = {};
    }
    o.report = CheckConfig(d);
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

// ---- text ----

std::string Text(const std::vector<Outcome>& all) {
  std::string out;
  for (const Outcome& o : all) {
    if (!o.report) continue;
    const CheckReport& r = *o.report;
    out += fmt::format("{}: {}\n", o.file, r.summary);
    size_t width = 0;
    for (const CheckItem& i : r.items) width = std::max(width, i.name.size());
    for (const CheckItem& i : r.items) {
      out += fmt::format("  {}  {:<{}}  measured {}, required {}\n", i.pass ? "PASS" : "FAIL",
                         i.name, width, i.measured, i.required);
      out += fmt::format("        {:<{}}  {}{}\n", "", width,
                         i.pos.line > 0 ? fmt::format("(line {}) ", i.pos.line) : "", i.detail);
    }
    for (const std::string& n : r.notes) out += "  note: " + n + "\n";
    out += r.Pass() ? fmt::format("  PASS: all {} checks pass\n\n", r.items.size())
                    : fmt::format("  FAIL: {} of {} checks fail\n\n", r.Failures(), r.items.size());
  }
  return out;
}

// ---- json ----

Json ItemJson(const CheckItem& i) {
  Json j;
  j.Set("name", i.name);
  j.Set("status", i.pass ? "pass" : "fail");
  j.Set("measured", i.measured);
  j.Set("required", i.required);
  j.Set("detail", i.detail);
  j.Set("line", static_cast<uint64_t>(i.pos.line));
  return j;
}

std::string JsonOut(const std::vector<Outcome>& all) {
  Json files = Json::MakeArray();
  uint64_t passed = 0, failed = 0, invalid = 0;
  for (const Outcome& o : all) {
    Json f;
    f.Set("file", o.file);
    if (!o.report) {
      ++invalid;
      f.Set("status", "invalid");
      f.Set("error", o.error);
    } else {
      const CheckReport& r = *o.report;
      (r.Pass() ? passed : failed)++;
      f.Set("status", r.Pass() ? "pass" : "fail");
      f.Set("name", r.name);
      f.Set("summary", r.summary);
      Json items = Json::MakeArray();
      for (const CheckItem& i : r.items) items.Push(ItemJson(i));
      f.Set("checks", std::move(items));
      Json notes = Json::MakeArray();
      for (const std::string& n : r.notes) notes.Push(n);
      f.Set("notes", std::move(notes));
      f.Set("kv_cache_tokens", r.capacity.cluster_max_tokens);
      f.Set("max_concurrency", r.capacity.max_concurrency);
    }
    files.Push(std::move(f));
  }
  Json j;
  j.Set("passed", passed);
  j.Set("failed", failed);
  j.Set("invalid", invalid);
  j.Set("files", std::move(files));
  return j.Dump() + "\n";
}

// ---- junit ----

std::string Xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string Junit(const std::vector<Outcome>& all) {
  size_t tests = 0, failures = 0, errors = 0;
  std::string suites;
  for (const Outcome& o : all) {
    std::string file = o.file;
    if (!o.report) {
      ++tests;
      ++errors;
      suites += fmt::format(
          "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
          "    <testcase classname=\"kvplan.check\" name=\"valid config\" file=\"{}\">\n"
          "      <error message=\"{}\" type=\"invalid\"/>\n"
          "    </testcase>\n  </testsuite>\n",
          Xml(file), Xml(file), Xml(o.error));
      continue;
    }
    const CheckReport& r = *o.report;
    tests += r.items.size();
    failures += r.Failures();
    suites += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                          Xml(file), r.items.size(), r.Failures());
    for (const CheckItem& i : r.items) {
      suites += fmt::format("    <testcase classname=\"kvplan.check.{}\" name=\"{}\" file=\"{}\"{}",
                            Xml(r.name), Xml(i.name), Xml(file),
                            i.pos.line > 0 ? fmt::format(" line=\"{}\"", i.pos.line) : "");
      if (i.pass) {
        suites += "/>\n";
      } else {
        suites += fmt::format(">\n      <failure message=\"measured {}, required {}\" "
                              "type=\"requirement\">{}</failure>\n    </testcase>\n",
                              Xml(i.measured), Xml(i.required), Xml(i.detail));
      }
    }
    std::string out = r.summary + "\n";
    for (const std::string& n : r.notes) out += "note: " + n + "\n";
    suites += "    <system-out>" + Xml(out) + "</system-out>\n  </testsuite>\n";
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"kvplan check\" tests=\"{}\" failures=\"{}\" "
                     "errors=\"{}\">\n{}</testsuites>\n",
                     tests, failures, errors, suites);
}

// ---- github ----

// Workflow-command escaping (actions/toolkit command.ts): data escapes % CR LF;
// properties also escape : and ,.
std::string GhData(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string GhProp(const std::string& s) {
  std::string out;
  for (char c : GhData(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

// "path:12:3: message" -> line 12, col 3 (when the message names `file`).
SourcePos PosInMessage(const std::string& msg, const std::string& file) {
  SourcePos p{file, 0, 0};
  if (msg.rfind(file + ":", 0) != 0) return p;
  size_t i = file.size() + 1;
  auto number = [&](int& out) {
    size_t start = i;
    while (i < msg.size() && std::isdigit(static_cast<unsigned char>(msg[i]))) ++i;
    if (i == start || i >= msg.size() || msg[i] != ':') return false;
    out = std::stoi(msg.substr(start, i - start));
    ++i;
    return true;
  };
  int line = 0, col = 0;
  if (number(line) && number(col)) {
    p.line = line;
    p.column = col;
  }
  return p;
}

std::string Github(const std::vector<Outcome>& all) {
  std::string out;
  for (const Outcome& o : all) {
    std::string loc = o.file == "--vllm-args" ? "" : "file=" + GhProp(o.file);
    auto where = [&](const SourcePos& p) {
      std::string s = loc;
      if (!s.empty() && p.line > 0) s += fmt::format(",line={},col={}", p.line, p.column);
      return s;
    };
    if (!o.report) {
      std::string w = where(PosInMessage(o.error, o.file));
      out += fmt::format("::error {}{}title={}::{}\n", w, w.empty() ? "" : ",",
                         GhProp("kvplan check: invalid config"), GhData(o.error));
      continue;
    }
    const CheckReport& r = *o.report;
    for (const CheckItem& i : r.items) {
      if (i.pass) continue;
      std::string w = where(i.pos);
      out += fmt::format("::error {}{}title={}::measured {}, required {}: {}\n", w,
                         w.empty() ? "" : ",", GhProp("kvplan check " + i.name),
                         GhData(i.measured), GhData(i.required), GhData(i.detail));
    }
    for (const std::string& n : r.notes) {
      out += fmt::format("::notice {}{}title=kvplan check::{}\n", loc, loc.empty() ? "" : ",",
                         GhData(n));
    }
    out += fmt::format("{}: {} ({}: {} of {} checks fail)\n", o.file, r.summary,
                       r.Pass() ? "PASS" : "FAIL", r.Failures(), r.items.size());
  }
  return out;
}

int Run(const CheckOptions& o) {
  if (o.files.empty() && o.vllm_args.empty()) {
    Fail("give deployment config files or folders, or --vllm-args \"vllm serve ...\"");
  }
  if (!o.vllm_args.empty() && !o.files.empty()) {
    Fail("give either deployment config files or --vllm-args, not both");
  }
  if (o.vllm_args.empty() &&
      (!o.gpu.empty() || o.require_concurrency || !o.require_tokens.empty() || o.require_headroom ||
       o.gpu_count || o.vllm_version)) {
    Fail(
        "--gpu, --gpu-count, --vllm-version and --require-* go with --vllm-args (a config file "
        "states its own)");
  }
  std::vector<Outcome> all;
  if (!o.vllm_args.empty()) {
    all.push_back(CheckCommandLine(o));
  } else {
    for (Outcome& x : ExpandPaths(o.files)) all.push_back(x.error.empty() ? CheckFile(x.file) : x);
  }
  bool invalid = false, failed = false;
  for (const Outcome& x : all) {
    if (!x.report) invalid = true;
    else if (!x.report->Pass()) failed = true;
  }
  if (o.format == "json") Print(JsonOut(all));
  else if (o.format == "junit") Print(Junit(all));
  else if (o.format == "github") Print(Github(all));
  else Print(Text(all));
  FlushOutput();
  // Invalid files are also reported on stderr, one line each, in every format.
  for (const Outcome& x : all) {
    if (!x.report) fmt::print(stderr, "kvplan: error: {}\n", x.error);
  }
  return invalid ? 2 : failed ? 1 : 0;
}

}  // namespace

void SetupCheckCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand(
      "check", "CI gate: check deployment configs against their requirements (exit 1 on FAIL)");
  sub->add_option("files", o->files, "Deployment config YAMLs, or folders of them");
  AddFormatOption(sub, o->format, {"text", "json", "junit", "github"});
  sub->add_option("--vllm-args", o->vllm_args,
                  "Check a vLLM command line instead: \"vllm serve MODEL --max-model-len N ...\" "
                  "(or docker run ... vllm/vllm-openai ARGS; env/sudo/uv run launchers skipped)");
  sub->add_option("--gpu", o->gpu, "With --vllm-args: the GPU (catalog name or profile YAML)");
  sub->add_option("--gpu-count", o->gpu_count,
                  "With --vllm-args: GPUs on the machine (default: tp x pp x dp)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 16));
  sub->add_option("--vllm-version", o->vllm_version,
                  "With --vllm-args: the vLLM release (default: latest; before 0.21 CUDA graphs "
                  "are not subtracted and the default utilization is 0.9)");
  sub->add_option("--require-concurrency", o->require_concurrency,
                  "With --vllm-args: requests of max_model_len that must fit at once");
  sub->add_option("--require-tokens", o->require_tokens,
                  "With --vllm-args: tokens the KV cache must hold (4k = 4000, 4K = 4096)");
  sub->add_option("--require-headroom", o->require_headroom,
                  "With --vllm-args: % of the cache left spare at --require-concurrency");
  sub->footer(R"(Examples:
  kvplan check deploy/                        every *.yaml under deploy/
  kvplan check deploy/chat.yaml --format github
  kvplan check deploy/*.yaml --format junit > kvplan-junit.xml
  kvplan check --vllm-args "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768 -tp 2" \
               --gpu h100-sxm --require-concurrency 8

Config schema: docs/deploy-config.md. Exit codes: 0 every check passes,
1 some check fails, 2 some input is invalid (it is reported, the rest still run).)");
  sub->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace kvplan
