// Fuzzes the unit and number parsers people type on every command line and
// in every file: ParseTokens ("4k" = 4000, "4K" = 4096), ParseBytes ("80GB",
// "80GiB"), ParseContextTokens, the one real-number grammar (TryParseReal,
// ParseReal: decimal only, never a hex float, inf or nan), and the engine's
// own integer grammars (ParsePythonInt, ParseHumanReadableInt). The first
// byte picks the parser; the rest is the text. An accepted plain integer
// must read back unchanged when printed; an accepted real must be finite.
#include <cmath>
#include <optional>
#include <string>

#include "fuzz_common.h"
#include "util/units.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int which = data[0] % 6;
  std::string text = fuzz::AsText(data + 1, size - 1);
  try {
    if (which == 2) {
      const std::optional<double> v = TryParseReal(text);
      fuzz::Require(!v || std::isfinite(*v), "an accepted real is not finite");
      fuzz::Require(text.find_first_of("xXnN") == std::string::npos || !v,
                    "a hex float, inf or nan was accepted");
      (void)ParseReal(text, "--fraction");
      return 0;
    }
    if (which == 3) {
      (void)ParseContextTokens(text, "--max-model-len");
      return 0;
    }
    if (which == 4 || which == 5) {
      const uint64_t v = which == 4 ? ParsePythonInt(text, "--max-num-seqs")
                                    : ParseHumanReadableInt(text, "--max-model-len");
      const std::string printed = std::to_string(v);
      fuzz::Require(ParsePythonInt(printed, "again") == v, "an int does not parse back");
      return 0;
    }
    const bool tokens = which == 0;
    uint64_t v = tokens ? ParseTokens(text, "--context") : ParseBytes(text, "--memory");
    std::string printed = std::to_string(v);
    uint64_t again = tokens ? ParseTokens(printed) : ParseBytes(printed);
    fuzz::Require(again == v, "printed value does not parse back to itself");
    (void)FormatBoth(v);
    (void)FormatTokens(v);
    (void)WithCommas(v);
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  return 0;
}
