// The developer scripts that docs/perf.md's figures are reproduced with must
// keep working as the code moves: scripts/stream-ab.sh's patches have to
// apply to the tree as it is now, and its reader has to pair steps right.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "cli_runner.h"

using kvplan::test::ReadFile;
using kvplan::test::SourcePath;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;

namespace {

int Run(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

TEST_CASE("scripts/stream-ab: the harness, then each example variant, apply to the tree as it is") {
  // As the script does: a copy of the kernel sources, the harness patched
  // in, then each variant (some patch the harness's lines) tried on it.
  const std::string dir = TempDir();
  REQUIRE(Run("mkdir -p '" + dir + "/src/kernels/cpu' && cp '" +
              SourcePath("src/kernels/cpu/decode_cpu.cpp") + "' '" +
              SourcePath("src/kernels/cpu/tile_avx2.cpp") + "' '" +
              SourcePath("src/kernels/cpu/tile.h") + "' '" +
              SourcePath("src/kernels/cpu/tile_simd.inc") + "' '" + dir +
              "/src/kernels/cpu/'") == 0);
  const auto apply = [&](const std::string& patch, bool dry) {
    return Run(std::string("patch ") + (dry ? "--dry-run " : "") + "-s -p1 -d '" + dir + "' < '" +
               SourcePath("scripts/stream-ab/" + patch) + "' > /dev/null 2>&1");
  };
  REQUIRE(apply("harness.patch", false) == 0);
  CHECK(ReadFile(dir + "/src/kernels/cpu/decode_cpu.cpp").find("int kvplan_ab_variant = 0;") !=
        std::string::npos);
  for (const char* p : {"nta-variant.patch", "null-variant.patch", "static-split-variant.patch"}) {
    CAPTURE(p);
    CHECK(apply(p, true) == 0);
  }
}

TEST_CASE("scripts/stream-ab: pairs adjacent steps, skips the first pair, medians the ratios") {
  const std::string dir = TempDir();
  // First pair (validation + first step) skipped; then base/variant in both
  // orders: ratios 1.1, 1.2, 0.9, 1.0, 1.5 -> median 1.1, IQR 1.0-1.2.
  const std::string in = WriteFile(dir, "steps.txt",
                                   "kvplan bench: progress\nAB 0 100\nAB 1 1\n"
                                   "AB 0 10\nAB 1 11\nAB 1 12\nAB 0 10\nAB 0 10\nAB 1 9\n"
                                   "AB 1 10\nAB 0 10\nAB 0 10\nAB 1 15\n");
  const std::string py = "python3 '" + SourcePath("scripts/stream-ab/pairs.py") + "'";
  REQUIRE(Run(py + " < '" + in + "' > '" + dir + "/out.txt'") == 0);
  CHECK(ReadFile(dir + "/out.txt") ==
        "  5 pairs  variant/base 1.100 (IQR 1.000-1.200)  base 10.00 ms  variant 11.00 ms\n");
  // Without the harness there is nothing to pair: an error, not a number.
  const std::string none = WriteFile(dir, "none.txt", "kvplan bench: progress\n");
  CHECK(Run(py + " < '" + none + "' > /dev/null 2> '" + dir + "/err.txt'") == 1);
  CHECK(ReadFile(dir + "/err.txt") ==
        "stream-ab: fewer than 3 pairs of steps were timed (is the harness patch applied?)\n");
}

TEST_CASE("scripts/residency: the probes compile against the tree as it is") {
  // Compiled only (they need AVX-512 to run): probe.cpp calls the kernel's
  // internal tile entry, which moves with the code; overlap.cpp stands alone.
  const std::string dir = TempDir();
  const std::string cxx = "c++ -std=c++20 -fopenmp -fsyntax-only -I'" + SourcePath("src") + "' ";
  CHECK(Run(cxx + "'" + SourcePath("scripts/residency/probe.cpp") + "' > '" + dir +
            "/probe.log' 2>&1") == 0);
  CHECK(Run(cxx + "-mavx512f -mavx512bw -mf16c -mfma '" +
            SourcePath("scripts/residency/overlap.cpp") + "' > '" + dir + "/overlap.log' 2>&1") ==
        0);
  CHECK(ReadFile(dir + "/probe.log").empty());
  // The script refuses a CPU without AVX-512 (F and BW) instead of dying on SIGILL.
  CHECK(ReadFile(SourcePath("scripts/residency.sh")).find("avx512bw") != std::string::npos);
}

TEST_CASE("scripts/kernel-ab: its driver compiles against the tree as it is") {
  // Compiled only: drv.cpp calls the tile entries (both SIMD paths) and
  // shares its aligned buffers with the residency probe (scripts/common).
  const std::string dir = TempDir();
  const std::string cxx = "c++ -std=c++20 -fsyntax-only -I'" + SourcePath("src") + "' ";
  for (const std::string def : {"", "-DKVPLAN_AB_AVX512 "}) {
    CAPTURE(def);
    CHECK(Run(cxx + def + "-DKVPLAN_AB_ENTRY=ab_new '" + SourcePath("scripts/kernel-ab/drv.cpp") +
              "' > '" + dir + "/drv.log' 2>&1") == 0);
    CHECK(ReadFile(dir + "/drv.log").empty());
  }
  CHECK(Run(cxx + "'" + SourcePath("scripts/kernel-ab/main.cpp") + "' > '" + dir +
            "/main.log' 2>&1") == 0);
  CHECK(ReadFile(dir + "/main.log").empty());
}

TEST_CASE("scripts/gemv-ab: its driver compiles against the tree as it is") {
  // Compiled only (timing it takes minutes): main.cpp declares the old
  // version's GemvF16 itself and forwards the CPU checks the old sources call
  // in their renamed namespace, so a change to either signature shows here.
  const std::string dir = TempDir();
  const std::string cxx = "c++ -std=c++20 -fsyntax-only -I'" + SourcePath("src") + "' ";
  CHECK(Run(cxx + "'" + SourcePath("scripts/gemv-ab/main.cpp") + "' > '" + dir +
            "/main.log' 2>&1") == 0);
  CHECK(ReadFile(dir + "/main.log").empty());
  CHECK(Run("bash -n '" + SourcePath("scripts/gemv-ab.sh") + "'") == 0);
}
