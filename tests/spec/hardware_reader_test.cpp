// The hardware reader's node: map (the usual server kvplan fleet lays
// replicas on): read, written back, and refused with file:line:col.
#include <doctest/doctest.h>

#include <string>

#include "spec/catalog.h"
#include "spec/hardware_spec.h"
#include "util/error.h"

using namespace kvplan;

namespace {

std::string WithNode(const std::string& node) {
  return "name: g\nmemory_bytes: 1000000\nmemory_bandwidth_gbps: 100\nnode:\n" + node +
         "source: s\n";
}

}  // namespace

TEST_CASE("hardware spec: node: is read and written back") {
  const HardwareSpec h = ParseHardwareYaml(
      WithNode("  gpus: 8\n  link: NVLink 4\n  link_gbps: 450\n  link_latency_us: 6\n"
               "  network_gbps: 50\n  network_latency_us: 46\n  source: HGX\n"),
      "h.yaml");
  REQUIRE(h.node);
  CHECK(h.node->gpus == 8u);
  CHECK(h.node->link == "NVLink 4");
  CHECK(h.node->link_gbps == 450);
  CHECK(h.node->link_latency_us == 6);
  CHECK(h.node->network_gbps == 50);
  CHECK(h.node->network_latency_us == 46);
  const HardwareSpec back = ParseHardwareYaml(HardwareToYaml(h), "back.yaml");
  REQUIRE(back.node);
  CHECK(back.node->gpus == 8u);
  CHECK(back.node->network_latency_us == 46);
  CHECK(back.node->source == "HGX");
  // A single-node device: no network.
  const HardwareSpec pcie =
      ParseHardwareYaml(WithNode("  gpus: 4\n  link_gbps: 32\n  source: s\n"), "p.yaml");
  CHECK(pcie.node->network_gbps == 0);
  // Every catalog device states its node.
  for (const HardwareSpec& c : CatalogHardware()) {
    CAPTURE(c.name);
    REQUIRE(c.node);
    CHECK(c.node->gpus >= 1u);
    CHECK(c.node->link_gbps > 0);
    CHECK_FALSE(c.node->source.empty());
  }
}

TEST_CASE("hardware spec: a bad node: names its field") {
  CHECK_THROWS_WITH(
      ParseHardwareYaml(WithNode("  gpus: 0\n  link_gbps: 1\n  source: s\n"), "h.yaml"),
      doctest::Contains("h.yaml:5:9: gpus: "));
  CHECK_THROWS_WITH(
      ParseHardwareYaml(WithNode("  gpus: 2000\n  link_gbps: 1\n  source: s\n"), "h.yaml"),
      "h.yaml:5:9: gpus: 2000 GPUs in one node is over kvplan's limit of 1024");
  CHECK_THROWS_WITH(ParseHardwareYaml(WithNode("  gpus: 2\n  source: s\n"), "h.yaml"),
                    doctest::Contains("link_gbps"));
  CHECK_THROWS_WITH(
      ParseHardwareYaml(
          WithNode("  gpus: 2\n  link_gbps: 1\n  link_latency_us: 1e9\n  source: s\n"), "h.yaml"),
      "h.yaml:7:20: link_latency_us: 1e+09 us is over kvplan's limit of 1 s");
  CHECK_THROWS_WITH(
      ParseHardwareYaml(WithNode("  gpus: 2\n  link_gbps: 1\n  lnk: x\n  source: s\n"), "h.yaml"),
      doctest::Contains("lnk"));
}
