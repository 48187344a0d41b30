#include "util/utf8.h"

#include <cstdint>

namespace kvplan {

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 when there is none.
size_t ValidSequenceAt(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b < 0x80           ? 1
                   : (b >> 5) == 0x6  ? 2
                   : (b >> 4) == 0xe  ? 3
                   : (b >> 3) == 0x1e ? 4
                                      : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c >> 6) != 0x2) return 0;
    cp = (cp << 6) | (c & 0x3fu);
  }
  const bool ok = n == 1 || (n == 2 && cp >= 0x80) ||
                  (n == 3 && cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff)) ||
                  (n == 4 && cp >= 0x10000 && cp <= 0x10ffff);
  return ok ? n : 0;
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = ValidSequenceAt(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace kvplan
