// A JSON value for kvplan's machine-readable output, over nlohmann-json's
// ordered_json: objects keep their insertion order so the documented key
// order is what users see.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kvplan {

class Json {
 public:
  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int v) : v_(static_cast<int64_t>(v)) {}
  Json(int64_t v) : v_(v) {}
  Json(uint64_t v) : v_(v) {}
  Json(unsigned v) : v_(static_cast<uint64_t>(v)) {}
  /// Written as fmt's shortest round-trip text ("0.9", "100", "1e+20");
  /// not finite: null.
  Json(double v);
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}

  static Json MakeArray();
  static Json MakeObject();

  /// Appends to an array (turning null into an array).
  Json& Push(Json value);
  /// Sets a key of an object (turning null into an object); replaces an existing key.
  Json& Set(std::string_view key, Json value);

  /// Serialises with `indent` spaces per level (0: one line).
  std::string Dump(int indent = 2) const;

 private:
  nlohmann::ordered_json v_;
};

}  // namespace kvplan
