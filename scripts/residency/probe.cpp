// Where the CPU decode kernel's time goes by residency: one run of a single
// (sequence, KV head) pair processed over and over with its K and V resident
// in L1, in L2, and streamed from memory (256 MiB), timed round-robin (one
// batch of each size per round, median over rounds) so a shared host's
// drifting speed hits every size alike. Built and run by
// scripts/residency.sh; see docs/perf.md "2026-12-01 (22:40-23:40 UTC)".
//   probe DTYPE GROUP THREADS ROUNDS
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/driver.h"
#include "kernels/cpu/tile.h"

using kvplan::kernels::KvDtype;
namespace cpu = kvplan::kernels::cpu;

using kvplan_scripts::Floats;  // 64-byte aligned, as the kernel's buffers (../common/driver.h)

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: probe fp32|fp16|bf16|int8|fp8 GROUP THREADS ROUNDS\n");
    return 2;
  }
  const std::string name = argv[1];
  const KvDtype dtype = name == "fp32"   ? KvDtype::kFp32
                        : name == "bf16" ? KvDtype::kBf16
                        : name == "int8" ? KvDtype::kInt8
                        : name == "fp8"  ? KvDtype::kFp8E4M3
                                         : KvDtype::kFp16;
  const int64_t esize = name == "fp32" ? 4 : (name == "int8" || name == "fp8") ? 1 : 2;
  const int64_t d = 128, group = std::atoi(argv[2]);
  const int threads = std::atoi(argv[3]), rounds = std::atoi(argv[4]);
  const int64_t total = (int64_t{256} << 20) / (2 * d * esize);  // 256 MiB of K and V
  std::vector<unsigned char> k(total * d * esize), v(total * d * esize);
  // Bit patterns of small normal values in every dtype (fp16 0x30xx-0x33xx,
  // bf16 0x3Exx, fp8 0x20-0x3F, int8 any, fp32 0x3Cxxxxxx).
  for (size_t i = 0; i < k.size(); ++i) {
    const auto r = static_cast<unsigned>(std::rand());
    unsigned char b = static_cast<unsigned char>(r);
    if (esize == 1 && name == "fp8") b = static_cast<unsigned char>(0x20 | (r & 0x1F) | (r & 0x80));
    if (esize == 2 && i % 2 == 1)
      b = name == "bf16" ? 0x3E : static_cast<unsigned char>(0x30 | (r >> 8 & 3));
    if (esize == 4 && i % 4 == 3) b = 0x3C;
    k[i] = b;
    v[i] = static_cast<unsigned char>(b ^ 1);
  }
  std::vector<float> scales(static_cast<size_t>(total), 0.01f);
  const bool scaled = dtype == KvDtype::kInt8 || dtype == KvDtype::kFp8E4M3;
  struct Size {
    const char* what;
    int64_t n;  // tokens per run (0: the thread's share of the whole 256 MiB, once)
    int reps;
    std::vector<double> ns;
  };
  // 32 tokens: 16 KiB of K and V at fp16 (L1); 512: 256 KiB (L2); streaming.
  std::vector<Size> sizes = {{"L1 (32 tokens)", 32, 4000, {}},
                             {"L2 (512 tokens)", 512, 250, {}},
                             {"memory (256 MiB)", 0, 1, {}}};
  std::vector<char> flush(size_t{512} << 20, 1);
  for (int r = 0; r < rounds; ++r) {
    for (Size& s : sizes) {
      if (s.n == 0) {
        for (size_t i = 0; i < flush.size(); i += 64) flush[i] = static_cast<char>(flush[i] + 1);
      }
      const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
      {
        const int id = omp_get_thread_num();
        Floats q(group * d, 0.01f), m(group, -1e30f), l(group, 0.0f), acc(group * d, 0.0f);
        auto* sk = static_cast<float*>(std::aligned_alloc(64, 64 * 128 * 4 * 8));
        auto* sv = static_cast<float*>(std::aligned_alloc(64, 64 * 128 * 4 * 8));
        auto* ss = static_cast<float*>(std::aligned_alloc(64, 64 * 64 * 4 * 64));
        cpu::Scratch scratch{sk, sv, ss};
        cpu::RunState st{m.data(), l.data(), acc.data()};
        const int64_t share = total / threads;
        const int64_t first = s.n == 0 ? id * share : id * 4096;
        cpu::Run run;
        run.k = k.data() + first * d * esize;
        run.v = v.data() + first * d * esize;
        run.n = s.n == 0 ? share : s.n;
        kvplan_scripts::AsKvplanRuns(run);
        if (scaled) run.k_scale = run.v_scale = scales.data() + first;
        for (int rep = 0; rep < s.reps; ++rep) {
          cpu::ProcessRunAvx512(q.data(), group, d, dtype, run, st, scratch);
        }
        std::free(sk);
        std::free(sv);
        std::free(ss);
      }
      const double sec =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double token_heads =
          s.n == 0 ? static_cast<double>(total) : static_cast<double>(s.n) * s.reps * threads;
      s.ns.push_back(sec * 1e9 * threads / token_heads);
    }
  }
  std::printf(
      "%s group %lld d128, %d thread(s), %d rounds; ns per (token, KV head) per thread, "
      "median [min-max]; GB/s of K+V over all threads\n",
      name.c_str(), static_cast<long long>(group), threads, rounds);
  for (Size& s : sizes) {
    std::sort(s.ns.begin(), s.ns.end());
    const double med = s.ns[s.ns.size() / 2];
    std::printf("  %-18s %7.1f ns  [%.1f-%.1f]  %6.1f GB/s\n", s.what, med, s.ns.front(),
                s.ns.back(), threads * 2.0 * d * esize / med);
  }
  return 0;
}
