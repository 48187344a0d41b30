#include "util/utf8.h"

#include <doctest/doctest.h>

using namespace kvplan;

TEST_CASE("ValidUtf8: valid text unchanged, each bad byte one U+FFFD") {
  const std::string r = "\xef\xbf\xbd";
  CHECK(ValidUtf8("plain.yaml") == "plain.yaml");
  CHECK(ValidUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xf0\x9f\x98\x80");
  CHECK(ValidUtf8("a\xff"
                  "b") == "a" + r + "b");
  CHECK(ValidUtf8("\xfe\xff") == r + r);
  CHECK(ValidUtf8("cut \xe2\x82") == "cut " + r + r);                        // a sequence cut short
  CHECK(ValidUtf8("\xc0\xaf") == r + r);                                     // overlong '/'
  CHECK(ValidUtf8("\xed\xa0\x80") == r + r + r);                             // a surrogate, U+D800
  CHECK(ValidUtf8("\xf4\x90\x80\x80") == r + r + r + r);                     // past U+10FFFF
  CHECK(ValidUtf8(std::string("nul\0ok", 6)) == std::string("nul\0ok", 6));  // NUL is UTF-8
  CHECK(ValidUtf8("") == "");
}
