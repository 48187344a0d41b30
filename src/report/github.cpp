#include "report/github.h"

#include <fmt/format.h>

#include <cctype>

#include "report/check.h"
#include "util/error.h"

namespace kvplan {
namespace {

// Workflow-command escaping (actions/toolkit command.ts): data escapes % CR LF;
// properties also escape : and ,.
std::string GhData(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string GhProp(const std::string& s) {
  std::string out;
  for (char c : GhData(s)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

// A plain line of the report as the runner reads it: one line (CR, LF and
// other control characters escaped, util/error.h OneLine), and never one it
// takes for a command. The runner trims leading white space and runs any
// line that then starts with "::", so a file named "::error ..." or
// " ::warning ..." at the start of a line is made "./::error ...": the
// same file, no command.
std::string GhPlainLine(const std::string& line) {
  std::string out = OneLine(line);
  const unsigned char first = out.empty() ? 'x' : static_cast<unsigned char>(out[0]);
  if (!std::isalnum(first) && first != '/' && first != '.' && first != '_' && first != '-') {
    out = "./" + out;
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

}  // namespace

std::string CheckGithub(const std::vector<CheckOutcome>& all) {
  std::string out;
  for (const CheckOutcome& o : all) {
    // A command line (--engine-args, --vllm-args) has no file to annotate.
    std::string loc =
        o.file == "--vllm-args" || o.file == "--engine-args" ? "" : "file=" + GhProp(o.file);
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
      if (i.skipped) continue;  // follows from a failure annotated already
      const std::string fixes = FixesPhrase(i);
      out += fmt::format("::error {}{}title={}::measured {}, required {}: {}{}\n", w,
                         w.empty() ? "" : ",", GhProp("kvplan check " + i.name), GhData(i.measured),
                         GhData(i.required), GhData(i.detail),
                         fixes.empty() ? "" : GhData(" (" + fixes + ")"));
    }
    for (const std::string& n : r.notes) {
      out += fmt::format("::notice {}{}title=kvplan check::{}\n", loc, loc.empty() ? "" : ",",
                         GhData(n));
    }
    out += GhPlainLine(fmt::format("{}: {} ({})", o.file, r.summary, CheckVerdict(r))) + "\n";
  }
  return out;
}

}  // namespace kvplan
