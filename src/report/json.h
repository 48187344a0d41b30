// A small JSON value for kvplan's machine-readable output: objects keep their
// insertion order so the documented key order is what users see.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kvplan {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}
  Json(bool b) : v_(b) {}
  Json(int v) : v_(static_cast<int64_t>(v)) {}
  Json(int64_t v) : v_(v) {}
  Json(uint64_t v) : v_(v) {}
  Json(unsigned v) : v_(static_cast<uint64_t>(v)) {}
  Json(double v) : v_(v) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}

  static Json MakeArray() { Json j; j.v_ = Array{}; return j; }
  static Json MakeObject() { Json j; j.v_ = Object{}; return j; }

  /// Appends to an array (turning null into an array).
  Json& Push(Json value);
  /// Sets a key of an object (turning null into an object); replaces an existing key.
  Json& Set(std::string_view key, Json value);
  /// The value at `key` of an object, or nullptr.
  const Json* Find(std::string_view key) const;

  /// Serialises with `indent` spaces per level (0: one line).
  std::string Dump(int indent = 2) const;

 private:
  void DumpTo(std::string& out, int indent, int level) const;
  std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string, Array, Object> v_;
};

/// `s` as a JSON string literal, quotes included.
std::string JsonQuote(std::string_view s);

}  // namespace kvplan
