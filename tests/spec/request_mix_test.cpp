#include "spec/request_mix.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <thread>

#include "cli_runner.h"
#include "spec/request_mix_reader.h"
#include "spec/yaml_reader.h"
#include "util/error.h"

using namespace kvplan;

TEST_CASE("request mix: CSV with extra columns, blank lines and quotes") {
  RequestMix m = ParseRequestMix(
      "id,prompt_tokens,output_tokens\n"
      "a,100,20\n"
      "\n"
      "\"b\",\"2000\", 500\r\n",
      "mix.csv");
  REQUIRE(m.requests.size() == 2);
  CHECK(m.requests[0].prompt_tokens == 100);
  CHECK(m.requests[0].output_tokens == 20);
  CHECK(m.requests[0].line == 2);
  CHECK(m.requests[1].Tokens() == 2500);
  CHECK(m.requests[1].line == 4);
  CHECK(m.source == "mix.csv");
}

TEST_CASE("request mix: JSONL with other keys skipped") {
  RequestMix m = ParseRequestMix(
      "{\"prompt_tokens\": 12, \"output_tokens\": 3}\n"
      "{\"id\": \"x,y\", \"meta\": {\"a\": [1, 2, {\"b\": null}]}, \"output_tokens\":0,"
      "\"prompt_tokens\":7}\n",
      "trace.jsonl");
  REQUIRE(m.requests.size() == 2);
  CHECK(m.requests[0].Tokens() == 15);
  CHECK(m.requests[1].prompt_tokens == 7);
  CHECK(m.requests[1].output_tokens == 0);
  // Without a known extension, a leading '{' means JSONL.
  CHECK(ParseRequestMix("{\"prompt_tokens\":1,\"output_tokens\":1}", "x.txt").requests.size() == 1);
}

