// scripts/kernel-ab.sh's driver: times the old and the new AVX2 tile code
// turn about, 15 rounds per shape, and prints the median of the per-round
// speed ratios (new/old) with its interquartile range.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" double ab_old(int dtype, int group, int tokens, int reps);
extern "C" double ab_new(int dtype, int group, int tokens, int reps);

int main(int argc, char** argv) {
  const int tokens = argc > 1 ? std::atoi(argv[1]) : 256;
  const char* names[] = {"fp32", "fp16", "bf16", "int8", "fp8"};
  const int element_bytes[] = {4, 2, 2, 1, 1};
  std::printf("%-6s %5s  %9s  %9s  %14s\n", "dtype", "group", "old GB/s", "new GB/s", "new/old (IQR)");
  for (int dt = 0; dt < 5; ++dt) {
    for (int g : {1, 2, 4, 8}) {
      std::vector<double> o, n, r;
      for (int i = 0; i < 15; ++i) {
        const double a = ab_old(dt, g, tokens, 100), b = ab_new(dt, g, tokens, 100);
        o.push_back(a);
        n.push_back(b);
        r.push_back(a / b);
      }
      std::sort(o.begin(), o.end());
      std::sort(n.begin(), n.end());
      std::sort(r.begin(), r.end());
      const double bytes = 2.0 * tokens * 128 * element_bytes[dt];
      std::printf("%-6s %5d  %9.1f  %9.1f  %5.2f (%.2f-%.2f)\n", names[dt], g, bytes / o[7] / 1e9,
                  bytes / n[7] / 1e9, r[7], r[3], r[11]);
    }
  }
}
