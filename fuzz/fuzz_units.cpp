// Fuzzes the unit parsers people type on every command line: ParseTokens
// ("4k" = 4000, "4K" = 4096) and ParseBytes ("80GB", "80GiB"). The first
// byte picks the parser; the rest is the text. An accepted plain integer
// must read back unchanged when printed.
#include <string>

#include "fuzz_common.h"
#include "util/units.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool tokens = (data[0] & 1) == 0;
  std::string text = fuzz::AsText(data + 1, size - 1);
  try {
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
