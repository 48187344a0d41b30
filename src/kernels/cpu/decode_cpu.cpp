#include "kernels/cpu/decode_cpu.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/cpu/tile.h"
#include "util/error.h"

namespace kvplan::kernels {

namespace {

// Below this many cache elements per thread the fork/join costs more than
// the split saves.
constexpr int64_t kMinElementsPerThread = 16384;

// The state of a (sequence, KV head) a thread saw only part of, merged after
// the parallel region.
struct Partial {
  int64_t pair = -1;  // b * kv_heads + kvh; -1 = unused
  std::vector<float> m, l, acc;
};

// A thread's buffers in one block, each starting at its own offset within a
// 4 KiB page (0, 640, 1280, ... bytes). The core checks a load against
// earlier stores by the low 12 address bits only, so a load from one buffer
// at the same page offset as a store to another waits for it (4K aliasing):
// with separate vectors, where malloc happens to put them decides it, and
// the group-8 kernel can run at half speed in one process and not another.
class ThreadArena {
 public:
  explicit ThreadArena(std::initializer_list<int64_t> floats) {
    constexpr size_t kPage = 4096 / sizeof(float), kStep = 640 / sizeof(float);
    std::vector<size_t> at;
    size_t end = 0, slot = 0;
    for (int64_t n : floats) {
      const size_t start = (end + kPage - 1) / kPage * kPage + kStep * (slot++ % 6);
      at.push_back(start);
      end = start + static_cast<size_t>(n);
    }
    storage_.reset(new float[end + kPage]);  // every buffer is written before it is read
    const auto base = reinterpret_cast<uintptr_t>(storage_.get());
    const size_t shift = (4096 - base % 4096) % 4096 / sizeof(float);
    size_t i = 0;
    for (int64_t n : floats) {
      spans_.emplace_back(storage_.get() + shift + at[i++], static_cast<size_t>(n));
    }
  }
  std::span<float> operator[](size_t i) const { return spans_[i]; }

