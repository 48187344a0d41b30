#include "util/units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>

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
bool ParseDecimal(std::string_view text, Decimal& out, std::string_view& rest) {
  size_t i = 0;
  bool any = false, point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      if (out.digits > (static_cast<u128>(1) << 100)) return false;  // absurd
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
    Fail("{}: '{}' groups its digits oddly (',' and '_' only between groups of three digits, "
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

std::string Fixed2(double v) { return fmt::format("{:.2f}", v); }

}  // namespace

uint64_t ParseTokens(std::string_view text, std::string_view what) {
  std::string_view t = Trim(text);
  if (t.empty()) Fail("{}: empty value", what);
  if (t.front() == '-') Fail("{}: '{}' is negative", what, text);
  CheckGrouping(t, text, what);
  Decimal d;
  std::string_view rest;
  if (!ParseDecimal(t, d, rest)) {
    Fail("{}: '{}' is not a number (expected e.g. 4096, 4k = 4000, 4K = 4096)", what, text);
  }
  uint64_t mult = 1;
  if (rest.size() == 1) {
    switch (rest[0]) {
      case 'k': mult = 1000ull; break;
      case 'm': mult = 1000ull * 1000; break;
      case 'g': mult = 1000ull * 1000 * 1000; break;
      case 'K': mult = kKiB; break;
      case 'M': mult = kMiB; break;
      case 'G': mult = kGiB; break;
      default:
        Fail("{}: '{}' has an unknown suffix '{}' (use k/m/g = 1000s, K/M/G = 1024s)", what,
             text, rest);
    }
  } else if (!rest.empty()) {
    Fail("{}: '{}' has an unknown suffix '{}' (use k/m/g = 1000s, K/M/G = 1024s)", what, text,
         rest);
  }
  return Scale(d, mult, /*exact=*/true, text, what);
}

uint64_t ParseBytes(std::string_view text, std::string_view what) {
  std::string_view t = Trim(text);
  if (t.empty()) Fail("{}: empty value", what);
  if (t.front() == '-') Fail("{}: '{}' is negative", what, text);
  CheckGrouping(t, text, what);
  Decimal d;
  std::string_view rest;
  if (!ParseDecimal(t, d, rest)) {
    Fail("{}: '{}' is not a size (expected e.g. 80GB, 80GiB, 3.81GiB, 1000)", what, text);
  }
  rest = Trim(rest);
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

std::string FormatGiB(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kNames{"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t i = 0;
  while (v >= 1024.0 && i + 1 < kNames.size()) {
    v /= 1024.0;
    ++i;
  }
  if (i == 0) return fmt::format("{} B", bytes);
  return Fixed2(v) + " " + kNames[i];
}

std::string Sig3(double v) {
  if (v >= 999.5 && v < 9e18) return WithCommas(static_cast<uint64_t>(std::llround(v)));
  return fmt::format("{:.3g}", v);
}

std::string FormatGB(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kNames{"B", "kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  size_t i = 0;
  while (v >= 1000.0 && i + 1 < kNames.size()) {
    v /= 1000.0;
    ++i;
  }
  if (i == 0) return fmt::format("{} B", bytes);
  return Fixed2(v) + " " + kNames[i];
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

}  // namespace kvplan
