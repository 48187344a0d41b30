// The pre-parse guard of spec/yaml_reader.cpp sees what yaml-cpp sees: a
// quote opens a quoted scalar only where a node starts, a quote inside a
// plain scalar is text, block scalars are text, comments start after white
// space. Deep nesting and large collections hidden behind a quote the parser
// does not open are refused before parsing; valid YAML still reads.
#include <doctest/doctest.h>

#include <string>

#include "spec/yaml_reader.h"

using namespace kvplan;

namespace {

std::string Deep(int n) {
  return std::string(static_cast<size_t>(n), '[') + std::string(static_cast<size_t>(n), ']');
}

std::string Many(size_t n) {
  std::string t = "[";
  for (size_t i = 0; i < n; ++i) t.append(i ? ",1" : "1");
  return t + "]";
}

// The error of parsing `text`, or "" when it parses.
std::string ErrorOf(const std::string& text) {
  try {
    ParseYaml(text, "g.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("yaml guard: a quote inside a plain scalar hides no brackets") {
  const std::string deep = Deep(40);
  for (const std::string& text : {
           "name: {a:'x, b: " + deep + ", c: y'}\n",        // quote after ':' with no space
           "name: {a: x 'y, b: " + deep + ", c: z'}\n",     // quote after a space in a plain scalar
           "name: {a: x \"y, b: " + deep + ", c: z\"}\n",   // the same with double quotes
           "name: [x'y, " + deep + ", z']\n",               // in a flow sequence
           "name: [a - 'y, " + deep + ", z']\n",            // after a dash inside a plain scalar
           "name: {a:\"x, b: " + deep + ", c: y\"}\n",      // double quote after ':'
           "name: [\"a\nb\", " + deep + "]\n",              // a double-quoted scalar over two lines
           "name: {a: 'x' #'\n, b: " + deep + "}\n",        // a quote in a comment
           "name: [-\"x, " + deep + ", y\"]\n",             // "-x" is a plain scalar, not "- x"
           "name: x 'y\nb: " + deep + "\nc: z'\n",          // block context
           "key: |\n  [ 'x\nother: " + deep + "\nz: y'\n",  // a block scalar's text
           "- |\n [ 'x\n- " + deep + "\n- y'\n",            // a block scalar of a list entry
           "key: >-\n  '\n\n  [\nother: " + deep + "\n",    // folded, with a blank line
       }) {
    CAPTURE(text.substr(0, 40));
    CHECK(ErrorOf(text).find("nesting deeper than 32 levels") != std::string::npos);
  }
}

TEST_CASE("yaml guard: a large flow collection behind a quote is counted before parsing") {
  const std::string many = Many(150'000);
  for (const std::string& text : {
           "name: {a:'x, b: " + many + ", c: y'}\n",
           "name: {a: x 'y, b: " + many + ", c: z'}\n",
           "name: [\"a\nb\", " + many + "]\n",
       }) {
    CHECK(ErrorOf(text).find("more than 100000 values") != std::string::npos);
  }
}

TEST_CASE("yaml guard: valid YAML with quotes, comments and block scalars still reads") {
  const std::string deep = Deep(40);
  for (const std::string& text : {
           std::string("{\"a\":\"b\", \"c\":[1, 2]}\n"),  // JSON: a value right after "key":
           std::string("a: 'it''s [not a list'\n"),
           std::string("a: \"x # y [\"\nb: 1\n"),
           std::string("a: 'multi\n  line ['\nb: 1\n"),
           std::string("a: a:'b\nc: x 'y\n"),            // plain scalars holding quotes
           "a: |\n  " + deep + "\n  it's text\nb: 2\n",  // brackets in a block scalar are text
           "- >\n  " + deep + "\n- x\n",
           std::string("a: &anchor 'x ['\nb: !!str 'y ['\nc: *anchor\n"),
           std::string("{? 'k [' : v}\n"),
           std::string("--- 'doc ['\n"),
       }) {
    CAPTURE(text);
    CHECK(ErrorOf(text) == "");
  }
}
