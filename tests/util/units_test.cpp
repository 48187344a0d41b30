#include "util/units.h"

#include <doctest/doctest.h>

#include <string>

#include "util/checked.h"
#include "util/error.h"

using namespace kvplan;

TEST_CASE("token counts follow vLLM's k = 1000, K = 1024 convention") {
  CHECK(ParseTokens("4096") == 4096);
  CHECK(ParseTokens("4k") == 4000);
  CHECK(ParseTokens("4K") == 4096);
  CHECK(ParseTokens("128K") == 131072);
  CHECK(ParseTokens("1.5k") == 1500);
  CHECK(ParseTokens("1M") == 1048576);
  CHECK(ParseTokens("2m") == 2000000);
  CHECK(ParseTokens("131_072") == 131072);
  CHECK(ParseTokens("0") == 0);
  CHECK_THROWS_WITH(ParseTokens("-5", "--context"), "--context: '-5' is negative");
  CHECK(ParseTokens("1.5K") == 1536);
  CHECK_THROWS_WITH(ParseTokens("1.3K", "--context"), "--context: '1.3K' is not a whole number");
  CHECK_THROWS_WITH(ParseTokens("4x", "--context"),
                    "--context: '4x' has an unknown suffix 'x' (use k/m/g = 1000s, K/M/G = 1024s)");
  CHECK_THROWS_WITH(ParseTokens("", "--context"), "--context: empty value");
  CHECK_THROWS_WITH(ParseTokens("abc", "--context"),
                    "--context: 'abc' is not a number (expected e.g. 4096, 4k = 4000, 4K = 4096)");
  CHECK_THROWS_WITH(ParseTokens("99999999999999999999G", "n"),
                    "n: '99999999999999999999G' is too large (over 2^64)");
}

