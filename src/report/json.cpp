#include "report/json.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace kvplan {

// kvplan's JSON has always printed a double as fmt's "{}" does. nlohmann
// prints the same shortest round-trip digits, except that it adds ".0" to
// a whole number (100.0) and switches to an exponent one decade earlier
// (1e+15). A whole number below 1e16 is therefore stored as an integer,
// which prints as fmt prints it; fmt writes larger ones with an exponent,
// as nlohmann does. A fraction needs |v| < 2^52, so only the fractions in
// [1e15, 2^52) print differently. -0 is written 0.
Json::Json(double v) {
  if (!std::isfinite(v)) return;
  const std::string text = fmt::format("{}", v);
  if (text.find_first_not_of("-0123456789") == std::string::npos) {
    v_ = static_cast<int64_t>(std::strtoll(text.c_str(), nullptr, 10));
  } else {
    v_ = v;
  }
}

Json Json::MakeArray() {
  Json j;
  j.v_ = nlohmann::ordered_json::array();
  return j;
}

Json Json::MakeObject() {
  Json j;
  j.v_ = nlohmann::ordered_json::object();
  return j;
}

Json& Json::Push(Json value) {
  v_.push_back(std::move(value.v_));
  return *this;
}

Json& Json::Set(std::string_view key, Json value) {
  v_[std::string(key)] = std::move(value.v_);
  return *this;
}

std::string Json::Dump(int indent) const {
  // Text that is not UTF-8 (a path given on the command line) is written
  // with U+FFFD in place of the bad bytes, so the output stays JSON.
  return v_.dump(indent > 0 ? indent : -1, ' ', false,
                 nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace kvplan
