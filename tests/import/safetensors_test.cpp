// The safetensors reader: a checkpoint's exact bytes from its index or its
// shards' headers, never their data, and every malformed header as one
// error line naming the file.
#include "import/safetensors.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"
#include "util/error.h"

using kvplan::CheckpointBytes;
using kvplan::Error;
using kvplan::ParseSafetensorsHeader;
using kvplan::ReadCheckpointBytes;
using kvplan::ReadSafetensorsHeader;
using kvplan::SafetensorsDtypeBits;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;
namespace fs = std::filesystem;

// GCC 12 reports a false -Wrestrict inside the inlined `"literal" +
// std::string` (GCC bug 105329); these tests build headers that way.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace {

// The 8-byte little-endian length, the JSON header, then `data` bytes.
std::string File(const std::string& json, uint64_t data) {
  std::string out(8, '\0');
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + json + std::string(data, '\x5a');
}

// One tensor's header entry.
std::string Tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   uint64_t begin, uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

// An AWQ-packed 4096 x 4096 linear layer, group 128: qweight int32
// [4096, 512], qzeros int32 [32, 512], scales fp16 [32, 4096].
std::string AwqLayerHeader() {
  const uint64_t qweight = 4096ull * 512 * 4, qzeros = 32ull * 512 * 4, scales = 32ull * 4096 * 2;
  return "{\"__metadata__\":{\"format\":\"pt\"}," +
         Tensor("l.qweight", "I32", "[4096,512]", 0, qweight) + "," +
         Tensor("l.qzeros", "I32", "[32,512]", qweight, qweight + qzeros) + "," +
         Tensor("l.scales", "F16", "[32,4096]", qweight + qzeros, qweight + qzeros + scales) + "}";
}

}  // namespace

TEST_CASE("safetensors: dtype sizes are safetensors' own, sub-byte floats included") {
  CHECK(SafetensorsDtypeBits("BF16") == 16);
  CHECK(SafetensorsDtypeBits("F8_E4M3") == 8);
  CHECK(SafetensorsDtypeBits("F8_E8M0") == 8);
  CHECK(SafetensorsDtypeBits("F4") == 4);
  CHECK(SafetensorsDtypeBits("F6_E2M3") == 6);
  CHECK(SafetensorsDtypeBits("I64") == 64);
  CHECK(SafetensorsDtypeBits("BOOL") == 8);
  CHECK(SafetensorsDtypeBits("bf16") == 0);  // names are case-sensitive
  CHECK(SafetensorsDtypeBits("Q4_K") == 0);
}

TEST_CASE("safetensors: packed int4 and its scales count exactly as stored") {
  const auto h = ParseSafetensorsHeader(AwqLayerHeader(), "m.safetensors", std::nullopt);
  CHECK(h.tensors == 3);
  // 4 bits per weight + (fp16 scale + 4-bit zero) per 128 inputs.
  CHECK(h.tensor_bytes == 4096ull * 4096 / 2 + 4096ull * 32 * 20 / 8);
  CHECK(h.data_end == h.tensor_bytes);
  // A 0-d tensor holds one element; an empty dimension none.
  const auto s = ParseSafetensorsHeader(
      "{" + Tensor("a", "F32", "[]", 0, 4) + "," + Tensor("b", "F32", "[0,7]", 4, 4) + "}",
      "s.safetensors", 4);
  CHECK(s.tensor_bytes == 4);
}

TEST_CASE("safetensors: the index's total_size, else the headers of the shards it names") {
  const std::string dir = TempDir();
  const std::string a = "{" + Tensor("a.weight", "BF16", "[2,3]", 0, 12) + "," +
                        Tensor("b.weight", "BF16", "[4]", 12, 20) + "}";
  const std::string b = "{" + Tensor("c.weight", "F8_E4M3", "[10,10]", 0, 100) + "}";
  WriteFile(dir, "model-00001-of-00002.safetensors", File(a, 20));
  // The second shard as the Hub's range request left it: length and JSON only.
  WriteFile(dir, "model-00002-of-00002.safetensors.header", File(b, 0));
  const std::string map =
      R"("weight_map":{"a.weight":"model-00001-of-00002.safetensors",)"
      R"("b.weight":"model-00001-of-00002.safetensors","c.weight":"model-00002-of-00002.safetensors"})";
  WriteFile(dir, "model.safetensors.index.json", "{" + map + "}");
  std::optional<CheckpointBytes> got = ReadCheckpointBytes(dir);
  REQUIRE(got);
  CHECK(got->bytes == 120);
  CHECK(got->from == "safetensors headers (2 files)");
  // metadata.total_size wins when present (the Hub's Llama-3.1-8B index:
  // https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/model.safetensors.index.json).
  WriteFile(dir, "model.safetensors.index.json",
            R"({"metadata":{"total_size":16060522496},)" + map + "}");
  got = ReadCheckpointBytes(dir);
  REQUIRE(got);
  CHECK(got->bytes == 16060522496ull);
  CHECK(got->from == "model.safetensors.index.json total_size");
  // A shard the index names but the folder lacks: unknown, never a short sum.
  WriteFile(dir, "model.safetensors.index.json", "{" + map + "}");
  fs::remove(dir + "/model-00002-of-00002.safetensors.header");
  CHECK_FALSE(ReadCheckpointBytes(dir));
}

