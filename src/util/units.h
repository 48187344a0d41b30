// Units people type and read: token counts (4096, 4k = 4000, 4K = 4096),
// memory sizes (80GB = 80e9, 80GiB = 80 * 2^30), and their printing in both
// GiB and GB so a reader can check either convention.
#pragma once

#include <cstdint>
#include <optional>
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

/// The longest context any command takes, in tokens (2^30): a request
/// length, --context, --max-model-len and a deployment config's contexts are
/// refused above it wherever they are read (spec ModelLimits::kMaxContext is
/// the same bound for a model's max_context).
inline constexpr uint64_t kMaxContextTokens = 1ull << 30;

/// ParseTokens for a context length: at least 1 token and at most
/// kMaxContextTokens. The one check of a context, for the CLI's flags and
/// for the same value read from a file (`what` then names file:line:col and
/// the field).
uint64_t ParseContextTokens(std::string_view text, std::string_view what);
/// The same bounds for a context already read as a number (an engine flag
/// in the engine's own grammar): Error naming `what` outside 1..kMaxContextTokens.
void CheckContextTokens(uint64_t n, std::string_view what);

/// The most ranks of one kind (tensor, pipeline or data parallel), nodes or
/// GPUs per node: the bound of --tp, --pp, --nodes and --gpus-per-node, and of
/// the same values in deployment configs and engine command lines.
inline constexpr uint64_t kMaxRanks = 1ull << 16;
/// The largest KV block (--block-size and the engines' block keys), in tokens.
inline constexpr uint64_t kMaxBlockTokens = 1ull << 20;

/// Checks an engine count that EngineArgs field `field` holds ("tp", "pp",
/// "dp", "block_size"; others have no bound beyond 64 bits) against the
/// same bound the CLI's flag has: Error "WHAT: N is over the limit of MAX".
void CheckEngineCount(std::string_view field, uint64_t n, std::string_view what);

/// The one grammar for real numbers (fractions, percentages, milliseconds),
/// the decimal part of Python's float(): optional sign, digits with an
/// optional '.' (".5" and "5." too), an optional exponent (1e-3, 2.5E+2),
/// with whitespace around it trimmed. Refused: hex floats (0x0.8, 0x1p-1),
/// inf, nan, '_' and ',' in the digits, and a value too large for a double
/// (1e400). Returns nullopt for any of these.
std::optional<double> TryParseReal(std::string_view text);

/// TryParseReal, throwing Error "WHAT: 'TEXT' is not a number ..." (or "is
/// too large") on text outside the grammar.
double ParseReal(std::string_view text, std::string_view what);

/// A duration with its unit: "500ms", "0.5s", "50 ms", "2 s" (us, ms, s,
/// min). Returns seconds, > 0. Throws Error naming `what` for a number
/// without a unit (is 50 ms or s?), an unknown unit, or 0 and below.
double ParseSeconds(std::string_view text, std::string_view what);

/// A latency percentile as written: p50, p90, p95 or p99, as a fraction
/// (0.9). Throws Error "WHAT: 'TEXT' is not one of p50, p90, p95, p99".
double ParsePercentile(std::string_view text, std::string_view what);

/// An integer as Python's int() reads a command-line word (vLLM's int
/// flags): optional whitespace and '+', decimal digits with single '_'
/// between them. No point, exponent or suffix. Throws Error naming `what`;
/// a negative value is refused (no engine count is negative).
uint64_t ParsePythonInt(std::string_view text, std::string_view what);

/// vLLM's human_readable_int (--max-model-len, --max-num-batched-tokens):
/// a number with one suffix, k/m/g/t (powers of 1000, a decimal such as
/// 25.6k allowed and truncated as int(float(n) * 1000) does) or K/M/G/T
/// (powers of 1024, whole numbers only), or else a Python int.
uint64_t ParseHumanReadableInt(std::string_view text, std::string_view what);

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
