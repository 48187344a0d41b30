// scripts/kernel-ab.sh's driver: times the old and the new AVX2 tile code
// turn about (each first in every other round), 15 rounds per shape, and
// prints the median of the per-round speed ratios (new/old) with its
// interquartile range. DTYPES (e.g. "fp16,bf16") and GQA (GQA groups, e.g.
// "4,8"; GROUPS is taken by bash) in the environment narrow the sweep. MIB
// (e.g. 128) times each shape streaming instead: a run of that many MiB of
// K and V together, far larger than the caches, twice per call, where the
// default is `tokens` (argv[1]) 100 times, in L2.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" double ab_old(int dtype, int group, int tokens, int reps);
extern "C" double ab_new(int dtype, int group, int tokens, int reps);

namespace {
// Whether `item` is one of the comma-separated names in environment variable
// `var` (unset or empty: every item is).
bool Wanted(const char* var, const char* item) {
  const char* list = std::getenv(var);
  if (list == nullptr || *list == '\0') return true;
  const size_t n = std::strlen(item);
  for (const char* p = list; *p != '\0';) {
    const char* end = std::strchr(p, ',');
    const size_t len = end != nullptr ? static_cast<size_t>(end - p) : std::strlen(p);
    if (len == n && std::strncmp(p, item, n) == 0) return true;
    p += len + (end != nullptr ? 1 : 0);
  }
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  const char* mib_env = std::getenv("MIB");
  const long mib = mib_env != nullptr ? std::atol(mib_env) : 0;
  const int reps = mib > 0 ? 2 : 100;
  const char* names[] = {"fp32", "fp16", "bf16", "int8", "fp8"};
  const int element_bytes[] = {4, 2, 2, 1, 1};
  std::printf("%-6s %5s  %9s  %9s  %14s\n", "dtype", "group", "old GB/s", "new GB/s", "new/old (IQR)");
  for (int dt = 0; dt < 5; ++dt) {
    if (!Wanted("DTYPES", names[dt])) continue;
    // Streaming: as many tokens of 128 columns as make `mib` MiB of K and V.
    const int tokens = mib > 0 ? static_cast<int>(mib * 1048576 / (2 * 128 * element_bytes[dt]))
                               : (argc > 1 ? std::atoi(argv[1]) : 256);
    for (int g : {1, 2, 4, 8}) {
      if (!Wanted("GQA", std::to_string(g).c_str())) continue;
      std::vector<double> o, n, r;
      for (int i = 0; i < 15; ++i) {
        double a = 0, b = 0;
        if (i % 2 == 0) {
          a = ab_old(dt, g, tokens, reps);
          b = ab_new(dt, g, tokens, reps);
        } else {
          b = ab_new(dt, g, tokens, reps);
          a = ab_old(dt, g, tokens, reps);
        }
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