 private:
  std::unique_ptr<float[]> storage_;
  std::vector<std::span<float>> spans_;
};

}  // namespace

// Guided chunks rather than a static split (one range per thread), which
// makes every step wait for the slowest thread: on a shared host one vCPU
// often runs behind the other for a whole step, and with guided chunks the
// faster thread takes more of the tail.
std::vector<int64_t> ChunkCuts(int64_t total, int threads, int64_t min_chunk) {
  std::vector<int64_t> cuts{0};
  if (threads == 1 || total / (4 * threads) < min_chunk) {
    for (int i = 1; i <= threads; ++i) cuts.push_back(total * i / threads);
    return cuts;
  }
  while (cuts.back() < total) {
    const int64_t rest = total - cuts.back();
    int64_t n = std::max((rest + 2 * threads - 1) / (2 * threads), min_chunk);
    if (rest - n < min_chunk) n = rest;
    cuts.push_back(cuts.back() + n);
  }
  return cuts;
}

bool CpuHasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

bool CpuHasAvx512() {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's check includes the OS saving the 512-bit state (XCR0).
  static const bool has =
      CpuHasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return has;
#else
  return false;
#endif
}

bool FarPrefetchOn(CpuDecodeOptions::FarPrefetch far_prefetch) {
  switch (far_prefetch) {
    case CpuDecodeOptions::FarPrefetch::kOn:
      return true;
    case CpuDecodeOptions::FarPrefetch::kOff:
      return false;
    case CpuDecodeOptions::FarPrefetch::kAuto:
      break;
  }
#if defined(__x86_64__) || defined(__i386__)
  static const bool amd = __builtin_cpu_is("amd");
  return !amd;
#else
  return true;
#endif
}

std::string_view SimdName(SimdPath p) {
  switch (p) {
    case SimdPath::kAuto:
      return "auto";
    case SimdPath::kScalar:
      return "scalar";
    case SimdPath::kAvx2:
      return "avx2";
    case SimdPath::kAvx512:
      return "avx512";
  }
  return "?";
}

SimdPath ParseSimdPath(std::string_view name) {
  if (name == "auto") return SimdPath::kAuto;
  if (name == "scalar") return SimdPath::kScalar;
  if (name == "avx2") return SimdPath::kAvx2;
  if (name == "avx512") return SimdPath::kAvx512;
  Fail("unknown SIMD path '{}' (known: auto, scalar, avx2, avx512)", name);
}

SimdPath ResolveSimd(SimdPath requested, int64_t head_dim) {
  if (requested == SimdPath::kAuto) {
    const char* env = std::getenv("KVPLAN_SIMD");
    if (env != nullptr && *env != '\0') {
      requested = ParseSimdPath(env);
    }
  }
  if (requested == SimdPath::kAvx2 && !CpuHasAvx2()) {
    Fail("the AVX2 path was requested but this CPU lacks avx2, fma or f16c");
  }
  if (requested == SimdPath::kAvx512 && !CpuHasAvx512()) {
    Fail(
        "the AVX-512 path was requested but this CPU lacks avx512f or avx512bw "
        "(or avx2, fma, f16c)");
  }
  if (requested == SimdPath::kAuto) {
    requested = CpuHasAvx512() ? SimdPath::kAvx512
                : CpuHasAvx2() ? SimdPath::kAvx2
                               : SimdPath::kScalar;
  }
  // The loops step a whole vector at a time (16 floats, 8 floats); other
  // head sizes take the next narrower path.
  if (requested == SimdPath::kAvx512 && head_dim % 16 != 0) requested = SimdPath::kAvx2;
  if (requested == SimdPath::kAvx2 && head_dim % 8 != 0) requested = SimdPath::kScalar;
  return requested;
}

void DecodeAttentionCpu(const DecodeArgs& a, const CpuDecodeOptions& options) {
  ValidateDecodeArgs(a);
  const DecodeShape& sh = a.shape;
  const int64_t d = sh.head_dim, group = sh.Group(), hkv = sh.kv_heads;
  const SimdPath path = ResolveSimd(options.simd, d);
  const bool far_prefetch = FarPrefetchOn(options.far_prefetch);
  const cpu::RunFn run_fn = path == SimdPath::kAvx512 ? cpu::ProcessRunAvx512
                            : path == SimdPath::kAvx2 ? cpu::ProcessRunAvx2
                                                      : cpu::ProcessRunScalar;
  const KvCacheView& c = a.cache;
  const int64_t esize = static_cast<int64_t>(ElementBytes(c.dtype));
  const float scale = a.Scale();

  // The work is a list of streams in the cache's own order, each cut where
  // the threads' ranges fall. Contiguous: one stream per (sequence, KV head),
  // each a single run of rows. Paged: one stream per sequence that visits,
  // block by block, every KV head of the block before the next block. A
  // block's heads are adjacent in memory ([block][kv_head][token][dim]), so
  // that order reads whole blocks (32 KiB of K at 16 tokens x 8 heads x 128
  // fp16) where a head at a time would read 4 KiB pieces scattered over the
  // pool, which streams far below the read ceiling.
  const bool by_block = c.layout.kind == KvLayoutKind::kPaged && hkv > 1;
  const int64_t heads = by_block ? hkv : 1;  // KV heads a stream carries
  const int64_t streams = by_block ? sh.batch : sh.batch * hkv;
  // start[s]: token-heads before stream s (a token of a paged stream counts
  // once per head, so threads get equal bytes either way).
  std::vector<int64_t> start(static_cast<size_t>(streams) + 1, 0);
  for (int64_t s = 0; s < streams; ++s) {
    start[s + 1] = start[s] + heads * a.seq_lens[by_block ? s : s / hkv];
  }
  const int64_t total = start[streams];
  for (int64_t b = 0; b < sh.batch; ++b) {
    if (a.seq_lens[b] == 0) std::fill_n(a.out + b * sh.q_heads * d, sh.q_heads * d, 0.0f);
  }
  if (total == 0) return;

  const int threads =
      options.threads > 0
          ? options.threads
          : static_cast<int>(std::clamp<int64_t>(total * d / kMinElementsPerThread, 1,
                                                 std::max(1, omp_get_max_threads())));
  const std::vector<int64_t> cuts =
      ChunkCuts(total, threads, std::max<int64_t>(1, options.chunk_bytes / (2 * d * esize)));
  const int64_t chunks = static_cast<int64_t>(cuts.size()) - 1;
  // A chunk cuts at most the stream it starts in and the one it ends in,
  // each a partial state per KV head it carries.
  std::vector<Partial> partials(2 * static_cast<size_t>(chunks * heads));
  std::atomic<int64_t> next_chunk{0};

#pragma omp parallel num_threads(threads)
  {
    const int64_t tile = cpu::TileTokens(d);
    const int64_t hg = heads * group;
    ThreadArena arena({hg * d, hg, hg, hg * d, tile * d, tile * d, group * cpu::kMaxTileTokens});
    const std::span<float> qs = arena[0], m = arena[1], l = arena[2], acc = arena[3];
    cpu::Scratch scratch{arena[4].data(), arena[5].data(), arena[6].data()};
    // The SIMD paths' fp8 widening needs these modes (tile.h); set once
    // per thread here rather than by each run.
    const cpu::FlushDenormals daz(path != SimdPath::kScalar && c.dtype == KvDtype::kFp8E4M3);
    for (int64_t i; (i = next_chunk.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      const int64_t lo = cuts[i], hi = cuts[i + 1];
      int64_t s = std::upper_bound(start.begin(), start.end(), lo) - start.begin() - 1;
      for (; lo < hi && s < streams && start[s] < hi; ++s) {
        const int64_t b = by_block ? s : s / hkv, kvh0 = by_block ? 0 : s % hkv;
        const int64_t len = a.seq_lens[b];
        // Token range of this stream the thread owns (a paged stream is cut
        // at a token, rounding the cut down to a whole token).
        const int64_t t_begin = (std::max(lo, start[s]) - start[s]) / heads;
        const int64_t t_end = (std::min(hi, start[s + 1]) - start[s]) / heads;
        if (t_begin >= t_end) continue;
        const float* q = a.q + (b * sh.q_heads + kvh0 * group) * d;
        for (int64_t j = 0; j < hg * d; ++j) qs[j] = q[j] * scale;
        std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
        std::fill(l.begin(), l.end(), 0.0f);
        std::fill(acc.begin(), acc.end(), 0.0f);
        const int64_t bt = c.layout.BlockTokens();
        // The run of consecutive rows of head h from token t: the rest of the
        // sequence (contiguous) or of the block (paged).
        const auto run_at = [&](int64_t t, int64_t h) {
          cpu::Run run;
          const int64_t row = c.layout.Row(b, kvh0 + h, t, hkv);
          run.k = static_cast<const unsigned char*>(c.k) + row * d * esize;
          run.v = static_cast<const unsigned char*>(c.v) + row * d * esize;
          run.k_scale = HasScales(c.dtype) ? c.k_scale + row : nullptr;
          run.v_scale = HasScales(c.dtype) ? c.v_scale + row : nullptr;
          run.n = std::min(t_end - t, bt - t % bt);
          // By block, the block's later heads follow this head's rows; the
          // thread reads them all next where it owns the whole block.
          const bool whole_block = t % bt == 0 && t_end >= t + bt;
          run.ahead_rows = by_block && whole_block ? (heads - h) * bt : run.n;
          run.far_prefetch = far_prefetch;
          return run;
        };
        // Each run knows the one after it, so the kernel can prefetch across
        // a block (or head) boundary.
        int64_t t = t_begin, h = 0;
        cpu::Run run = run_at(t, h);
        while (t < t_end) {
          const int64_t t_next = h + 1 < heads ? t : t + run.n;
          const int64_t h_next = h + 1 < heads ? h + 1 : 0;
          cpu::Run next;
          if (t_next < t_end) {
            next = run_at(t_next, h_next);
            run.next_k = next.k;
            run.next_v = next.v;
            run.next_n = next.n;
          }
          cpu::RunState st{m.data() + h * group, l.data() + h * group, acc.data() + h * group * d};
          run_fn(qs.data() + h * group * d, group, d, c.dtype, run, st, scratch);
          run = next;
          t = t_next;
          h = h_next;
        }
        for (h = 0; h < heads; ++h) {
          const int64_t kvh = kvh0 + h;
          const float* hm = m.data() + h * group;
          const float* hl = l.data() + h * group;
          const float* hacc = acc.data() + h * group * d;
          if (t_begin == 0 && t_end == len) {
            float* o = a.out + (b * sh.q_heads + kvh * group) * d;
            for (int64_t g = 0; g < group; ++g) {
              const float inv = 1.0f / hl[g];
              for (int64_t j = 0; j < d; ++j) o[g * d + j] = hacc[g * d + j] * inv;
            }
          } else {
            Partial& part = partials[(2 * static_cast<size_t>(i) + (t_begin == 0 ? 1 : 0)) *
                                         static_cast<size_t>(heads) +
                                     static_cast<size_t>(h)];
            part.pair = b * hkv + kvh;
            part.m.assign(hm, hm + group);
            part.l.assign(hl, hl + group);
            part.acc.assign(hacc, hacc + group * d);
          }
        }
      }
    }
  }

  // Log-sum-exp merge: out = sum_j e^(m_j - M) acc_j / sum_j e^(m_j - M) l_j.
  // Slots are in thread order; sorted stably by pair, a pair's partials are
  // adjacent and still in token order.
  std::vector<const Partial*> used;
  for (const Partial& part : partials) {
    if (part.pair >= 0) used.push_back(&part);
  }
  std::stable_sort(used.begin(), used.end(),
                   [](const Partial* x, const Partial* y) { return x->pair < y->pair; });
  for (size_t j = 0; j < used.size();) {
    size_t e = j + 1;
    while (e < used.size() && used[e]->pair == used[j]->pair) ++e;
    const int64_t p = used[j]->pair, b = p / hkv, kvh = p % hkv;
    float* o = a.out + (b * sh.q_heads + kvh * group) * d;
    for (int64_t g = 0; g < group; ++g) {
      float mx = -std::numeric_limits<float>::infinity();
      for (size_t k = j; k < e; ++k) mx = std::max(mx, used[k]->m[g]);
      double lsum = 0;
      std::vector<double> sum(static_cast<size_t>(d), 0.0);
      for (size_t k = j; k < e; ++k) {
        const double w = std::exp(static_cast<double>(used[k]->m[g]) - mx);
        lsum += w * used[k]->l[g];
        for (int64_t x = 0; x < d; ++x) sum[x] += w * used[k]->acc[g * d + x];
      }
      for (int64_t x = 0; x < d; ++x) o[g * d + x] = static_cast<float>(sum[x] / lsum);
    }
    j = e;
  }
}

}  // namespace kvplan::kernels
