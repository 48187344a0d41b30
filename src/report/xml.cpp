#include "report/xml.h"

#include "util/utf8.h"

namespace kvplan {

std::string XmlEscape(std::string_view s) {
  const std::string text = ValidUtf8(s);
  constexpr const char* kReplacement = "\xef\xbf\xbd";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
      case '\n':
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += kReplacement;
        } else if (c == '\xef' && i + 2 < text.size() && text[i + 1] == '\xbf' &&
                   (text[i + 2] == '\xbe' || text[i + 2] == '\xbf')) {
          out += kReplacement;  // U+FFFE, U+FFFF
          i += 2;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace kvplan
