// Text that every output format can carry: input bytes that are not UTF-8
// (a file name with byte 0xff, a Latin-1 model name) replaced by U+FFFD, so
// a JSON, XML or SVG document built from them stays valid.
#pragma once

#include <string>
#include <string_view>

namespace kvplan {

/// `s` with every byte that does not start a valid UTF-8 sequence (an
/// overlong form, a surrogate U+D800..U+DFFF, a code point past U+10FFFF, a
/// cut-off sequence) replaced by U+FFFD, one per bad byte. Valid text is
/// returned unchanged.
std::string ValidUtf8(std::string_view s);

}  // namespace kvplan
