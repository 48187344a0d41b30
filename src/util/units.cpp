#include "util/units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "util/error.h"

namespace kvplan {
namespace {

__extension__ typedef unsigned __int128 u128;

// A non-negative decimal number split as digits / 10^scale, parsed exactly.
struct Decimal {
  u128 digits = 0;
  int scale = 0;  // number of digits after the point
};

// Parses the leading "123" or "1.25" of `text`; returns the rest in `rest`.
// `too_long` is set when the digits run past 2^100 (far over 2^64: the
// value is too large, not malformed).
bool ParseDecimal(std::string_view text, Decimal& out, std::string_view& rest,
                  bool* too_long = nullptr) {
  size_t i = 0;
  bool any = false, point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      if (out.digits > (static_cast<u128>(1) << 100)) {
        if (too_long != nullptr) *too_long = true;
        return false;
      }
      out.digits = out.digits * 10 + static_cast<unsigned>(c - '0');
      if (point) ++out.scale;
      any = true;
    } else if (c == '.' && !point) {
      point = true;
    } else if (c == '_' || c == ',') {
      continue;  // 131_072 and 131,072 read as people write them
    } else {
      break;
    }
  }
  rest = text.substr(i);
  return any && out.scale <= 18;
}

// ',' and '_' group the digits of the whole part in threes, as people write
// 131,072 or 131_072; anywhere else they are an error, not skipped: "1,5K"
// (a decimal comma) would otherwise read as 15K.
void CheckGrouping(std::string_view t, std::string_view text, std::string_view what) {
  const std::string_view num = t.substr(0, t.find_first_not_of("0123456789,_."));
  const size_t point = num.find('.');
  const std::string_view whole = num.substr(0, point);
  // No separator in the fraction; in a grouped whole part the first group
  // 1-3 digits, every later one exactly 3.
  bool odd =
      point != std::string_view::npos && num.find_first_of(",_", point) != std::string_view::npos;
  const bool grouped = whole.find_first_of(",_") != std::string_view::npos;
  for (size_t start = 0; grouped && !odd;) {
    const size_t sep = whole.find_first_of(",_", start);
    const size_t len = (sep == std::string_view::npos ? whole.size() : sep) - start;
    odd = start == 0 ? len == 0 || len > 3 : len != 3;
    if (sep == std::string_view::npos) break;
    start = sep + 1;
  }
  if (odd) {
    Fail(
        "{}: '{}' groups its digits oddly (',' and '_' only between groups of three digits, "
        "as in 131,072; a decimal point is '.')",
        what, text);
  }
}

u128 Pow10(int n) {
  u128 r = 1;
  while (n-- > 0) r *= 10;
  return r;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// value * multiplier, which must not exceed 2^64-1. `exact` demands a whole result.
uint64_t Scale(const Decimal& d, uint64_t multiplier, bool exact, std::string_view text,
               std::string_view what) {
  u128 num = d.digits * multiplier;
  if (d.digits != 0 && num / d.digits != multiplier) {
    Fail("{}: '{}' is too large (over 2^64)", what, text);
  }
  u128 den = Pow10(d.scale);
  if (exact && num % den != 0) Fail("{}: '{}' is not a whole number", what, text);
  u128 v = num / den;
  if (v > UINT64_MAX) Fail("{}: '{}' is too large (over 2^64)", what, text);
  return static_cast<uint64_t>(v);
}

std::string Fixed2(double v) {
  return fmt::format("{:.2f}", v);
}

// The decimal a token count or size starts with, into `d`; returns what
// follows it (the suffix or unit). Refuses an empty or negative value, bad
// digit grouping, and text with no number ("'<text>' is <not_a>").
std::string_view LeadingDecimal(std::string_view text, std::string_view what,
                                std::string_view not_a, Decimal& d) {
  const std::string_view t = Trim(text);
  if (t.empty()) Fail("{}: empty value", what);
  if (t.front() == '-') Fail("{}: '{}' is negative", what, text);
  CheckGrouping(t, text, what);
  std::string_view rest;
  bool too_long = false;
  if (!ParseDecimal(t, d, rest, &too_long)) {
    if (too_long) Fail("{}: '{}' is too large (over 2^64)", what, text);
    Fail("{}: '{}' is {}", what, text, not_a);
  }
  return rest;
}

}  // namespace

