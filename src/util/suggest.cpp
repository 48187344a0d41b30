#include "util/suggest.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace kvplan {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates, size_t n) {
  std::string key = Lower(name);
  // The family: a name's part before its first '-' ('h100' of 'h100-sxm').
  // A name of the key's family is a near miss however far the rest is
  // ('h200-141gb' for 'h200'), where the key has a family of 3 or more.
  const size_t dash = key.find('-');
  const bool has_family = dash != std::string::npos && dash >= 3;
  // (-prefix, distance, name, of the key's family); names are unique, so the
  // last field never decides the order.
  std::vector<std::tuple<size_t, size_t, std::string, bool>> scored;
  for (const std::string& c : candidates) {
    std::string lc = Lower(c);
    size_t d = EditDistance(key, lc);
    bool substring = key.size() >= 3 && lc.find(key) != std::string::npos;
    size_t prefix = 0;
    while (prefix < key.size() && prefix < lc.size() && key[prefix] == lc[prefix]) ++prefix;
    size_t limit = std::max<size_t>(2, key.size() / 3);
    if (substring) d = std::min<size_t>(d, 1);
    // A long shared prefix ("llama-3.2" vs "llama-3.1-8b") is a near miss too.
    bool shared_prefix = prefix >= 6 || (prefix >= 4 && prefix * 2 >= key.size());
    const bool kin = has_family && lc.compare(0, lc.find('-'), key, 0, dash) == 0;
    if (d <= limit || shared_prefix || kin) {
      scored.emplace_back(prefix >= 4 ? 1000 - prefix : 1000, d, c, kin);
    }
  }
  // A candidate one edit away is almost surely the one meant: offer only
  // those, and, where that edit falls in the family itself, the key's
  // family's entries too, which sort first (the longer shared prefix):
  // 'h100-80gb' is one edit from 'a100-80gb' but meant an 'h100-...' entry
  // (with three of them, 'a100-80gb' falls past the three offered).
  const auto one_edit = [](const auto& t) { return std::get<1>(t) <= 1; };
  if (std::any_of(scored.begin(), scored.end(), one_edit)) {
    const bool edit_in_family = std::any_of(scored.begin(), scored.end(), [&](const auto& t) {
      return one_edit(t) && !std::get<3>(t);
    });
    scored.erase(std::remove_if(scored.begin(), scored.end(),
                                [&](const auto& t) {
                                  return !one_edit(t) && !(edit_in_family && std::get<3>(t));
                                }),
                 scored.end());
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(std::get<2>(scored[i]));
  return out;
}

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  std::vector<std::string> close = ClosestNames(name, candidates, 3);
  if (close.empty()) return "";
  std::string out = " (did you mean ";
  for (size_t i = 0; i < close.size(); ++i) {
    out += (i ? ", '" : "'") + close[i] + "'";
  }
  return out + "?)";
}

}  // namespace kvplan
