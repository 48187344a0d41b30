#include "import/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <tuple>
#include <vector>

#include "spec/json_syntax.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/input_file.h"

namespace kvplan {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kIndexName = "model.safetensors.index.json";
constexpr std::string_view kHeaderSuffix = ".header";  // a header-only piece: "<shard>.header"

[[noreturn]] void Bad(const std::string& file, const std::string& what) {
  Fail("{}: safetensors header: {}", file, what);
}

// A tensor's name as it goes into a one-line message (names come from the file).
std::string Quoted(const std::string& name) {
  return fmt::format("'{}'", name.size() > 80 ? name.substr(0, 80) + "..." : name);
}

uint64_t U64(const nlohmann::ordered_json& v, const std::string& file, const std::string& what) {
  if (!v.is_number_unsigned()) {
    Bad(file, what + ": expected a whole number >= 0, got " +
                  (v.is_string() ? "a string" : std::string(v.type_name())));
  }
  return v.get<uint64_t>();
}

// a * b, or an error naming the file and tensor when it does not fit in 64 bits.
uint64_t Mul(uint64_t a, uint64_t b, const std::string& file, const std::string& at) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    Bad(file, fmt::format("overflow: {}: {} x {} does not fit in 64 bits", at, a, b));
  }
  return r;
}

struct Span {
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string name;
};

// One tensor entry: its bytes (dtype x shape) and its data_offsets span.
Span ReadTensor(const std::string& name, const nlohmann::ordered_json& t, const std::string& file,
                uint64_t& bytes) {
  const std::string at = "tensor " + Quoted(name);
  if (!t.is_object()) Bad(file, at + ": expected an object with dtype, shape and data_offsets");
  for (const auto& [key, value] : t.items()) {
    (void)value;
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      Bad(file, at + ": unknown field " + Quoted(key));
    }
  }
  if (!t.contains("dtype") || !t["dtype"].is_string()) Bad(file, at + ": dtype: missing");
  const std::string dtype = t["dtype"].get<std::string>();
  const uint64_t bits = SafetensorsDtypeBits(dtype);
  if (bits == 0) Bad(file, at + ": unknown dtype " + Quoted(dtype));
  if (!t.contains("shape") || !t["shape"].is_array()) Bad(file, at + ": shape: expected a list");
  uint64_t elems = 1;
  for (const auto& dim : t["shape"]) {
    elems = Mul(elems, U64(dim, file, at + ": shape"), file, at + ": shape");
  }
  const uint64_t total_bits = Mul(elems, bits, file, at + ": bits");
  if (total_bits % 8 != 0) {
    Bad(file,
        fmt::format("{}: {} elements of {} are not a whole number of bytes", at, elems, dtype));
  }
  bytes = total_bits / 8;
  if (!t.contains("data_offsets") || !t["data_offsets"].is_array() ||
      t["data_offsets"].size() != 2) {
    Bad(file, at + ": data_offsets: expected [begin, end]");
  }
  Span s;
  s.name = name;
  s.begin = U64(t["data_offsets"][0], file, at + ": data_offsets");
  s.end = U64(t["data_offsets"][1], file, at + ": data_offsets");
  if (s.end < s.begin || s.end - s.begin != bytes) {
    Bad(file, fmt::format("{}: data_offsets [{}, {}] hold {} bytes, but {} {} takes {}", at,
                          s.begin, s.end, s.end >= s.begin ? s.end - s.begin : 0, dtype,
                          t["shape"].dump(), bytes));
  }
  return s;
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The index's metadata.total_size, or nullopt when it has none; the shard
// file names of its weight_map into `shards`.
std::optional<uint64_t> ReadIndex(const fs::path& path, std::set<std::string>& shards) {
  const std::string file = path.string();
  const std::string text = ReadInputFile(file, kMaxSafetensorsHeader);
  CheckJsonSyntax(text, file);
  JsonDocument doc = ParseJsonDocument(text);
  const auto& root = doc.root;
  auto where = [&](const std::string& pointer) {
    auto it = doc.offsets.find(pointer);
    if (it == doc.offsets.end()) return SourcePos{file, 0, 0}.Prefix();
    const auto [line, col] = JsonLineColumn(text, it->second);
    return SourcePos{file, static_cast<int>(line), static_cast<int>(col)}.Prefix();
  };
  if (!root.is_object()) Fail("{}expected an object with metadata and weight_map", where(""));
  if (root.contains("weight_map")) {
    const auto& map = root["weight_map"];
    if (!map.is_object()) Fail("{}weight_map: expected an object", where("/weight_map"));
    for (const auto& [tensor, shard] : map.items()) {
      (void)tensor;
      if (!shard.is_string()) {
        Fail("{}weight_map: expected a file name for each tensor", where("/weight_map"));
      }
      const std::string name = shard.get<std::string>();
      // A shard is a file beside the index, never a path elsewhere.
      if (name.empty() || name.find('/') != std::string::npos ||
          name.find('\\') != std::string::npos || name == "." || name == "..") {
        Fail("{}weight_map: '{}' is not a file name beside the index", where("/weight_map"), name);
      }
      shards.insert(name);
    }
  }
  if (!root.contains("metadata") || !root["metadata"].is_object()) return std::nullopt;
  const auto& meta = root["metadata"];
  if (!meta.contains("total_size")) return std::nullopt;
  const auto& total = meta["total_size"];
  // transformers writes an integer; some tools write a float with no fraction.
  if (total.is_number_unsigned()) return total.get<uint64_t>();
  if (total.is_number_float()) {
    const double v = total.get<double>();
    if (v >= 0 && v < 1.8e19 && v == static_cast<double>(static_cast<uint64_t>(v))) {
      return static_cast<uint64_t>(v);
    }
  }
  Fail("{}metadata.total_size: expected a whole number of bytes >= 0",
       where("/metadata/total_size"));
}

}  // namespace