uint64_t ParseTokens(std::string_view text, std::string_view what) {
  Decimal d;
  const std::string_view rest =
      LeadingDecimal(text, what, "not a number (expected e.g. 4096, 4k = 4000, 4K = 4096)", d);
  uint64_t mult = 1;
  if (rest.size() == 1) {
    switch (rest[0]) {
      case 'k':
        mult = 1000ull;
        break;
      case 'm':
        mult = 1000ull * 1000;
        break;
      case 'g':
        mult = 1000ull * 1000 * 1000;
        break;
      case 'K':
        mult = kKiB;
        break;
      case 'M':
        mult = kMiB;
        break;
      case 'G':
        mult = kGiB;
        break;
      default:
        Fail("{}: '{}' has an unknown suffix '{}' (use k/m/g = 1000s, K/M/G = 1024s)", what, text,
             rest);
    }
  } else if (!rest.empty()) {
    Fail("{}: '{}' has an unknown suffix '{}' (use k/m/g = 1000s, K/M/G = 1024s)", what, text,
         rest);
  }
  return Scale(d, mult, /*exact=*/true, text, what);
}

uint64_t ParseBytes(std::string_view text, std::string_view what) {
  Decimal d;
  const std::string_view rest =
      Trim(LeadingDecimal(text, what, "not a size (expected e.g. 80GB, 80GiB, 3.81GiB, 1000)", d));
  std::string unit;
  for (char c : rest) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct U {
    const char* name;
    uint64_t mult;
  };
  static constexpr std::array<U, 18> kUnits{{{"", 1},
                                             {"b", 1},
                                             {"k", 1000},
                                             {"kb", 1000},
                                             {"kib", kKiB},
                                             {"m", 1000ull * 1000},
                                             {"mb", 1000ull * 1000},
                                             {"mib", kMiB},
                                             {"g", kGB},
                                             {"gb", kGB},
                                             {"gib", kGiB},
                                             {"t", kGB * 1000},
                                             {"tb", kGB * 1000},
                                             {"tib", kTiB},
                                             {"ki", kKiB},
                                             {"mi", kMiB},
                                             {"gi", kGiB},
                                             {"ti", kTiB}}};
  for (const U& u : kUnits) {
    // A fraction of a larger unit rounds down to whole bytes (3.81GiB); a
    // fraction of a byte itself is a mistake.
    if (unit == u.name) return Scale(d, u.mult, /*exact=*/u.mult == 1, text, what);
  }
  Fail("{}: '{}' has an unknown unit '{}' (use B, KB, MB, GB, TB or KiB, MiB, GiB, TiB)", what,
       text, rest);
}

uint64_t ParseContextTokens(std::string_view text, std::string_view what) {
  const uint64_t n = ParseTokens(text, what);
  CheckContextTokens(n, what);
  return n;
}

void CheckContextTokens(uint64_t n, std::string_view what) {
  if (n == 0) Fail("{}: must be at least 1 token", what);
  if (n > kMaxContextTokens) {
    Fail("{}: {} tokens is over kvplan's limit of {} (2^30) tokens for a context", what,
         WithCommas(n), WithCommas(kMaxContextTokens));
  }
}

void CheckEngineCount(std::string_view field, uint64_t n, std::string_view what) {
  const uint64_t max = field == "tp" || field == "pp" || field == "dp" ? kMaxRanks
                       : field == "block_size"                         ? kMaxBlockTokens
                                                                       : UINT64_MAX;
  if (n > max) Fail("{}: {} is over the limit of {}", what, WithCommas(n), WithCommas(max));
}

