#include "report/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "report/json.h"
#include "report/terminal.h"
#include "util/error.h"

namespace kvplan {
namespace {

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

}  // namespace

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
      out += OneLine(fmt::format("  {}  {:<{}}  measured {}, required {}", i.pass ? "PASS" : "FAIL",
                                 i.name, width, i.measured, i.required)) +
             "\n";
      out += OneLine(fmt::format("        {:<{}}  {}{}", "", width,
                                 i.pos.line > 0 ? fmt::format("(line {}) ", i.pos.line) : "",
                                 i.detail)) +
             "\n";
    }
    for (const std::string& n : r.notes) out += OneLine("  note: " + n) + "\n";
    out += r.Pass() ? (r.items.size() == 1
                           ? std::string("  PASS: the 1 check passes\n\n")
                           : fmt::format("  PASS: all {} checks pass\n\n", r.items.size()))
                    : fmt::format("  FAIL: {} of {} checks fail\n\n", r.Failures(), r.items.size());
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
