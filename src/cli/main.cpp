// kvplan: KV-cache memory and capacity planner for LLM serving.
// Exit codes: 0 success, 1 a check failed, 2 bad input or usage.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/help.h"
#include "util/error.h"
#include "util/suggest.h"

namespace {

constexpr const char* kFooter = R"(Examples:
  kvplan size llama-3.1-70b -c 4K --explain     how big is the cache, step by step
  kvplan models                                 the bundled model catalog
  kvplan size ./my-model.yaml -c 32k -b 8 --kv-cache-dtype fp8 --format json

Token counts: 4096, 4k (= 4000), 4K (= 4096). Memory: 80GB (10^9), 80GiB (2^30).
Exit codes: 0 success, 1 a check failed, 2 bad input.)";

// exit_code, unless stdout could not be written: a full disk or a closed
// descriptor must not pass for success (a spec or a JUnit report would be
// empty or cut short).
int Flushed(int exit_code) {
  kvplan::FlushOutput();
  if (std::ferror(stdout) || kvplan::PrintErrno() != 0) {
    const int err = kvplan::PrintErrno();
    kvplan::PrintError(fmt::format("cannot write the output to stdout{}",
                                   err != 0 ? fmt::format(": {}", std::strerror(err)) : ""));
    return 2;
  }
  return exit_code;
}

// The process as every command expects to find it, before any work:
// - SIGXFSZ ignored, so a write past `ulimit -f` fails with EFBIG and is
//   reported (temporary file removed, exit 2) instead of killing kvplan
//   mid-write with a temporary file left behind;
// - descriptors 0, 1 and 2 open: one closed by the caller (`2>&-`) would
//   otherwise be the number the next open(2) returns, and an error line
//   would land in an output file. /dev/null is opened read-only there, so
//   a write to a closed stdout still fails (exit 2) as it did.
void PrepareProcess() {
  std::signal(SIGXFSZ, SIG_IGN);
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int got = ::open("/dev/null", O_RDONLY);
      if (got >= 0 && got != fd) {
        ::dup2(got, fd);
        ::close(got);
      }
    }
  }
}

// vLLM and llama.cpp spell some flags with one dash and two or three
// letters (-tp, -pp, -dp, -np, -fa, -ctk, -ctv, -kvu, -ngl, -ts, -nkvo);
// CLI11 takes one-letter short options only, so those become long ones.
std::vector<std::string> NormalizeArgs(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    for (const char* flag :
         {"-tp", "-pp", "-dp", "-np", "-fa", "-ctk", "-ctv", "-kvu", "-ngl", "-ts", "-nkvo"}) {
      std::string f(flag);
      if (args[i] == f || args[i].rfind(f + "=", 0) == 0) args[i] = "-" + args[i];
    }
  }
  return args;
}

// Every option of every command: an empty value is an error (an unset
// shell variable must not quietly mean the default), and an unsigned one
// refuses a minus sign (CLI11 wrapped -1 to 2^64 - 1).
void GuardValues(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& v) { return v.empty() ? std::string("empty value") : std::string(); }, "",
      "");
  const CLI::Validator non_negative(
      [](std::string& v) {
        const size_t at = v.find_first_not_of(" \t");
        return at != std::string::npos && v[at] == '-' ? "'" + v + "' is negative" : std::string();
      },
      "", "");
  for (CLI::App* sub : app.get_subcommands({})) {
    for (CLI::Option* opt : sub->get_options({})) {
      if (opt->get_type_size() == 0 || opt->get_name() == "--help") continue;  // flags
      opt->check(non_empty);
      if (opt->get_type_name().rfind("UINT", 0) == 0) opt->check(non_negative);
    }
    GuardValues(*sub);
  }
}

// CLI11's message for arguments no option takes names them as it parsed
// them: in reverse, with -np made --np. Says them as the user typed them,
// in order: each extra is matched to the last unmatched word that reads the
// same once normalized (extras come after what was taken).
std::string UnexpectedArgs(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> extras = app.remaining(true);
  const std::vector<std::string> args = NormalizeArgs(argc, argv);
  std::vector<std::string> typed;
  for (size_t i = args.size(); i-- > 1 && !extras.empty();) {
    const auto it = std::find(extras.begin(), extras.end(), args[i]);
    if (it == extras.end()) continue;
    extras.erase(it);
    typed.insert(typed.begin(), argv[i]);
  }
  std::string list;
  for (const std::string& w : typed) list += (list.empty() ? "" : " ") + w;
  return typed.size() == 1 ? "The following argument was not expected: " + list
                           : "The following arguments were not expected: " + list;
}

}  // namespace

int main(int argc, char** argv) {
  PrepareProcess();
  CLI::App app{"kvplan — KV-cache memory and capacity planner for LLM serving", "kvplan"};
  app.require_subcommand(1);
  app.footer(kFooter);
  app.set_version_flag("--version", std::string("kvplan ") + KVPLAN_VERSION);
  int exit_code = 0;
  for (kvplan::CommandSetup setup : kvplan::kCommands) setup(app, exit_code);
  GuardValues(app);
  kvplan::UseWrappingHelp(app, kvplan::OutputWidth());
  try {
    std::vector<std::string> args = NormalizeArgs(argc, argv);
    if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
      if (std::find(names.begin(), names.end(), args[1]) == names.end()) {
        kvplan::Fail("unknown command '{}'{}; `kvplan --help` lists the commands", args[1],
                     kvplan::DidYouMean(args[1], names));
      }
    }
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
    app.parse(reversed);
  } catch (const CLI::Success& e) {
    return Flushed(app.exit(e));  // --help and --version print to stdout and exit 0
  } catch (const CLI::ExtrasError&) {
    kvplan::PrintError(UnexpectedArgs(app, argc, argv) + " (see kvplan --help)");
    return 2;
  } catch (const CLI::ParseError& e) {
    // CLI11 folds its own text over lines and echoes values as given (a CR
    // or an escape sequence from `--format $'x\ry'`): one line, escaped.
    std::string msg = e.what();
    for (char& c : msg) {
      if (c == '\n') c = ' ';
    }
    kvplan::PrintError(msg + " (see kvplan --help)");
    return 2;
  } catch (const kvplan::Error& e) {
    kvplan::PrintError(e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    kvplan::PrintError("out of memory");
    return 2;
  } catch (const std::exception& e) {
    kvplan::WriteStderr("kvplan: internal error: " + kvplan::OneLine(e.what()) + "\n");
    return 2;
  }
  return Flushed(exit_code);
}
