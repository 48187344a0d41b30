#include "report/json.h"

#include <fmt/format.h>

#include <cmath>

namespace kvplan {

Json& Json::Push(Json value) {
  if (std::holds_alternative<std::nullptr_t>(v_)) v_ = Array{};
  std::get<Array>(v_).push_back(std::move(value));
  return *this;
}

Json& Json::Set(std::string_view key, Json value) {
  if (std::holds_alternative<std::nullptr_t>(v_)) v_ = Object{};
  Object& o = std::get<Object>(v_);
  for (auto& [k, v] : o) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  o.emplace_back(std::string(key), std::move(value));
  return *this;
}

const Json* Json::Find(std::string_view key) const {
  if (const Object* o = std::get_if<Object>(&v_)) {
    for (const auto& [k, v] : *o) {
      if (k == key) return &v;
    }
  }
  return nullptr;
}

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Json::Dump(int indent) const {
  std::string out;
  DumpTo(out, indent, 0);
  return out;
}

void Json::DumpTo(std::string& out, int indent, int level) const {
  auto newline = [&](int lvl) {
    if (indent > 0) {
      out += '\n';
      out.append(static_cast<size_t>(indent * lvl), ' ');
    }
  };
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          out += "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          out += std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(v)) {
            out += "null";
          } else {
            out += fmt::format("{}", v);
          }
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += JsonQuote(v);
        } else if constexpr (std::is_same_v<T, Array>) {
          if (v.empty()) {
            out += "[]";
            return;
          }
          out += '[';
          for (size_t i = 0; i < v.size(); ++i) {
            if (i) out += ',';
            newline(level + 1);
            v[i].DumpTo(out, indent, level + 1);
          }
          newline(level);
          out += ']';
        } else {
          if (v.empty()) {
            out += "{}";
            return;
          }
          out += '{';
          for (size_t i = 0; i < v.size(); ++i) {
            if (i) out += ',';
            newline(level + 1);
            out += JsonQuote(v[i].first);
            out += indent > 0 ? ": " : ":";
            v[i].second.DumpTo(out, indent, level + 1);
          }
          newline(level);
          out += '}';
        }
      },
      v_);
}

}  // namespace kvplan
