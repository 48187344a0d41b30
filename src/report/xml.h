// Text inside XML (JUnit reports, SVG charts): valid XML 1.0 for any input.
#pragma once

#include <string>
#include <string_view>

namespace kvplan {

/// `s` with & < > " ' escaped, and every character XML 1.0 cannot carry,
/// even escaped, replaced by U+FFFD: bytes that are not UTF-8 (util/utf8.h),
/// control characters other than tab, newline and carriage return, and the
/// non-characters U+FFFE and U+FFFF. A carriage return is written &#13;, so
/// a parser's line-end normalisation keeps it.
std::string XmlEscape(std::string_view s);

}  // namespace kvplan
