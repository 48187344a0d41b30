// One side of scripts/kernel-ab.sh: compiled twice, each time with one
// version of src/kernels/cpu/tile_avx2.cpp (or tile_avx512.cpp with
// -DKVPLAN_AB_AVX512), the old one inside a renamed
// namespace (-Dkvplan=kvplan_old -DKVPLAN_AB_ENTRY=ab_old), so both versions
// live in one process and are timed turn about.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../common/driver.h"
#include "kernels/cpu/tile.h"

namespace {
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

using kvplan_scripts::Floats;  // 64-byte aligned, as the kernel's buffers (../common/driver.h)
}  // namespace

// One run of `tokens` tokens of one (sequence, KV head), head_dim 128,
// random bytes (every format decodes them to finite values; the most
// significant byte of each fp32 and bf16 element is set to 0x3E or 0xBE, so
// none is a denormal: Intel cores take a slow assist per denormal FMA, which
// timed fp32 at a tenth of fp16 here), on 2 MiB pages, run `reps` times:
// by default so small that it stays in L2, the kernel's compute side
// alone; in the streaming mode (main.cpp, MIB) far larger than the caches.
// Seconds per call, by the thread's CPU time (time descheduled on a shared
// machine is not counted).
extern "C" double KVPLAN_AB_ENTRY(int dtype, int group, int tokens, int reps) {
  using namespace kvplan::kernels;
  using namespace kvplan::kernels::cpu;
  const auto dt = static_cast<KvDtype>(dtype);
  const int64_t d = 128, n = tokens, g = group;
  const size_t bytes = static_cast<size_t>(n * d) * ElementBytes(dt);
  kvplan_scripts::HugeBytes k(bytes), v(bytes);
  uint32_t s = 12345;
  for (size_t i = 0; i < bytes; ++i) {
    s = s * 1664525u + 1013904223u;
    k[i] = static_cast<unsigned char>((s >> 24) & 0x3F);
    v[i] = static_cast<unsigned char>((s >> 16) & 0x3F);
  }
  const size_t top = dt == KvDtype::kFp32 ? 4 : dt == KvDtype::kBf16 ? 2 : 0;  // little-endian
  for (size_t i = top; top > 0 && i <= bytes; i += top) {
    const unsigned char sign = (i / top) % 2 ? 0x80 : 0x00;
    k[i - 1] = static_cast<unsigned char>(0x3E | sign);
    v[i - 1] = static_cast<unsigned char>(0x3E | sign);
  }
  Floats ks(n, 0.01f), vs(n, 0.01f), q(g * d), m(g), l(g), acc(g * d);
  Floats sk(kMaxTileTokens * 256), sv(kMaxTileTokens * 256), ss(g * kMaxTileTokens);
  for (size_t i = 0; i < q.size(); ++i) q[i] = 0.1f * std::sin(0.1f * static_cast<float>(i));
  Run run;
  run.k = k.data();
  run.v = v.data();
  run.n = n;
  kvplan_scripts::AsKvplanRuns(run);
  if (HasScales(dt)) {
    run.k_scale = ks.data();
    run.v_scale = vs.data();
  }
  Scratch sc{sk.data(), sv.data(), ss.data()};
  const double t0 = CpuSeconds();
  for (int r = 0; r < reps; ++r) {
    std::fill(m.begin(), m.end(), -INFINITY);
    std::fill(l.begin(), l.end(), 0.0f);
    std::fill(acc.begin(), acc.end(), 0.0f);
    RunState st{m.data(), l.data(), acc.data()};
#ifdef KVPLAN_AB_AVX512
    ProcessRunAvx512(q.data(), g, d, dt, run, st, sc);
#else
    ProcessRunAvx2(q.data(), g, d, dt, run, st, sc);
#endif
  }
  return (CpuSeconds() - t0) / reps;
}
