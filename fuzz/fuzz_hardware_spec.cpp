// Fuzzes the hardware spec / bench profile reader (ParseHardwareYaml). An
// accepted spec must also survive the writer: HardwareToYaml (what
// `kvplan bench --save` writes) must produce YAML the reader reads back to
// the same figures.
#include "fuzz_common.h"
#include "spec/hardware_spec.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  HardwareSpec h;
  try {
    h = ParseHardwareYaml(fuzz::AsText(data, size), "fuzz.yaml");
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
    return 0;
  }
  (void)h.PeakFlops("fp16");
  (void)h.TotalMemoryBytes();
  HardwareSpec back;
  std::string yaml = HardwareToYaml(h);
  try {
    back = ParseHardwareYaml(yaml, "roundtrip.yaml");
  } catch (const Error& e) {
    std::fprintf(stderr, "round trip failed: %s\n--- written:\n%s\n", e.what(), yaml.c_str());
    fuzz::Require(false, "HardwareToYaml output does not read back");
  }
  fuzz::Require(back.name == h.name, "round trip: name");
  fuzz::Require(back.display_name == h.display_name, "round trip: display_name");
  fuzz::Require(back.source == h.source, "round trip: source");
  fuzz::Require(back.memory_bytes == h.memory_bytes, "round trip: memory_bytes");
  fuzz::Require(back.usable_memory_bytes == h.usable_memory_bytes,
                "round trip: usable_memory_bytes");
  fuzz::Require(back.memory_bandwidth_gbps == h.memory_bandwidth_gbps, "round trip: bandwidth");
  fuzz::Require(back.flops == h.flops, "round trip: flops");
  fuzz::Require(back.interconnect_gbps == h.interconnect_gbps, "round trip: interconnect");
  fuzz::Require(back.measured.has_value() == h.measured.has_value(), "round trip: measured");
  if (h.measured) {
    fuzz::Require(back.measured->curve.size() == h.measured->curve.size(), "round trip: curve");
    fuzz::Require(back.measured->machine == h.measured->machine, "round trip: machine");
    fuzz::Require(back.measured->read_ceiling_gbps == h.measured->read_ceiling_gbps,
                  "round trip: read ceiling");
    for (size_t i = 0; i < h.measured->curve.size(); ++i) {
      fuzz::Require(back.measured->curve[i].bytes == h.measured->curve[i].bytes &&
                        back.measured->curve[i].gbps == h.measured->curve[i].gbps,
                    "round trip: curve point");
    }
  }
  return 0;
}
