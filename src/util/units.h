// Units people type and read: token counts (4096, 4k = 4000, 4K = 4096),
// memory sizes (80GB = 80e9, 80GiB = 80 * 2^30), and their printing in both
// GiB and GB so a reader can check either convention.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvplan {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = kKiB * 1024;
inline constexpr uint64_t kGiB = kMiB * 1024;
inline constexpr uint64_t kTiB = kGiB * 1024;
inline constexpr uint64_t kGB = 1000ull * 1000 * 1000;

/// Parses a token count: "4096", "4k" (4000), "4K" (4096), "1.5k" (1500),
/// "128K", "1m"/"1M", "1g"/"1G". Lowercase suffixes are powers of 1000 and
/// uppercase ones powers of 1024 (vLLM's convention). The result must be a
/// whole number >= 0. Throws Error naming `what` on anything else.
uint64_t ParseTokens(std::string_view text, std::string_view what = "token count");

/// Parses a memory size: "80GB" (80e9), "80GiB" (80 * 2^30), "3.81GiB"
/// (rounded down to a whole byte), "512MiB", "1.5TB", or plain bytes "1000".
/// Units: B, KB/KiB, MB/MiB, GB/GiB, TB/TiB (case-insensitive "b"; k/m/g/t
/// without B also accepted as decimal). Throws Error naming `what`.
uint64_t ParseBytes(std::string_view text, std::string_view what = "memory size");

/// "1,342,177,280" — thousands separators for exact integers.
std::string WithCommas(uint64_t n);

/// "1 token", "16 tokens", "1,024 tokens": n with commas and `word`, plus
/// an "s" unless n is 1.
std::string Plural(uint64_t n, std::string_view word);

/// Three significant digits without an exponent from 1e-4 up: "0.147",
/// "32.1", "1,140" (from 999.5 up: a whole number with commas). For v >= 0.
std::string Sig3(double v);

/// "1.25 GiB" — binary units, 2 decimals (B, KiB, MiB, GiB, TiB).
std::string FormatGiB(uint64_t bytes);

/// "1.34 GB" — decimal units, 2 decimals (B, kB, MB, GB, TB).
std::string FormatGB(uint64_t bytes);

/// "1.25 GiB (1.34 GB)".
std::string FormatBoth(uint64_t bytes);

/// "131,072" plus " (128K)" when the count is a round multiple of 1024.
std::string FormatTokens(uint64_t tokens);

}  // namespace kvplan