uint64_t SafetensorsDtypeBits(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, uint64_t>, 20> kBits = {{
      {"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
      {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
      {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
      {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64},
  }};
  for (const auto& [name, bits] : kBits) {
    if (name == dtype) return bits;
  }
  return 0;
}

SafetensorsHeader ParseSafetensorsHeader(std::string_view json, const std::string& file,
                                         std::optional<uint64_t> data_size) {
  JsonDocument doc;
  try {
    JsonOptions options;
    options.unique_keys = true;
    options.max_depth = 8;
    doc = ParseJsonDocument(json, options);
  } catch (const JsonSyntaxError& e) {
    Bad(file, fmt::format("not valid JSON at byte {} of the header: {}", e.offset, e.what));
  }
  if (!doc.root.is_object()) Bad(file, "expected a JSON object of tensors");
  SafetensorsHeader h;
  std::vector<Span> spans;
  for (const auto& [name, value] : doc.root.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) Bad(file, "__metadata__: expected an object of strings");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) Bad(file, "__metadata__: " + Quoted(key) + ": expected a string");
      }
      continue;
    }
    uint64_t bytes = 0;
    spans.push_back(ReadTensor(name, value, file, bytes));
    h.tensor_bytes = CheckedAdd(h.tensor_bytes, bytes, "checkpoint bytes");
    ++h.tensors;
  }
  // The tensors tile the data section: sorted by offset, each begins where
  // the one before it ends, the first at 0.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t at = 0;
  for (const Span& s : spans) {
    if (s.begin < at) {
      Bad(file, fmt::format("tensor {} at data_offsets [{}, {}] overlaps the tensor before it",
                            Quoted(s.name), s.begin, s.end));
    }
    if (s.begin > at) {
      Bad(file, fmt::format("tensor {} begins at byte {} of the data, leaving a hole after byte {}",
                            Quoted(s.name), s.begin, at));
    }
    at = s.end;
  }
  h.data_end = at;
  if (data_size && *data_size != h.data_end) {
    Bad(file, *data_size < h.data_end
                  ? fmt::format("the tensors end at byte {} of the data, but the file holds only "
                                "{} data bytes (truncated)",
                                h.data_end, *data_size)
                  : fmt::format("the tensors end at byte {} of the data, but the file holds {} "
                                "data bytes",
                                h.data_end, *data_size));
  }
  return h;
}

SafetensorsHeader ReadSafetensorsHeader(const std::string& path) {
  const InputFile in(path);
  const uint64_t file_size = in.size();
  unsigned char len_bytes[8] = {};
  if (file_size < 8) {
    Bad(path,
        fmt::format("the file holds {} bytes, fewer than the 8-byte header length", file_size));
  }
  in.ReadAt(0, 8, reinterpret_cast<char*>(len_bytes));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];  // little-endian
  if (n > kMaxSafetensorsHeader) {
    Bad(path,
        fmt::format("header length {} is over the limit of {} bytes", n, kMaxSafetensorsHeader));
  }
  if (n > file_size - 8) {
    Bad(path, fmt::format("header length {} runs past the end of the file ({} bytes; truncated)", n,
                          file_size));
  }
  std::string json(n, '\0');
  in.ReadAt(8, n, json.data());
  const bool piece =
      path.size() > kHeaderSuffix.size() &&
      path.compare(path.size() - kHeaderSuffix.size(), kHeaderSuffix.size(), kHeaderSuffix) == 0;
  // The safetensors library pads the header with spaces; a piece has no data.
  const std::optional<uint64_t> data = piece ? std::nullopt : std::optional(file_size - 8 - n);
  return ParseSafetensorsHeader(json, path, data);
}

std::optional<CheckpointBytes> ReadCheckpointBytes(const std::string& folder) {
  const fs::path dir(folder);
  std::set<std::string> shards;
  const fs::path index = dir / kIndexName;
  if (IsFile(index)) {
    if (std::optional<uint64_t> total = ReadIndex(index, shards)) {
      return CheckpointBytes{*total, std::string(kIndexName) + " total_size"};
    }
  }
  if (shards.empty()) {
    // No index: every shard in the folder. Mistral's consolidated.safetensors
    // repeats the weights of the transformers shards beside it.
    std::set<std::string> consolidated;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.size() > kHeaderSuffix.size() &&
          name.compare(name.size() - kHeaderSuffix.size(), kHeaderSuffix.size(), kHeaderSuffix) ==
              0) {
        name.resize(name.size() - kHeaderSuffix.size());
      }
      const std::string ext = ".safetensors";
      if (name.size() <= ext.size() ||
          name.compare(name.size() - ext.size(), ext.size(), ext) != 0) {
        continue;
      }
      (name.rfind("consolidated", 0) == 0 ? consolidated : shards).insert(name);
    }
    if (shards.empty()) shards = consolidated;
  }
  if (shards.empty()) return std::nullopt;
  uint64_t total = 0;
  for (const std::string& shard : shards) {
    fs::path path = dir / shard;
    if (!IsFile(path)) path = dir / (shard + std::string(kHeaderSuffix));
    if (!IsFile(path)) return std::nullopt;  // not all here: the sum would be short
    total =
        CheckedAdd(total, ReadSafetensorsHeader(path.string()).tensor_bytes, "checkpoint bytes");
  }
  return CheckpointBytes{total, fmt::format("safetensors headers ({} file{})", shards.size(),
                                            shards.size() == 1 ? "" : "s")};
}

}  // namespace kvplan