TEST_CASE("safetensors: without an index, every shard in the folder; none: unknown") {
  const std::string dir = TempDir();
  CHECK_FALSE(ReadCheckpointBytes(dir));
  WriteFile(dir, "config.json", "{}");
  CHECK_FALSE(ReadCheckpointBytes(dir));
  WriteFile(dir, "model.safetensors", File(AwqLayerHeader(), 4096ull * 4096 / 2 + 4096ull * 80));
  // Mistral's consolidated file repeats the weights of the shards beside it.
  WriteFile(dir, "consolidated.safetensors",
            File("{" + Tensor("x", "BF16", "[8]", 0, 16) + "}", 16));
  std::optional<CheckpointBytes> got = ReadCheckpointBytes(dir);
  REQUIRE(got);
  CHECK(got->bytes == 4096ull * 4096 / 2 + 4096ull * 80);
  CHECK(got->from == "safetensors headers (1 file)");
}

TEST_CASE("safetensors: a malformed header is one line naming the file and the fault") {
  const std::string dir = TempDir();
  const auto err = [&](const std::string& bytes) {
    const std::string path = WriteFile(dir, "bad.safetensors", bytes);
    try {
      ReadSafetensorsHeader(path);
    } catch (const Error& e) {
      std::string m = e.what();
      CHECK(m.find('\n') == std::string::npos);
      const std::string prefix = path + ": safetensors header: ";
      REQUIRE(m.rfind(prefix, 0) == 0);
      return m.substr(prefix.size());
    }
    FAIL("no error");
    return std::string();
  };
  CHECK(err("abc") == "the file holds 3 bytes, fewer than the 8-byte header length");
  CHECK(err(std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8)) ==
        "header length 18446744073709551615 is over the limit of 100000000 bytes");
  CHECK(err(File("{}", 0).substr(0, 9)) ==
        "header length 2 runs past the end of the file (9 bytes; truncated)");
  CHECK(err(File("{\"a\":", 0)).rfind("not valid JSON at byte", 0) == 0);
  CHECK(err(File("[1]", 0)) == "expected a JSON object of tensors");
  CHECK(err(File("{" + Tensor("w", "Q4", "[2]", 0, 1) + "}", 1)) ==
        "tensor 'w': unknown dtype 'Q4'");
  CHECK(err(File("{" + Tensor("w", "BF16", "[2,3]", 0, 10) + "}", 10)) ==
        "tensor 'w': data_offsets [0, 10] hold 10 bytes, but BF16 [2,3] takes 12");
  CHECK(err(File("{" + Tensor("w", "F32", "[-1]", 0, 4) + "}", 4)) ==
        "tensor 'w': shape: expected a whole number >= 0, got number");
  CHECK(err(File("{" + Tensor("w", "F4", "[3]", 0, 1) + "}", 1)) ==
        "tensor 'w': 3 elements of F4 are not a whole number of bytes");
  CHECK(err(File("{" + Tensor("w", "I64", "[4294967296,4294967296]", 0, 8) + "}", 8))
            .rfind("overflow:", 0) != std::string::npos);
  CHECK(err(File("{" + Tensor("a", "U8", "[4]", 0, 4) + "," + Tensor("b", "U8", "[4]", 2, 6) + "}",
                 6)) == "tensor 'b' at data_offsets [2, 6] overlaps the tensor before it");
  CHECK(err(File("{" + Tensor("a", "U8", "[4]", 8, 12) + "}", 12)) ==
        "tensor 'a' begins at byte 8 of the data, leaving a hole after byte 0");
  CHECK(err(File("{" + Tensor("a", "U8", "[4]", 0, 4) + "}", 2)) ==
        "the tensors end at byte 4 of the data, but the file holds only 2 data bytes "
        "(truncated)");
  CHECK(err(File("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1)) ==
        "tensor 'a': unknown field 'x'");
  CHECK(err(File("{\"__metadata__\":{\"k\":1}}", 0)) == "__metadata__: 'k': expected a string");
  // A key given twice is ambiguous: which tensor is it?
  CHECK(err(File("{" + Tensor("a", "U8", "[1]", 0, 1) + "," + Tensor("a", "U8", "[1]", 1, 2) + "}",
                 2))
            .rfind("not valid JSON", 0) == 0);
}

TEST_CASE("safetensors: a malformed index is an error at its position") {
  const std::string dir = TempDir();
  WriteFile(dir, "model.safetensors.index.json", R"({"metadata":{"total_size":"big"}})");
  CHECK_THROWS_WITH_AS(ReadCheckpointBytes(dir),
                       doctest::Contains("model.safetensors.index.json:1:27: "
                                         "metadata.total_size: expected a whole number of bytes"),
                       Error);
  WriteFile(dir, "model.safetensors.index.json", R"({"weight_map":{"a":"../../etc/x"}})");
  CHECK_THROWS_WITH_AS(ReadCheckpointBytes(dir),
                       doctest::Contains("weight_map: '../../etc/x' is not a file name beside the "
                                         "index"),
                       Error);
  WriteFile(dir, "model.safetensors.index.json", R"({"weight_map":)");
  CHECK_THROWS_AS(ReadCheckpointBytes(dir), Error);
}
