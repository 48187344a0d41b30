#include "report/junit.h"

#include <fmt/format.h>

#include "report/check.h"
#include "report/xml.h"

namespace kvplan {

std::string CheckJunit(const std::vector<CheckOutcome>& all) {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string suites;
  for (const CheckOutcome& o : all) {
    std::string file = o.file;
    if (!o.report) {
      ++tests;
      ++errors;
      suites += fmt::format(
          "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
          "    <testcase classname=\"kvplan.check\" name=\"valid config\" file=\"{}\">\n"
          "      <error message=\"{}\" type=\"invalid\"/>\n"
          "    </testcase>\n  </testsuite>\n",
          XmlEscape(file), XmlEscape(file), XmlEscape(o.error));
      continue;
    }
    const CheckReport& r = *o.report;
    tests += r.items.size();
    failures += r.Failures();
    skipped += r.Skipped();
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
        XmlEscape(file), r.items.size(), r.Failures(), r.Skipped());
    for (const CheckItem& i : r.items) {
      suites += fmt::format("    <testcase classname=\"kvplan.check.{}\" name=\"{}\" file=\"{}\"{}",
                            XmlEscape(r.name), XmlEscape(i.name), XmlEscape(file),
                            i.pos.line > 0 ? fmt::format(" line=\"{}\"", i.pos.line) : "");
      if (i.pass) {
        suites += "/>\n";
      } else if (i.skipped) {
        suites += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                              XmlEscape(i.detail));
      } else {
        const std::string fixes = FixesPhrase(i);
        suites += fmt::format(
            ">\n      <failure message=\"measured {}, required {}\" "
            "type=\"requirement\">{}</failure>\n    </testcase>\n",
            XmlEscape(i.measured), XmlEscape(i.required),
            XmlEscape(fixes.empty() ? i.detail : i.detail + " (" + fixes + ")"));
      }
    }
    std::string out = r.summary + "\n";
    for (const std::string& n : r.notes) out += "note: " + n + "\n";
    suites += "    <system-out>" + XmlEscape(out) + "</system-out>\n  </testsuite>\n";
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"kvplan check\" tests=\"{}\" failures=\"{}\" "
      "errors=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
      tests, failures, errors, skipped, suites);
}

// ---- github ----

}  // namespace kvplan