namespace {

// Digits from `i` on; returns how many.
size_t Digits(std::string_view t, size_t& i) {
  const size_t start = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  return i - start;
}

}  // namespace

std::optional<double> TryParseReal(std::string_view text) {
  const std::string_view t = Trim(text);
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  size_t mantissa = Digits(t, i);
  if (i < t.size() && t[i] == '.') {
    ++i;
    mantissa += Digits(t, i);
  }
  if (mantissa == 0) return std::nullopt;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (Digits(t, i) == 0) return std::nullopt;
  }
  if (i != t.size()) return std::nullopt;
  // Only the decimal grammar above reaches strtod, so its hex, inf and nan
  // forms never do; an underflow (1e-400) reads as 0 as in Python.
  const std::string s(t);
  errno = 0;
  const double v = std::strtod(s.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

double ParseReal(std::string_view text, std::string_view what) {
  if (std::optional<double> v = TryParseReal(text)) return *v;
  const std::string_view t = Trim(text);
  if (!t.empty() && t.find_first_not_of("0123456789+-.eE") == std::string_view::npos) {
    Fail("{}: '{}' is too large for a number", what, text);
  }
  Fail("{}: '{}' is not a number (decimal digits, an optional '.' and exponent: 0.9, 1e-3)", what,
       text);
}

uint64_t ParsePythonInt(std::string_view text, std::string_view what) {
  std::string_view t = Trim(text);
  const bool negative = !t.empty() && t.front() == '-';
  if (!t.empty() && (t.front() == '+' || t.front() == '-')) t.remove_prefix(1);
  uint64_t v = 0;
  bool ok = !t.empty() && t.front() != '_' && t.back() != '_';
  bool overflow = false;
  for (size_t i = 0; ok && i < t.size(); ++i) {
    const char c = t[i];
    if (c == '_') {
      ok = t[i + 1] != '_';  // single '_' between digits (the last is no '_')
      continue;
    }
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    overflow = overflow || __builtin_mul_overflow(v, 10u, &v) ||
               __builtin_add_overflow(v, static_cast<uint64_t>(c - '0'), &v);
  }
  if (!ok)
    Fail("{}: '{}' is not an integer (digits only, as the engine's int() reads it)", what, text);
  if (negative && v != 0) Fail("{}: '{}' is negative", what, text);
  if (overflow) Fail("{}: '{}' is too large (over 2^64)", what, text);
  return v;
}

uint64_t ParseHumanReadableInt(std::string_view text, std::string_view what) {
  const std::string_view t = Trim(text);
  static constexpr std::string_view kSuffixes = "kKmMgGtT";
  if (t.size() >= 2 && kSuffixes.find(t.back()) != std::string_view::npos) {
    const std::string_view number = t.substr(0, t.size() - 1);
    const size_t point = number.find('.');
    const bool digits_ok =
        !number.empty() && number.find_first_not_of("0123456789.") == std::string_view::npos &&
        number.front() != '.' && number.back() != '.' &&
        (point == std::string_view::npos || number.find('.', point + 1) == std::string_view::npos);
    if (digits_ok) {
      const char suffix = t.back();
      const int power = suffix == 'k' || suffix == 'K'   ? 1
                        : suffix == 'm' || suffix == 'M' ? 2
                        : suffix == 'g' || suffix == 'G' ? 3
                                                         : 4;
      if (suffix >= 'a') {  // decimal: int(float(number) * 10^(3 power)), as vLLM computes it
        double mult = 1;
        for (int p = 0; p < power; ++p) mult *= 1000;
        const double v = std::strtod(std::string(number).c_str(), nullptr) * mult;
        if (!(v < 18446744073709551616.0)) Fail("{}: '{}' is too large (over 2^64)", what, text);
        return static_cast<uint64_t>(v);
      }
      if (point != std::string_view::npos) {
        Fail(
            "{}: '{}': no decimals with a binary suffix such as {} (vLLM refuses it; did you mean "
            "{}{}?)",
            what, text, suffix, number, static_cast<char>(suffix - 'A' + 'a'));
      }
      // All digits here: ParsePythonInt fails only on a value over 2^64.
      uint64_t v = 0;
      try {
        v = ParsePythonInt(number, what);
      } catch (const Error&) {
        Fail("{}: '{}' is too large (over 2^64)", what, text);
      }
      for (int p = 0; p < power; ++p) {
        if (__builtin_mul_overflow(v, uint64_t{1024}, &v)) {
          Fail("{}: '{}' is too large (over 2^64)", what, text);
        }
      }
      return v;
    }
  }
  return ParsePythonInt(t, what);
}

std::string Plural(uint64_t n, std::string_view word) {
  return WithCommas(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string WithCommas(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count > 0 && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return out;
}

namespace {

// bytes in the largest of `names` (each `step` times the one before) that
// keeps the value at or above 1, with two decimals ("3.81 GiB"); plain bytes
// below the first step.
std::string FormatScaled(uint64_t bytes, double step, const std::array<const char*, 5>& names) {
  double v = static_cast<double>(bytes);
  size_t i = 0;
  while (v >= step && i + 1 < names.size()) {
    v /= step;
    ++i;
  }
  if (i == 0) return fmt::format("{} B", bytes);
  return Fixed2(v) + " " + names[i];
}

}  // namespace

std::string FormatGiB(uint64_t bytes) {
  return FormatScaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB"});
}

std::string Sig3(double v) {
  if (v >= 999.5 && v < 9e18) return WithCommas(static_cast<uint64_t>(std::llround(v)));
  return fmt::format("{:.3g}", v);
}

std::string FormatGB(uint64_t bytes) {
  return FormatScaled(bytes, 1000.0, {"B", "kB", "MB", "GB", "TB"});
}

std::string FormatBoth(uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  return FormatGiB(bytes) + " (" + FormatGB(bytes) + ")";
}

std::string FormatTokens(uint64_t tokens) {
  std::string s = WithCommas(tokens);
  if (tokens >= 1024 && tokens % 1024 == 0) {
    uint64_t k = tokens / 1024;
    if (k % 1024 == 0) return s + fmt::format(" ({}M)", k / 1024);
    return s + fmt::format(" ({}K)", k);
  }
  return s;
}

double ParseSeconds(std::string_view text, std::string_view what) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  size_t unit = t.size();
  while (unit > 0 && std::isalpha(static_cast<unsigned char>(t[unit - 1]))) --unit;
  const std::string_view suffix = t.substr(unit);
  double scale = 0;
  if (suffix == "us") scale = 1e-6;
  if (suffix == "ms") scale = 1e-3;
  if (suffix == "s") scale = 1;
  if (suffix == "min") scale = 60;
  if (suffix.empty()) {
    Fail("{}: '{}' has no unit: write it as {}ms or {}s", what, text, t, t);
  }
  if (scale == 0) Fail("{}: '{}': unknown unit '{}' (us, ms, s or min)", what, text, suffix);
  const std::optional<double> v = TryParseReal(t.substr(0, unit));
  if (!v) Fail("{}: '{}' is not a duration such as 500ms or 0.5s", what, text);
  if (*v <= 0) Fail("{}: must be more than 0, got '{}'", what, text);
  if (*v * scale > 86400) Fail("{}: '{}' is over a day", what, text);
  return *v * scale;
}

double ParsePercentile(std::string_view text, std::string_view what) {
  if (text == "p50") return 0.5;
  if (text == "p90") return 0.9;
  if (text == "p95") return 0.95;
  if (text == "p99") return 0.99;
  Fail("{}: '{}' is not one of p50, p90, p95, p99", what, text);
}

}  // namespace kvplan
