// The input limits of docs/reliability.md, checked at their edges.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "cli_runner.h"
#include "spec/hardware_spec.h"
#include "spec/model_reader.h"
#include "spec/yaml_reader.h"

using namespace kvplan;

namespace {

// A billion-laughs document: `levels` anchors, each a list of ten aliases of
// the one before, so the last expands to 10^levels values.
std::string Laughs(int levels) {
  // Built with append: GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  std::string t = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= levels; ++i) {
    t.append("a").append(std::to_string(i)).append(": &a").append(std::to_string(i)).append(" [");
    for (int k = 0; k < 10; ++k) t.append(k ? ", *a" : "*a").append(std::to_string(i - 1));
    t.append("]\n");
  }
  return t;
}

}  // namespace

TEST_CASE("aliases count every time they are used, so an alias bomb stops at the node budget") {
  // 10 + 100 + 1,000 + 10,000 values (plus keys and lists): under 100,000.
  CHECK_NOTHROW(ParseYaml(Laughs(3), "ok.yaml"));
  // 10^5 values from a file of a few hundred bytes: refused, quickly.
  CHECK_THROWS_WITH(ParseYaml(Laughs(4), "laughs.yaml"),
                    doctest::Contains("more than 100000 values in one file"));
  CHECK_THROWS_WITH(ParseYaml(Laughs(9), "laughs.yaml"),
                    doctest::Contains("more than 100000 values in one file"));
}

TEST_CASE("nesting: 32 levels read, 33 refused before parsing, with the position") {
  auto nested = [](int n) {
    std::string t = "a: ";
    return t.append(static_cast<size_t>(n), '[').append(static_cast<size_t>(n), ']').append("\n");
  };
  CHECK_NOTHROW(ParseYaml(nested(31), "ok.yaml"));  // the map is level 0
  CHECK_THROWS_WITH(ParseYaml(nested(33), "deep.yaml"),
                    "deep.yaml:1:36: nesting deeper than 32 levels");
}

TEST_CASE("bytes: not UTF-8, NUL, over the size limit; one document only") {
  CHECK_THROWS_WITH(ParseYaml("a: 1\nb: caf\xe9\n", "x.yaml"),
                    "x.yaml:2:7: not UTF-8 text (byte 0xe9); save the file as UTF-8");
  CHECK_THROWS_WITH(ParseYaml("a: \xed\xa0\x80\n", "x.yaml"),  // a UTF-16 surrogate
                    "x.yaml:1:4: not UTF-8 text (byte 0xed); save the file as UTF-8");
  CHECK_NOTHROW(ParseYaml("a: caf\xc3\xa9 \xf0\x9f\x98\x80\n", "x.yaml"));
  CHECK_THROWS_WITH(ParseYaml(std::string("a: 1\0", 5), "x.yaml"),
                    "x.yaml:1:5: a NUL byte (is this a binary file?)");
  std::string big(YamlLimits::kMaxYamlBytes + 1, ' ');
  CHECK_THROWS_WITH(ParseYaml(big, "big.yaml"),
                    "big.yaml: 1048577 bytes of YAML, over the 1048576 byte limit for YAML and "
                    "JSON input");
  CHECK_THROWS_WITH(ParseYaml("a: 1\n---\nb: 2\n", "two.yaml"),
                    "two.yaml:2:1: text after the end of the YAML document (a second '---' "
                    "document, or a stray ',' or ']'); a file holds exactly one");
  // yaml-cpp 0.7's LoadAll loops forever on this (found by fuzz_model_spec).
  CHECK_THROWS_WITH(ParseYaml("- a\n, -\n", "comma.yaml"),
                    "comma.yaml:2:1: text after the end of the YAML document (a second '---' "
                    "document, or a stray ',' or ']'); a file holds exactly one");
  CHECK_THROWS_WITH(ParseYaml("# only a comment\n", "e.yaml"), "e.yaml: empty document");
}

TEST_CASE("a value longer than the scalar limit is refused with its position") {
  std::string ok = "a: ";
  ok.append(YamlLimits::kMaxScalarBytes, 'x').append("\n");
  CHECK_NOTHROW(ParseYaml(ok, "x.yaml"));
  std::string over = "a: ";
  over.append(YamlLimits::kMaxScalarBytes + 1, 'x').append("\n");
  CHECK_THROWS_WITH(ParseYaml(over, "x.yaml"),
                    "x.yaml:1:4: a value of 16385 bytes, over the 16384 byte limit");
}

TEST_CASE("YamlQuote output reads back unchanged, whatever the text") {
  for (std::string s : {std::string("plain"), std::string("a \"quoted\" \\ name"),
                        std::string("line\nbreak\ttab\x01"), std::string("# not a comment: - x"),
                        std::string("caf\xc3\xa9"), std::string("  spaces  "), std::string("")}) {
    CAPTURE(s);
    std::string doc = "v: ";
    doc.append(YamlQuote(s)).append("\n");
    YAML::Node n = ParseYaml(doc, "q.yaml");
    CHECK(n["v"].Scalar() == s);
  }
}

