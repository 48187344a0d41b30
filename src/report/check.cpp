#include "report/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "report/json.h"
#include "report/terminal.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

const char* Status(const CheckItem& i) {
  return i.pass ? "pass" : i.skipped ? "skip" : "fail";
}

Json ItemJson(const CheckItem& i) {
  Json j;
  j.Set("name", i.name);
  j.Set("status", Status(i));
  // Numbers for machines; the words beside them for people.
  if (i.measured_value) {
    j.Set("measured", *i.measured_value);
  } else {
    j.Set("measured", nullptr);
  }
  if (i.required_value) {
    j.Set("required", *i.required_value);
  } else {
    j.Set("required", nullptr);
  }
  j.Set("unit", i.unit);
  j.Set("comparison", i.comparison);
  j.Set("measured_text", i.measured);
  j.Set("required_text", i.required);
  j.Set("detail", i.detail);
  Json fixes = Json::MakeArray();
  for (const std::string& f : i.fixes) fixes.Push(f);
  j.Set("fixes", std::move(fixes));
  j.Set("line", static_cast<uint64_t>(i.pos.line));
  return j;
}

}  // namespace

std::string CheckVerdict(const CheckReport& r) {
  const size_t n = r.items.size();
  const std::string skipped = r.Skipped() == 0 ? "" : fmt::format(", {} skipped", r.Skipped());
  if (!r.Pass()) {
    return fmt::format("FAIL: {} of {} {}{}", r.Failures(), Plural(n, "check"),
                       r.Failures() == 1 ? "fails" : "fail", skipped);
  }
  if (n == 1) return "PASS: the 1 check passes" + skipped;
  return fmt::format("PASS: all {} checks pass{}", n, skipped);
}

std::string FixesPhrase(const CheckItem& i) {
  if (i.fixes.empty()) return "";
  std::string out = "passes with " + i.fixes[0];
  for (size_t k = 1; k < i.fixes.size(); ++k) out += ", or " + i.fixes[k];
  return out;
}

std::string CheckText(const std::vector<CheckOutcome>& all, size_t line_width) {
  std::string out;
  for (const CheckOutcome& o : all) {
    if (!o.report) continue;
    const CheckReport& r = *o.report;
    // One line whatever the file or model is named, never starting with
    // "::" (a newline in either, or a file named "::error ...", would start
    // a line a CI runner reads as a workflow command): "./::error ...".
    const bool plain = !o.file.empty() &&
                       (std::isalnum(static_cast<unsigned char>(o.file[0])) || o.file[0] == '/' ||
                        o.file[0] == '.' || o.file[0] == '_' || o.file[0] == '-');
    out += OneLine(fmt::format("{}{}: {}", plain ? "" : "./", o.file, r.summary)) + "\n";
    size_t width = 0;
    for (const CheckItem& i : r.items) width = std::max(width, i.name.size());
    for (const CheckItem& i : r.items) {
      const char* status = i.pass ? "PASS" : i.skipped ? "SKIP" : "FAIL";
      // A check met in words ("starts") says it once; figures say both sides.
      const std::string result = i.skipped ? "required " + i.required
                                 : i.pass && i.measured == i.required
                                     ? i.measured
                                     : "measured " + i.measured + ", required " + i.required;
      out += OneLine(fmt::format("  {}  {:<{}}  {}", status, i.name, width, result)) + "\n";
      out += OneLine(fmt::format("        {:<{}}  {}{}", "", width,
                                 i.pos.line > 0 ? fmt::format("(line {}) ", i.pos.line) : "",
                                 i.detail)) +
             "\n";
      if (!i.fixes.empty()) {
        out += OneLine(fmt::format("        {:<{}}  {}", "", width, FixesPhrase(i))) + "\n";
      }
    }
    for (const std::string& n : r.notes) out += OneLine("  note: " + n) + "\n";
    out += "  " + CheckVerdict(r) + "\n\n";
  }
  return line_width == 0 ? out : WrapText(out, line_width, 0);
}

// ---- json ----

std::string CheckJson(const std::vector<CheckOutcome>& all) {
  Json files = Json::MakeArray();
  uint64_t passed = 0, failed = 0, invalid = 0;
  for (const CheckOutcome& o : all) {
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

}  // namespace kvplan
