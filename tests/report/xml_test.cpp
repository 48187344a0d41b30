#include "report/xml.h"

#include <doctest/doctest.h>

using namespace kvplan;

TEST_CASE("XmlEscape: reserved characters escaped, forbidden ones replaced by U+FFFD") {
  const std::string r = "\xef\xbf\xbd";
  CHECK(XmlEscape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(XmlEscape("tab\tnl\n") == "tab\tnl\n");
  CHECK(XmlEscape("cr\r") == "cr&#13;");
  CHECK(XmlEscape("bell\x07 esc\x1b") == "bell" + r + " esc" + r);
  CHECK(XmlEscape(std::string("nul\0", 4)) == "nul" + r);
  CHECK(XmlEscape("te\xef\xbf\xbest") == "te" + r + "st");  // U+FFFE
  CHECK(XmlEscape("\xef\xbf\xbf") == r);                    // U+FFFF
  CHECK(XmlEscape("bad\xff.yaml") == "bad" + r + ".yaml");
  CHECK(XmlEscape("\xed\xb0\x80") == r + r + r);  // a lone surrogate
  CHECK(XmlEscape("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");
}