TEST_CASE("model limits: the largest allowed values read, one more is refused naming the field") {
  auto spec = [](const std::string& layers, const std::string& context) {
    std::string t = "name: big\nsource: s\nlayers: ";
    t.append(layers).append("\nhidden_size: 256\nquery_heads: 8\nkv_heads: 2\nhead_dim: 32");
    return t.append("\nmax_context: ")
        .append(context)
        .append("\nparams: 1000\nweight_dtype: bf16\n");
  };
  ModelSpec m = ParseModelYaml(spec("4096", "1073741824"), "big.yaml");
  CHECK(m.layers == ModelLimits::kMaxLayers);
  CHECK(m.max_context == ModelLimits::kMaxContext);
  CHECK_THROWS_WITH(ParseModelYaml(spec("4097", "4096"), "big.yaml"),
                    "big.yaml:3:9: layers: 4097 is over kvplan's limit of 4096 (see "
                    "docs/reliability.md)");
  CHECK_THROWS_WITH(ParseModelYaml(spec("32", "1073741825"), "big.yaml"),
                    "big.yaml:8:14: max_context: 1073741825 is over kvplan's limit of "
                    "1073741824 (see docs/reliability.md)");
}

TEST_CASE("hardware limits: the smallest bandwidth and FLOP/s read, anything below is refused") {
  auto hw = [](const std::string& gbps, const std::string& flops) {
    std::string t = "name: slow\nmemory_bytes: 1000000\nmemory_bandwidth_gbps: ";
    return t.append(gbps).append("\nflops:\n  fp16: ").append(flops).append("\nsource: s\n");
  };
  HardwareSpec h = ParseHardwareYaml(hw("0.001", "1e6"), "h.yaml");
  CHECK(h.memory_bandwidth_gbps == HardwareLimits::kMinGbps);
  CHECK(h.flops.at("fp16") == HardwareLimits::kMinFlops);
  CHECK_THROWS_WITH(ParseHardwareYaml(hw("0.00099", "1e6"), "h.yaml"),
                    "h.yaml:3:24: memory_bandwidth_gbps: 0.00099 GB/s is below kvplan's minimum "
                    "of 0.001 GB/s (1 MB/s; see docs/reliability.md)");
  // Past the smallest double (strtod's underflow): still a number, too small.
  CHECK_THROWS_WITH(ParseHardwareYaml(hw("1e-400", "1e6"), "h.yaml"),
                    "h.yaml:3:24: memory_bandwidth_gbps: 1e-400 GB/s is below kvplan's minimum "
                    "of 0.001 GB/s (1 MB/s; see docs/reliability.md)");
  CHECK_THROWS_WITH(ParseHardwareYaml(hw("1", "999999"), "h.yaml"),
                    "h.yaml:5:9: fp16: 999999 FLOP/s is below kvplan's minimum of 1e+06 FLOP/s "
                    "(see docs/reliability.md)");
  CHECK_THROWS_WITH(ParseHardwareYaml(hw("1", "-1e-400"), "h.yaml"),
                    "h.yaml:5:9: fp16: must be positive, got -1e-400");
}

TEST_CASE("hardware spec: a missing required field is named, not blamed on a valid neighbour") {
  const std::string hw =
      "name: g\nmemory_bytes: 1000000\nmemory_bandwidth_gbps: 100\nsource: s\nsource_url: u\n";
  auto without = [&](const std::string& line) {
    std::string t = hw;
    t.erase(t.find(line), line.size());
    return t;
  };
  CHECK_THROWS_WITH(ParseHardwareYaml(without("memory_bytes: 1000000\n"), "h.yaml"),
                    "h.yaml:1:1: hardware spec: missing required field 'memory_bytes'");
  CHECK_THROWS_WITH(ParseHardwareYaml(without("source: s\n"), "h.yaml"),
                    "h.yaml:1:1: hardware spec: missing required field 'source'");
}

TEST_CASE("a YAML file with CR-only line endings reads, errors at their lines") {
  const std::string dir = kvplan::test::TempDir();
  std::ofstream(dir + "/m.yaml")
      << "name: cr\rsource: s\rlayers: 4\rhidden_size: 256\rquery_heads: 8\rkv_heads: 2\r"
         "head_dim: 32\rmax_context: 2048\rparams: 1000000\rweight_dtype: bf16\r";
  CHECK(ParseModelYaml(ReadTextFile(dir + "/m.yaml"), "m.yaml").layers == 4);
  std::ofstream(dir + "/bad.yaml") << "name: x\rlayers: [1\r";
  CHECK_THROWS_WITH(ParseModelYaml(ReadTextFile(dir + "/bad.yaml"), "bad.yaml"),
                    "bad.yaml:3:1: malformed YAML: end of sequence flow not found");
}

TEST_CASE("MapReader: a key read but missing from the reader's list of fields fails the tests") {
  // tests/main.cpp sets KVPLAN_CHECK_FIELDS: a stale list is a logic error
  // here (a user's kvplan reads the key and goes on).
  const YAML::Node node = kvplan::ParseYaml("a: 1\nb: 2\n", "m.yaml");
  kvplan::MapReader r(node, "m.yaml", "map", {"a"});
  CHECK(r.U64("a") == 1);
  CHECK(r.U64("b") == 2);
  CHECK_THROWS_WITH_AS(r.Finish(), "MapReader for map: 'b' is read but not in its list of fields",
                       std::logic_error);
  // Listed, it is a field like any other; an unlisted key not read is the user's typo.
  kvplan::MapReader ok(node, "m.yaml", "map", {"a", "b"});
  ok.U64("a");
  CHECK_THROWS_WITH_AS(ok.Finish(), "m.yaml:2:1: b: unknown field in map (did you mean 'a'?)",
                       kvplan::Error);
}
