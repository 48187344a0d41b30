// Fuzzes the report writers that carry input text into a format with rules
// of its own: `check --format junit` (XML 1.0), `--format json`, `--format
// github` (workflow commands) and the text report. The bytes are split at
// NUL into a file name, a config name, a summary, an item's fields, a note
// and an error; whatever they hold, the JUnit document has only characters
// XML 1.0 allows, the JSON parses, and no line of the GitHub or text report
// is a workflow command kvplan did not write.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "report/check.h"
#include "report/github.h"
#include "report/junit.h"
#include "report/xml.h"

using namespace kvplan;

namespace {

// True when `s` is UTF-8 of characters the XML 1.0 Char production allows.
bool XmlChars(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80           ? 1
                     : (b >> 5) == 6    ? 2
                     : (b >> 4) == 0xe  ? 3
                     : (b >> 3) == 0x1e ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 2) return false;
      cp = (cp << 6) | (c & 0x3fu);
    }
    const bool overlong =
        (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    const bool ok = cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
                    (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
    if (overlong || !ok) return false;
    i += n;
  }
  return true;
}

// Every line of `text` that the Actions runner would run (after its
// leading white space, "::") is one kvplan writes: ::error or ::notice
// with escaped properties, never one made of input text.
void CheckNoInjectedCommand(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    fuzz::Require(line.find('\r') == std::string::npos, "a raw CR in a report line");
    size_t first = 0;
    while (first < line.size() && (line[first] == ' ' || line[first] == '\t')) ++first;
    if (line.compare(first, 2, "::") != 0) continue;
    fuzz::Require(first == 0 && (line.rfind("::error ", 0) == 0 || line.rfind("::notice ", 0) == 0),
                  "a line that is a workflow command kvplan did not write");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts(8);
  size_t k = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && k + 1 < parts.size()) {
      ++k;
    } else {
      parts[k] += static_cast<char>(data[i]);
    }
  }
  CheckReport r;
  r.file = parts[0];
  r.name = parts[1];
  r.summary = parts[2];
  r.items.push_back({parts[3], false, parts[4], parts[5], parts[6], {parts[0], 3, 5}});
  r.items.push_back({"startup", true, "ok", "ok", "", {}});
  r.notes.push_back(parts[6]);
  std::vector<CheckOutcome> all;
  all.push_back({parts[0], r, ""});
  all.push_back({parts[1], std::nullopt, OneLine(parts[7])});

  const std::string junit = CheckJunit(all);
  fuzz::Require(XmlChars(junit), "JUnit output has a character XML 1.0 forbids");
  fuzz::Require(XmlChars(XmlEscape(parts[7])), "XmlEscape left a character XML 1.0 forbids");
  const std::string json = CheckJson(all);
  fuzz::Require(nlohmann::json::accept(json), "JSON output does not parse");
  CheckNoInjectedCommand(CheckGithub(all));
  CheckNoInjectedCommand(CheckText(all));
  return 0;
}