TEST_CASE("request mix: every malformed input names file:line") {
  auto err = [](const std::string& text, const std::string& file) {
    try {
      ParseRequestMix(text, file);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err("", "m.csv") ==
        "m.csv: empty request mix (expected a CSV header 'prompt_tokens,output_tokens' or JSONL "
        "objects)");
  CHECK(err("\n  \n", "m.csv").rfind("m.csv: empty request mix", 0) == 0);
  CHECK(err("prompt_tokens,output_tokens\n", "m.csv") ==
        "m.csv: no requests after the header line");
  CHECK(err("prompt_tokens,outputs\n1,2\n", "m.csv") ==
        "m.csv:1: header has no 'output_tokens' column (expected a header line "
        "'prompt_tokens,output_tokens')");
  CHECK(err("prompt_tokens,output_tokens\n10,5\n10,-5\n", "m.csv") ==
        "m.csv:3:4: output_tokens: '-5' is negative (expected a whole number of tokens >= 0)");
  CHECK(
      err("prompt_tokens,output_tokens\n1.5,5\n", "m.csv") ==
      "m.csv:2:1: prompt_tokens: '1.5' is not an integer (expected a whole number of tokens >= 0)");
  CHECK(err("prompt_tokens,output_tokens\nabc,5\n", "m.csv") ==
        "m.csv:2:1: prompt_tokens: 'abc' is not a number (expected a whole number of tokens >= 0)");
  CHECK(err("prompt_tokens,output_tokens\n10\n", "m.csv") ==
        "m.csv:2: 1 fields, but the header has 2");
  CHECK(err("prompt_tokens,output_tokens\n0,5\n", "m.csv") ==
        "m.csv:2:1: prompt_tokens: a request needs at least 1 prompt token");
  CHECK(err("prompt_tokens,output_tokens\n10,\n", "m.csv") ==
        "m.csv:2:4: output_tokens: empty value (expected a whole number of tokens >= 0)");
  CHECK(err("{\"prompt_tokens\": 5}\n", "m.jsonl") == "m.jsonl:1: missing key \"output_tokens\"");
  CHECK(err("{\"prompt_tokens\": 5, \"output_tokens\": 1}\n{\"prompt_tokens\": 5,\n", "m.jsonl") ==
        "m.jsonl:2:21: malformed JSON: expected '\"', found end of line");
  CHECK(err("{\"prompt_tokens\": -3, \"output_tokens\": 1}", "m.jsonl") ==
        "m.jsonl:1:19: prompt_tokens: '-3' is negative (expected a whole number of tokens >= 0)");
  CHECK(err("{\"prompt_tokens\": \"3\", \"output_tokens\": 1}", "m.jsonl") ==
        "m.jsonl:1:19: prompt_tokens: a string, not a number of tokens");
  CHECK(err("{\"prompt_tokens\": 3, \"output_tokens\": 2.5}", "m.jsonl") ==
        "m.jsonl:1:39: output_tokens: '2.5' is not an integer (expected a whole number of tokens "
        ">= 0)");
  CHECK(err("{\"prompt_tokens\": 3, \"output_tokens\": 2} x", "m.jsonl") ==
        "m.jsonl:1:42: text after the JSON object");
  CHECK(err("[1, 2]", "m.jsonl") == "m.jsonl:1:1: malformed JSON: expected '{', found '['");
  // Keys kvplan does not read still hold JSON values, strictly.
  const std::string head = "{\"prompt_tokens\": 10, \"output_tokens\": 5, \"x\": ";
  CHECK(err(head + "tru}", "m.jsonl") ==
        "m.jsonl:1:48: malformed JSON: expected a value, found 't'");
  CHECK(err(head + "-}", "m.jsonl") ==
        "m.jsonl:1:48: malformed JSON: invalid number: a digit must follow '-'");
  CHECK(err(head + "\"\\q\"}", "m.jsonl") == "m.jsonl:1:49: malformed JSON: invalid escape '\\q'");
  CHECK(err(head + "\"a\tb\"}", "m.jsonl") ==
        "m.jsonl:1:50: malformed JSON: control character 0x09 inside a string");
  CHECK(err(head + "[1, {\"a\": null}], \"y\": \"ok\"}", "m.jsonl") == "no error");
  // Keys too: strict strings, escapes decoded.
  CHECK(err("{\"prompt\\_tokens\": 5, \"output_tokens\": 1}", "m.jsonl") ==
        "m.jsonl:1:9: malformed JSON: invalid escape '\\_'");
  CHECK(err("{\"\\u0070rompt_tokens\": 5, \"output_tokens\": 1}", "m.jsonl") == "no error");
  // The counts are JSON numbers too: no leading zero.
  CHECK(err("{\"prompt_tokens\": 0100, \"output_tokens\": 5}", "m.jsonl") ==
        "m.jsonl:1:19: malformed JSON: invalid number: a leading zero");
  CHECK_THROWS_WITH(LoadRequestMix("/nonexistent/mix.csv"),
                    "/nonexistent/mix.csv: cannot open file: No such file or directory");
}

TEST_CASE("request mix files are read like every other input: pipes, and the size limit") {
  // A pipe the shell opened (`--requests /dev/stdin`, `<(...)`) has no size
  // to seek to and is read to its end: here one made by pipe(2), named as
  // /dev/fd/N as bash names a process substitution.
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const std::string text = "prompt_tokens,output_tokens\n100,10\n";
  REQUIRE(write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fds[1]);
  RequestMix mix;
  try {
    mix = LoadRequestMix("/dev/fd/" + std::to_string(fds[0]));
  } catch (...) {
    close(fds[0]);
    throw;
  }
  close(fds[0]);
  REQUIRE(mix.requests.size() == 1);
  CHECK(mix.requests[0].prompt_tokens == 100);
  // A named FIFO would wait for a writer forever (a hung CI job), and a
  // device may have no end: refused before they are opened.
  const std::string fifo = kvplan::test::TempDir() + "/mix.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string fifo_error = fifo + ": is a FIFO (named pipe), not a regular file";
  CHECK_THROWS_WITH(LoadRequestMix(fifo), fifo_error.c_str());
  CHECK_THROWS_WITH(LoadRequestMix("/dev/zero"),
                    "/dev/zero: is a character device, not a regular file");
  CHECK_THROWS_WITH(LoadRequestMix("/"), "/: is a directory, not a file");
  // Past the limit, from the size, before reading.
  const std::string big = kvplan::test::TempDir() + "/big.csv";
  REQUIRE(truncate(big.c_str(), 0) != 0);  // not there yet
  { std::ofstream(big) << "x"; }
  REQUIRE(truncate(big.c_str(), static_cast<off_t>(RequestMixLimits::kMaxFileBytes) + 1) == 0);
  const uint64_t limit = RequestMixLimits::kMaxFileBytes;
  const std::string big_error = big + ": file is " + std::to_string(limit + 1) +
                                " bytes, over the " + std::to_string(limit) +
                                " byte limit for input files";
  CHECK_THROWS_WITH(LoadRequestMix(big), big_error.c_str());
}

TEST_CASE("files with CR-only (classic Mac) line endings read as if they had LF") {
  const std::string dir = kvplan::test::TempDir();
  std::ofstream(dir + "/cr.csv") << "prompt_tokens,output_tokens\r100,10\r\r200,20\r";
  RequestMix mix = LoadRequestMix(dir + "/cr.csv");
  REQUIRE(mix.requests.size() == 2);
  CHECK(mix.requests[1].prompt_tokens == 200);
  CHECK(mix.requests[1].line == 4);  // lines still counted as written
  std::ofstream(dir + "/bad.csv") << "prompt_tokens,output_tokens\r100,x\r";
  CHECK_THROWS_WITH(LoadRequestMix(dir + "/bad.csv"),
                    doctest::Contains("bad.csv:2:5: output_tokens: 'x' is not a number"));
  // CRLF is left as it is.
  CHECK(ReadTextFile(dir + "/cr.csv") == "prompt_tokens,output_tokens\n100,10\n\n200,20\n");
  std::ofstream(dir + "/crlf.csv") << "a\r\nb\r\n";
  CHECK(ReadTextFile(dir + "/crlf.csv") == "a\r\nb\r\n");
}

TEST_CASE("distribution specs: parsed strictly") {
  MixParams u = ParseMixSpec("uniform:prompt=100..2000,output=50..500,n=10,seed=7");
  CHECK(u.distribution == MixDistribution::kUniform);
  CHECK(u.prompt_min == 100);
  CHECK(u.prompt_max == 2000);
  CHECK(u.output_min == 50);
  CHECK(u.output_max == 500);
  CHECK(u.count == 10);
  CHECK(u.seed == 7);
  MixParams l = ParseMixSpec(
      "lognormal:prompt_mean=1000,prompt_sigma=0.8,output_mean=200,"
      "output_sigma=1,output=1..4096");
  CHECK(l.distribution == MixDistribution::kLognormal);
  CHECK(l.prompt_mean == 1000);
  CHECK(l.output_sigma == 1);
  CHECK(l.output_max == 4096);
  CHECK(l.count == 1000);
  CHECK_THROWS_WITH(ParseMixSpec("zipf:a=1"),
                    "--mix: unknown distribution 'zipf' in 'zipf:a=1' (known: uniform, lognormal; "
                    "or pass a CSV/JSONL file with --requests)");
  CHECK_THROWS_WITH(
      ParseMixSpec("uniform:prompt=100..2000"),
      "--mix: uniform needs output=... (e.g. uniform:prompt=100..2000,output=50..500)");
  CHECK_THROWS_WITH(ParseMixSpec("uniform:prompt=2000..100,output=1..2"),
                    "--mix: prompt=2000..100: the range is empty (2000 > 100)");
  CHECK_THROWS_WITH(ParseMixSpec("uniform:prompt=-1..100,output=1..2"),
                    "--mix: prompt: '-1' is negative (expected a whole number of tokens >= 0)");
  // A seed is a plain number and n counts requests: neither is called tokens.
  CHECK_THROWS_WITH(ParseMixSpec("uniform:prompt=1..100,output=1..2,seed=-4"),
                    "--mix: seed: '-4' is negative (expected a whole number >= 0)");
  CHECK_THROWS_WITH(ParseMixSpec("uniform:prompt=1..100,output=1..2,n=ten"),
                    "--mix: n: 'ten' is not a number (expected a whole number of requests >= 0)");
  CHECK_THROWS_WITH(ParseMixSpec("uniform:promt=1..100,output=1..2"),
                    "--mix: unknown key 'promt' for uniform (did you mean 'prompt'?) (known: "
                    "prompt, output, n, seed)");
  CHECK_THROWS_WITH(
      ParseMixSpec("lognormal:prompt_mean=0,prompt_sigma=1,output_mean=1,output_sigma=1"),
      "--mix: prompt_mean=0: expected a number > 0");
  CHECK_THROWS_WITH(ParseMixSpec("uniform:prompt=1..2,output=1..2,n=0"),
                    "--mix: n=0: expected 1 to 4000000 requests");
}

TEST_CASE("generated mixes are reproducible and within their bounds") {
  // splitmix64's published first output for seed 0.
  SplitMix64 g(0);
  CHECK(g.Next() == 0xE220A8397B1DCDAFull);
  RequestMix a = MixFromSpec("uniform:prompt=100..2000,output=50..500,n=500,seed=3");
  RequestMix b = MixFromSpec("uniform:prompt=100..2000,output=50..500,n=500,seed=3");
  RequestMix c = MixFromSpec("uniform:prompt=100..2000,output=50..500,n=500,seed=4");
  REQUIRE(a.requests.size() == 500);
  bool differs = false;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    CHECK(a.requests[i].prompt_tokens == b.requests[i].prompt_tokens);
    CHECK(a.requests[i].output_tokens == b.requests[i].output_tokens);
    CHECK(a.requests[i].prompt_tokens >= 100);
    CHECK(a.requests[i].prompt_tokens <= 2000);
    CHECK(a.requests[i].output_tokens >= 50);
    CHECK(a.requests[i].output_tokens <= 500);
    differs = differs || a.requests[i].prompt_tokens != c.requests[i].prompt_tokens;
  }
  CHECK(differs);
  MixStats s = ComputeMixStats(a);
  CHECK(s.mean_prompt == doctest::Approx(1050).epsilon(0.05));
  CHECK(s.mean_output == doctest::Approx(275).epsilon(0.05));

  // Lognormal with a stated arithmetic mean: the sample mean lands near it.
  RequestMix l = MixFromSpec(
      "lognormal:prompt_mean=1000,prompt_sigma=0.5,output_mean=200,"
      "output_sigma=0.5,n=20000,prompt=1..1000000,output=0..1000000");
  MixStats ls = ComputeMixStats(l);
  CHECK(ls.mean_prompt == doctest::Approx(1000).epsilon(0.03));
  CHECK(ls.mean_output == doctest::Approx(200).epsilon(0.03));
  CHECK(ls.min_tokens >= 1);
  RequestMix capped = MixFromSpec(
      "lognormal:prompt_mean=1000,prompt_sigma=2,output_mean=200,"
      "output_sigma=2,prompt=10..3000,output=1..500");
  for (const Request& r : capped.requests) {
    CHECK(r.prompt_tokens >= 10);
    CHECK(r.prompt_tokens <= 3000);
    CHECK(r.output_tokens >= 1);
    CHECK(r.output_tokens <= 500);
  }
}

TEST_CASE("mix statistics use nearest-rank percentiles") {
  RequestMix m;
  for (uint64_t i = 1; i <= 10; ++i) m.requests.push_back({i * 10, 0, 0});
  MixStats s = ComputeMixStats(m);
  CHECK(s.count == 10);
  CHECK(s.min_tokens == 10);
  CHECK(s.max_tokens == 100);
  CHECK(s.p50_tokens == 50);
  CHECK(s.p90_tokens == 90);
  CHECK(s.p99_tokens == 100);
  CHECK(s.mean_tokens == doctest::Approx(55));
}
