// Fuzzes the GGUF reader and the spec built from its metadata
// (GgufModelFromBytes): any bytes give a validated spec or one-line Error.
// An accepted file's tensor data lies inside it, so its weight bytes can
// never exceed the input's size.
#include "fuzz_common.h"
#include "import/gguf.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ModelSpec s;
  try {
    s = GgufModelFromBytes(fuzz::AsText(data, size), "fuzz/model.gguf");
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
    return 0;
  }
  fuzz::Require(!s.groups.empty(), "accepted spec has no layer groups");
  fuzz::Require(s.checkpoint_bytes <= size, "tensor bytes exceed the file");
  fuzz::Require(s.layers > 0 && s.kv_heads > 0 && s.head_dim > 0, "accepted spec is not valid");
  return 0;
}
