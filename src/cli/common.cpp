#include "cli/common.h"

#include <cstdio>

namespace kvplan {

CLI::Option* AddFormatOption(CLI::App* sub, std::string& value, std::vector<std::string> choices) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
  return sub->add_option("--format", value, "Output format: " + list)
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

Format ToFormat(const std::string& value) {
  if (value == "json") return Format::kJson;
  if (value == "csv") return Format::kCsv;
  return Format::kText;
}

const CacheDtype& ResolveCacheDtype(const ModelSpec& model, const std::string& requested) {
  if (requested.empty() || requested == "auto") {
    return FindCacheDtype(AutoCacheDtype(model.weight_dtype));
  }
  return FindCacheDtype(requested);
}

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace kvplan
