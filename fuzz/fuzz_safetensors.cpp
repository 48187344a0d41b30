// Fuzzes the safetensors header parser (ParseSafetensorsHeader): any bytes
// either give a header whose tensors tile the data section exactly or throw
// kvplan::Error with a one-line message.
#include <optional>

#include "fuzz_common.h"
#include "import/safetensors.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks a header piece (no data) or a file whose data
  // section holds that byte's value times 16 bytes.
  const std::optional<uint64_t> data_size =
      data[0] == 0 ? std::nullopt : std::optional<uint64_t>(uint64_t{data[0]} * 16);
  const std::string json = fuzz::AsText(data + 1, size - 1);
  SafetensorsHeader h;
  try {
    h = ParseSafetensorsHeader(json, "fuzz.safetensors", data_size);
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
    return 0;
  }
  // Contiguous from byte 0 without holes: the tensors' bytes are the data's.
  fuzz::Require(h.tensor_bytes == h.data_end, "tensor bytes differ from the data section");
  fuzz::Require(!data_size || *data_size == h.data_end, "data section length not checked");
  fuzz::Require(h.tensors != 0 || h.tensor_bytes == 0, "bytes without tensors");
  return 0;
}