TEST_CASE("digit separators: groups of three in the whole part, nowhere else") {
  CHECK(ParseTokens("131,072") == 131072);
  CHECK(ParseTokens("1,048,576") == 1048576);
  CHECK(ParseTokens("1_000_000") == 1000000);
  CHECK(ParseTokens("1,024.5k") == 1024500);
  CHECK(ParseBytes("1,000 GB") == 1'000'000'000'000ull);
  // A decimal comma must not read as a separator: "1,5K" was 15K.
  const char* kOdd =
      "' groups its digits oddly (',' and '_' only between groups of three digits, "
      "as in 131,072; a decimal point is '.')";
  for (const char* bad : {"1,5K", "13,1072", "1,0000", "1234,567", ",123", "1,,000", "123,",
                          "1_000_0", "1.000,5", "1.5_00"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(ParseTokens(bad, "--max-model-len"),
                      (std::string("--max-model-len: '") + bad + kOdd).c_str());
  }
  CHECK_THROWS_WITH(ParseBytes("20,5GB", "--kv-cache-memory-bytes"),
                    (std::string("--kv-cache-memory-bytes: '20,5GB") + kOdd).c_str());
}

TEST_CASE("memory sizes: GB is 10^9, GiB is 2^30") {
  CHECK(ParseBytes("80GB") == 80'000'000'000ull);
  CHECK(ParseBytes("80GiB") == 80ull * kGiB);
  CHECK(ParseBytes("80 GiB") == 80ull * kGiB);
  CHECK(ParseBytes("3.81GiB") == 4'090'956'349ull);  // floor(3.81 * 2^30 = 4,090,956,349.44)
  CHECK(ParseBytes("512MiB") == 512ull * kMiB);
  CHECK(ParseBytes("1000") == 1000);
  CHECK(ParseBytes("1.5TB") == 1'500'000'000'000ull);
  CHECK(ParseBytes("16gib") == 16ull * kGiB);
  CHECK_THROWS_WITH(ParseBytes("80XB", "--gpu-memory"),
                    "--gpu-memory: '80XB' has an unknown unit 'XB' (use B, KB, MB, GB, TB or KiB, "
                    "MiB, GiB, TiB)");
  CHECK_THROWS_WITH(ParseBytes("-1GB", "m"), "m: '-1GB' is negative");
  // A fraction of a larger unit rounds down to whole bytes; of a byte, an error.
  CHECK(ParseBytes("0.5KiB") == 512);
  CHECK_THROWS_WITH(ParseBytes("2.5", "--reserve"), "--reserve: '2.5' is not a whole number");
  CHECK_THROWS_WITH(ParseBytes("2.5 B", "--reserve"), "--reserve: '2.5 B' is not a whole number");
  CHECK(ParseBytes("2.0") == 2);
}

TEST_CASE("printing shows both conventions") {
  CHECK(WithCommas(1342177280) == "1,342,177,280");
  CHECK(WithCommas(0) == "0");
  CHECK(WithCommas(999) == "999");
  CHECK(FormatGiB(1342177280) == "1.25 GiB");
  CHECK(FormatGB(1342177280) == "1.34 GB");
  CHECK(FormatBoth(2 * kGiB) == "2.00 GiB (2.15 GB)");
  CHECK(FormatBoth(512) == "512 B");
  CHECK(FormatTokens(131072) == "131,072 (128K)");
  CHECK(FormatTokens(4000) == "4,000");
  CHECK(FormatTokens(1048576) == "1,048,576 (1M)");
  // Three significant digits, never an exponent.
  CHECK(Sig3(0.1474) == "0.147");
  CHECK(Sig3(32.14) == "32.1");
  CHECK(Sig3(999.4) == "999");
  CHECK(Sig3(999.6) == "1,000");  // not "1e+03"
  CHECK(Sig3(13230.4) == "13,230");
  CHECK(Sig3(0) == "0");
}

TEST_CASE("checked arithmetic refuses to wrap") {
  CHECK(CheckedMul(1ull << 32, 1ull << 31) == 1ull << 63);
  CHECK_THROWS_WITH(CheckedMul(1ull << 32, 1ull << 32, "x"),
                    "overflow: x = 4294967296 x 4294967296 does not fit in 64 bits");
  CHECK_THROWS(CheckedAdd(UINT64_MAX, 1));
  CHECK(CeilDiv(17, 16) == 2);
  CHECK(CeilDiv(16, 16) == 1);
  CHECK(RoundUp(17, 16) == 32);
}

// Error text of `fn()`, or "" when it returns.
template <typename Fn>
std::string ErrorOf(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("one number grammar for real values: decimal only, as the engines' float()") {
  CHECK(TryParseReal("0.9") == 0.9);
  CHECK(TryParseReal(" 0.9 ") == 0.9);  // float(' 0.9 ') strips
  CHECK(TryParseReal(".5") == 0.5);
  CHECK(TryParseReal("5.") == 5.0);
  CHECK(TryParseReal("1e-3") == 1e-3);
  CHECK(TryParseReal("2.5E+2") == 250.0);
  CHECK(TryParseReal("-1") == -1.0);
  CHECK(TryParseReal("+1") == 1.0);
  CHECK(TryParseReal("1e-400") == 0.0);  // underflow reads as 0, as in Python
  for (const char* bad :
       {"0x0.8",  "0x1p-1", "0X.8P0", "inf", "-inf", "nan", "NaN", "infinity", "1e400",
        "-1e400", "",       " ",      ".",   "e5",   "1e",  "1e+", "1_000.5",  "1,5",
        "0.9.1",  "1 2",    "0.5f",   "1d",  "--1",  "+-1", ".e1"}) {
    CAPTURE(bad);
    CHECK_FALSE(TryParseReal(bad).has_value());
  }
  CHECK(ErrorOf([] { ParseReal("0x0.8", "--x"); }) ==
        "--x: '0x0.8' is not a number (decimal digits, an optional '.' and exponent: 0.9, 1e-3)");
  CHECK(ErrorOf([] { ParseReal("1e400", "--x"); }) == "--x: '1e400' is too large for a number");
}

TEST_CASE("Python int() for vLLM's int flags: no suffix, point or exponent") {
  CHECK(ParsePythonInt("256", "f") == 256);
  CHECK(ParsePythonInt(" 12 ", "f") == 12);
  CHECK(ParsePythonInt("+5", "f") == 5);
  CHECK(ParsePythonInt("1_000", "f") == 1000);
  CHECK(ParsePythonInt("0", "f") == 0);
  for (const char* bad :
       {"1.5K", "1K", "1k", "1.0", "1e3", "0x10", "_1", "1_", "1__0", "", "+", "four", "1 0"}) {
    CAPTURE(bad);
    CHECK(ErrorOf([&] { ParsePythonInt(bad, "f"); }).find("is not an integer") !=
          std::string::npos);
  }
  CHECK(ErrorOf([] { ParsePythonInt("-1", "f"); }) == "f: '-1' is negative");
  CHECK(ErrorOf([] { ParsePythonInt("99999999999999999999", "f"); }) ==
        "f: '99999999999999999999' is too large (over 2^64)");
}

TEST_CASE("vLLM's human_readable_int for --max-model-len and --max-num-batched-tokens") {
  CHECK(ParseHumanReadableInt("32768", "f") == 32768);
  CHECK(ParseHumanReadableInt("32K", "f") == 32768);
  CHECK(ParseHumanReadableInt("32k", "f") == 32000);
  CHECK(ParseHumanReadableInt("25.6k", "f") == 25600);
  CHECK(ParseHumanReadableInt("1m", "f") == 1000000);
  CHECK(ParseHumanReadableInt("1M", "f") == 1048576);
  CHECK(ParseHumanReadableInt("1G", "f") == 1073741824);
  CHECK(ParseHumanReadableInt("1T", "f") == 1099511627776);
  CHECK(ParseHumanReadableInt("1.001k", "f") == 1000);  // int(1.001 * 1000), as Python computes it
  CHECK(ErrorOf([] { ParseHumanReadableInt("1.5K", "f"); }).find("no decimals with a binary") !=
        std::string::npos);
  for (const char* bad : {"1.5", "1e3", "0x10", "1KB", "1Ki", "k", ".5k", "5.k", "1.2.3k", "1 K"}) {
    CAPTURE(bad);
    CHECK_FALSE(ErrorOf([&] { ParseHumanReadableInt(bad, "f"); }).empty());
  }
}

TEST_CASE("a context is bounded the same wherever it is read") {
  CHECK(ParseContextTokens("1G", "c") == kMaxContextTokens);
  CHECK(ErrorOf([] { ParseContextTokens("16G", "c"); }) ==
        "c: 17,179,869,184 tokens is over kvplan's limit of 1,073,741,824 (2^30) tokens for a "
        "context");
  CHECK(ErrorOf([] { ParseContextTokens("0", "c"); }) == "c: must be at least 1 token");
  CHECK(ErrorOf([] {
          CheckContextTokens(kMaxContextTokens + 1, "c");
        }).find("over kvplan's limit") != std::string::npos);
  CHECK(ErrorOf([] { CheckEngineCount("tp", kMaxRanks + 1, "tp"); }) ==
        "tp: 65,537 is over the limit of 65,536");
  CHECK(ErrorOf([] { CheckEngineCount("block_size", kMaxBlockTokens, "b"); }).empty());
  CHECK(ErrorOf([] { CheckEngineCount("max_num_seqs", UINT64_MAX, "s"); }).empty());
}

TEST_CASE("a number too long for 64 bits is too large, not 'not a number'") {
  CHECK(ErrorOf([] { ParseTokens("9999999999999999999999999999999999999999", "-c"); }) ==
        "-c: '9999999999999999999999999999999999999999' is too large (over 2^64)");
  CHECK(ErrorOf([] { ParseBytes("9999999999999999999999999999999999999999GB", "m"); }) ==
        "m: '9999999999999999999999999999999999999999GB' is too large (over 2^64)");
}
