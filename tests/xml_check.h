// A self-contained XML well-formedness checker for the SVG tests (no
// libxml2 dependency in CI).
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace kvplan::test {

// A small XML 1.0 well-formedness checker: one root element, tags nest and
// match, attributes are quoted and unique, entities are the predefined five
// or character references, no '<' or bare '&' in text. Returns "" or the
// first problem with its offset. Collects element names and text for checks.
struct XmlCheck {
  std::vector<std::string> elements;
  std::string text;  // all character data, entities decoded (roughly)

  std::string Check(const std::string& s) {
    size_t i = 0;
    std::vector<std::string> stack;
    int roots = 0;
    auto err = [&](const std::string& what) { return what + " at offset " + std::to_string(i); };
    auto is_name = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
             c == '.';
    };
    auto entity = [&](size_t& j) -> bool {  // s[j] == '&'
      size_t semi = s.find(';', j);
      if (semi == std::string::npos) return false;
      std::string e = s.substr(j + 1, semi - j - 1);
      bool ok = e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos" ||
                (e.size() > 1 && e[0] == '#');
      text += e == "amp" ? "&" : e == "lt" ? "<" : e == "gt" ? ">" : e == "quot" ? "\"" : "'";
      j = semi + 1;
      return ok;
    };
    if (s.rfind("<?xml", 0) == 0) {
      i = s.find("?>");
      if (i == std::string::npos) return err("unterminated XML declaration");
      i += 2;
    }
    while (i < s.size()) {
      if (s[i] != '<') {
        if (s[i] == '&') {
          if (!entity(i)) return err("bad entity");
          continue;
        }
        if (stack.empty() && !std::isspace(static_cast<unsigned char>(s[i]))) {
          return err("text outside the root element");
        }
        text += s[i++];
        continue;
      }
      if (s.compare(i, 4, "<!--") == 0) {
        size_t end = s.find("-->", i);
        if (end == std::string::npos) return err("unterminated comment");
        i = end + 3;
        continue;
      }
      if (s.compare(i, 2, "</") == 0) {
        size_t j = i + 2, start = j;
        while (j < s.size() && is_name(s[j])) ++j;
        std::string name = s.substr(start, j - start);
        while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
        if (j >= s.size() || s[j] != '>') return err("malformed end tag");
        if (stack.empty() || stack.back() != name) return err("mismatched end tag </" + name + ">");
        stack.pop_back();
        i = j + 1;
        continue;
      }
      size_t j = i + 1, start = j;
      while (j < s.size() && is_name(s[j])) ++j;
      std::string name = s.substr(start, j - start);
      if (name.empty()) return err("'<' not starting a tag");
      if (stack.empty() && ++roots > 1) return err("second root element");
      std::vector<std::string> attrs;
      while (true) {
        size_t ws = j;
        while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
        if (j >= s.size()) return err("unterminated tag");
        if (s[j] == '>' || s.compare(j, 2, "/>") == 0) break;
        if (ws == j) return err("no space before an attribute");
        size_t a = j;
        while (j < s.size() && is_name(s[j])) ++j;
        std::string attr = s.substr(a, j - a);
        if (attr.empty()) return err("malformed attribute");
        for (const std::string& seen : attrs) {
          if (seen == attr) return err("duplicate attribute " + attr);
        }
        attrs.push_back(attr);
        if (j >= s.size() || s[j] != '=') return err("attribute without a value");
        ++j;
        if (j >= s.size() || (s[j] != '"' && s[j] != '\'')) return err("unquoted attribute");
        char q = s[j++];
        while (j < s.size() && s[j] != q) {
          if (s[j] == '<') return err("'<' in an attribute value");
          if (s[j] == '&') {
            if (!entity(j)) return err("bad entity in an attribute");
          } else {
            ++j;
          }
        }
        if (j >= s.size()) return err("unterminated attribute value");
        ++j;
      }
      elements.push_back(name);
      if (s[j] == '/') {
        i = j + 2;
      } else {
        stack.push_back(name);
        i = j + 1;
      }
    }
    if (!stack.empty()) return "unclosed element <" + stack.back() + ">";
    if (roots != 1) return "no root element";
    return "";
  }
};

}  // namespace kvplan::test
