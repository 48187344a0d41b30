// `kvplan bench --device cuda`: the CUDA decode kernel's sweep, validated
// against the float64 reference, timed with CUDA events, placed against the
// device's DRAM peak and a device-to-device copy measured in the same run.
#pragma once

#include <string>
#include <vector>

namespace kvplan {

/// The bench options --device cuda uses (a subset of bench's own).
struct CudaBenchCliOptions {
  bool quick = false;
  int repeats = 0;        // 0: 30 (quick: 15)
  std::string max_cache;  // skip shapes whose cache is larger
  std::string hardware;   // datasheet figures for --save and the table
  std::string save;       // profile path
  bool force = false;
  std::string format = "text";
  std::vector<std::string> shapes;  // --shape specs (ParseBenchShape); empty: the CUDA sweep
};

/// Runs the CUDA sweep and prints it. Throws kvplan::Error (exit 2) when
/// kvplan was built without CUDA or no CUDA device is present.
void RunCudaBench(const CudaBenchCliOptions& options);

}  // namespace kvplan
