// Fuzzes the Hugging Face token file's reader (import/hub_client
// ParseTokenText): any bytes give a token, no token, or one Error line that
// never echoes the file's text. An accepted token is one word of printable
// ASCII (it goes into an HTTP header as is).
#include "fuzz_common.h"
#include "import/hub_client.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::AsText(data, size);
  try {
    if (std::optional<std::string> t = ParseTokenText(text, "fuzz/token")) {
      fuzz::Require(!t->empty() && t->size() <= 1024, "token size");
      for (char c : *t) {
        fuzz::Require(static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f,
                      "a token byte that is not printable ASCII");
      }
    }
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
    fuzz::Require(std::string(e.what()).find("fuzz/token") == 0, "error names the file");
  }
  return 0;
}
