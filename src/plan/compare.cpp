#include "plan/compare.h"

#include "util/error.h"

namespace kvplan {

double CompareRow::Ratio(size_t i) const {
  if (values.empty() || values[0] == 0) return 0;
  return values[i] / values[0];
}

std::pair<std::string, std::vector<std::string>> ParseVary(const std::string& text,
                                                           const std::string& flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    Fail("{}: '{}': expected KEY=V1,V2 (e.g. kv-cache-dtype=fp16,fp8 or tp=2,4)", flag, text);
  }
  std::string key = text.substr(0, eq);
  std::vector<std::string> values;
  size_t start = eq + 1;
  while (true) {
    size_t comma = text.find(',', start);
    std::string v =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty()) Fail("{}: '{}': empty value in the list", flag, text);
    values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {key, values};
}

}  // namespace kvplan
