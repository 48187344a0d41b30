// Shared by the kernel drivers under scripts/ (kernel-ab, residency), so
// they run the tile code as kvplan does:
// - Floats: std::vector<float> 64-byte aligned, as the kernel's own buffers
//   are (decode_cpu.cpp's arena). From malloc's 16-byte alignment every
//   64-byte vector load of q straddles two cache lines, which timed the
//   group-8 tile at ~14 GB/s in scripts/kernel-ab.sh where kvplan ran it at
//   ~18 (docs/perf.md "2026-12-03 (10:05-10:30 UTC)").
// - AsKvplanRuns(run): the run's far prefetch set as kvplan's auto setting
//   sets it on this CPU (off on AMD; decode_cpu.h, CpuDecodeOptions), where
//   the tile code has one (revisions before 2026-12-03 do not).
// - HugeBytes: a zeroed byte buffer on 2 MiB pages where the kernel gives
//   them (madvise), as kvplan's caches are (kernels/kv_cache.h,
//   AlignedBuffer). Streamed from 4 KiB pages, a VM's page walks cost the
//   same code up to a sixth, and by chance one version more than the other:
//   kernel-ab's streaming mode read fp16 group 1, whose code had not
//   changed, at 0.84x in three runs on std::vector buffers and at
//   0.91-1.01x on these, where identical code on both sides read 0.97-1.05x
//   (docs/perf.md "2026-12-04").
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <vector>

namespace kvplan_scripts {

template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
  bool operator==(const Aligned64&) const { return true; }
};

using Floats = std::vector<float, Aligned64<float>>;

class HugeBytes {
 public:
  explicit HugeBytes(std::size_t n) : size_(n < 1 ? 1 : n) {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, size_, MADV_HUGEPAGE);
    data_ = static_cast<unsigned char*>(p);
  }
  ~HugeBytes() { munmap(data_, size_); }
  HugeBytes(const HugeBytes&) = delete;
  HugeBytes& operator=(const HugeBytes&) = delete;
  unsigned char* data() { return data_; }
  unsigned char& operator[](std::size_t i) { return data_[i]; }

 private:
  std::size_t size_;
  unsigned char* data_;
};

template <class Run>
void AsKvplanRuns(Run& run) {
  if constexpr (requires { run.far_prefetch; }) run.far_prefetch = !__builtin_cpu_is("amd");
}

}  // namespace kvplan_scripts
