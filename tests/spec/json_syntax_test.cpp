// Strict JSON syntax: what vLLM's own JSON parse refuses is refused here too.
#include "spec/json_syntax.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>

#include "cli_runner.h"
#include "util/error.h"

using namespace kvplan;

namespace {

std::string ErrorOf(const std::string& text) {
  try {
    CheckJsonSyntax(text, "x");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("JSON syntax: valid values pass, as RFC 8259 writes them") {
  for (const char* ok :
       {"{}", "[]", " { } ", "0", "-0", "12.5e-3", "1E+9", "-7.25", "true", "false", "null",
        "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\"", "\"caf\xc3\xa9\"",
        "{\"cudagraph_capture_sizes\": [1, 2, 4], \"cudagraph_mode\": \"NONE\", \"x\": null}",
        "{\"a\": {\"b\": [[], {}, [1, [2, [3]]]]}}", "\n\t{\"a\":\r\n1}\n"}) {
    CAPTURE(ok);
    CHECK(ErrorOf(ok).empty());
  }
  // A document remembers where each value starts, by JSON pointer; strings
  // come decoded, \u as UTF-8.
  const JsonDocument doc =
      ParseJsonDocument("{\"\\u0070rompt\": \"a\\n\\u00e9\",\n \"x/y\": [1, {\"k\": null}]}");
  CHECK(doc.root["prompt"] == "a\n\xc3\xa9");
  CHECK(doc.offsets.at("") == 0);
  CHECK(doc.offsets.at("/prompt") == 16);
  CHECK(doc.offsets.at("/x~1y") == 37);
  CHECK(doc.offsets.at("/x~1y/1/k") == 47);
  CHECK(JsonLineColumn("{\n  \"a\": 1}", 9) == std::pair<size_t, size_t>{2, 8});
  // Python's constants only where asked for, as numbers.
  CHECK(ErrorOf("{\"a\": NaN}") == "x: not valid JSON (column 7: expected a value, found 'N')");
  JsonOptions python;
  python.python_constants = true;
  const JsonDocument nan =
      ParseJsonDocument("{\"a\": NaN, \"b\": -Infinity, \"c\": \"NaN\"}", python);
  CHECK(std::isnan(nan.root["a"].get<double>()));
  CHECK(nan.root["b"].get<double>() < 0);
  CHECK(nan.root["c"] == "NaN");
  CHECK(nan.offsets.at("/b") == 16);
  // Duplicate keys where asked for, at the second one.
  JsonOptions unique;
  unique.unique_keys = true;
  CHECK(ParseJsonDocument("{\"a\": 1, \"a\": 2}").root["a"] == 2);
  try {
    ParseJsonDocument("{\"a\": {\"b\": 1, \"b\": 2}}", unique);
    FAIL("no error");
  } catch (const JsonSyntaxError& e) {
    CHECK(e.duplicate_key == "b");
    CHECK(e.offset == 15);
  }
}

TEST_CASE("JSON syntax: what YAML would read and a JSON parser refuses, with its column") {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"{\"a\": 1,}", "column 8: a trailing ',' before '}'"},
      {"[1, 2,]", "column 6: a trailing ',' before ']'"},
      {"{'a': 1}", "column 2: expected a \"quoted\" key, found '''"},
      {"{a: 1}", "column 2: expected a \"quoted\" key, found 'a'"},
      {"{\"a\" 1}", "column 6: expected ':', found '1'"},
      {"{\"a\": 1 \"b\": 2}", "column 9: expected ',' or '}', found '\"'"},
      {"{\"a\": &x 1}", "column 7: expected a value, found '&'"},
      {"{\"a\": !!str 1}", "column 7: expected a value, found '!'"},
      {"{\"a\": 04096}", "column 7: invalid number: a leading zero"},
      {"{\"a\": 1.}", "column 7: invalid number: a digit must follow '.'"},
      {"{\"a\": .5}", "column 7: expected a value, found '.'"},
      {"{\"a\": 1e}", "column 7: invalid number: a digit must follow the exponent"},
      {"{\"a\": -}", "column 7: invalid number: a digit must follow '-'"},
      {"{\"a\": 1.2.3}", "column 7: invalid number (then '.')"},
      {"{\"a\": 0x10}", "column 7: invalid number (then 'x')"},
      {"{\"a\": tru}", "column 7: expected a value, found 't'"},
      {"{\"a\": True}", "column 7: expected a value, found 'T'"},
      {"{\"a\": nullx}", "column 7: expected a value, found 'n'"},
      {"{\"a\": NaN}", "column 7: expected a value, found 'N'"},
      {"{\"a\": \"\\q\"}", "column 8: invalid escape '\\q'"},
      {"{\"a\": \"\\u12\"}", "column 8: invalid \\u escape: four hex digits expected"},
      {"{\"a\": \"x\ty\"}", "column 9: control character 0x09 inside a string"},
      {"{\"a\": \"open}", "column 7: unterminated string"},
      {"{\"a\": 1", "column 8: expected ',' or '}', found the end"},
      {"{\"a\": 1} {\"b\": 2}", "column 10: text after the JSON value"},
      {"{\"a\": 1} // note", "column 10: text after the JSON value"},
      {"", "column 1: expected a value, found the end"},
      {"{\"a\": 1-2}", "column 7: invalid number (then '-')"},
      {"{\"a\": -01}", "column 7: invalid number: a leading zero"},
      {"[true1]", "column 2: expected a value, found 't'"},
      {"{\"a\" \"\\q\"}", "column 6: expected ':', found '\"'"},
      {"{\"a\": \"\\ud800\"}", "column 8: invalid \\u escape: half of a surrogate pair"},
      {"{\"a\": \"\xff\"}", "column 8: byte 0xff inside a string is not UTF-8"},
      {"\xEF\xBB\xBF{}", "column 1: expected a value, found byte 0xef"},
      {"{\"a\": \"x\\", "column 7: unterminated string"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(ErrorOf(c.text) == std::string("x: not valid JSON (") + c.message + ")");
  }
  // Text of several lines: line and column.
  CHECK(ErrorOf("{\n  \"a\": 1,\n}\n") ==
        "x: not valid JSON (its line 2, column 9: a trailing ',' before '}')");
  CHECK(ErrorOf("\n{\n  \"a\": tru\n}") ==
        "x: not valid JSON (its line 3, column 8: expected a value, found 't')");
  // Deep nesting is refused before the stack is.
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  CHECK(ErrorOf(deep) == "x: not valid JSON (column 65: nested more than 64 deep)");
  CHECK(ErrorOf(std::string(64, '[') + std::string(64, ']')).empty());
  // Counted in containers: 64 around a scalar pass, 65 fail at the 65th bracket.
  CHECK(ErrorOf(std::string(64, '[') + "1" + std::string(64, ']')).empty());
  CHECK(ErrorOf(std::string(65, '[') + "1" + std::string(65, ']')) ==
        "x: not valid JSON (column 65: nested more than 64 deep)");
}

TEST_CASE(
    "vLLM's compilation config is read as the JSON vLLM parses, on the command line and in a "
    "file") {
  using test::CheckOneLineError;
  using test::RunKvplan;
  CheckOneLineError(RunKvplan("check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B -cc "
                              "'{\\\"cudagraph_capture_sizes\\\": [1, 2],}'\" --gpu h100-sxm"),
                    "--vllm-args: -cc: not valid JSON (column 35: a trailing ',' before '}')");
  CHECK(RunKvplan("check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B -cc "
                  "'{\\\"cudagraph_capture_sizes\\\": [1, 2]}'\" --gpu h100-sxm")
            .exit_code == 0);
  const std::string dir = test::TempDir();
  test::WriteFile(dir, "cc.yaml",
                  "name: cc\nmodel: llama-3.1-8b\nhardware:\n  gpu: h100-sxm\nengine:\n  name: "
                  "vllm\n  args:\n    compilation_config: '{\"cudagraph_mode\": \"NONE\",}'\n");
  CheckOneLineError(RunKvplan("check cc.yaml", dir),
                    "cc.yaml:8:25: compilation_config: not valid JSON (column 26: a trailing ',' "
                    "before '}')");
}
