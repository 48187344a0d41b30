// The GGUF reader: a cursor over the file that checks every length against
// the bytes left before reading or skipping, the metadata key/value pairs
// (arrays such as the tokenizer's are skipped by length, their numbers kept
// only when short), and the tensor infos with their data bytes computed from
// the ggml type's block size. Layout (little-endian): "GGUF", u32 version,
// u64 tensor count, u64 key count, the keys, the tensor infos, padding to
// general.alignment, the data.
#include "import/gguf_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <set>

#include "util/error.h"
#include "util/input_file.h"

namespace kvplan {
namespace {

// ggml's tensor types by id (ggml.h's enum): elements per block and bytes per
// block, learned from ggml-common.h's block structs. Ids 4, 5 (Q4_2, Q4_3) and
// 36-38 (IQ4_NL_4_4...) were removed from the format and are refused.
constexpr std::array<GgmlType, 35> kGgmlTypes = {{
    {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},      {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},      {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
    {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
    {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
    {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},
    {29, "IQ1_M", 256, 56},   {30, "BF16", 1, 2},       {31, "Q4_0_4_4", 32, 18},
    {32, "Q4_0_4_8", 32, 18}, {33, "Q4_0_8_8", 32, 18}, {34, "TQ1_0", 256, 54},
    {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},
}};

// Reads the file front to back, checking each read against the file's size
// and the header limit.
class Cursor {
 public:
  Cursor(const GgufReadAt& read, uint64_t size, const std::string& path)
      : read_(read), size_(size), path_(path) {}

  uint64_t pos() const { return pos_; }
  uint64_t Left() const { return size_ - pos_; }

  [[noreturn]] void FailAt(uint64_t at, std::string_view field, std::string_view msg) const {
    Fail("{}: byte {}: {}: {}", path_, at, field, msg);
  }

  // Makes sure `n` more bytes exist (and stay under the header limit).
  void Need(uint64_t n, std::string_view field) const {
    if (n > Left()) {
      FailAt(pos_, field,
             fmt::format("needs {} bytes but the file ends after {} (truncated file?)", n, Left()));
    }
    if (pos_ + n > GgufLimits::kMaxHeaderBytes) {
      FailAt(pos_, field,
             fmt::format("the header, metadata and tensor infos run past {} MiB, kvplan's limit "
                         "(see docs/gguf.md)",
                         GgufLimits::kMaxHeaderBytes >> 20));
    }
  }

  void Bytes(uint64_t n, char* out, std::string_view field) {
    Need(n, field);
    if (n > 0) read_(pos_, n, out);
    pos_ += n;
  }

  void Skip(uint64_t n, std::string_view field) {
    Need(n, field);
    pos_ += n;
  }

  template <typename T>
  T Le(std::string_view field) {
    std::array<unsigned char, sizeof(T)> b{};
    Bytes(sizeof(T), reinterpret_cast<char*>(b.data()), field);
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
    T out;
    if constexpr (sizeof(T) == 8) {
      std::memcpy(&out, &v, 8);
    } else {
      auto narrow =
          static_cast<std::conditional_t<sizeof(T) == 4, uint32_t,
                                         std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>>(v);
      std::memcpy(&out, &narrow, sizeof(T));
    }
    return out;
  }

  // A gguf string: u64 length, then the bytes. Longer than `keep`: skipped,
  // `cut` set.
  std::string String(std::string_view field, uint64_t keep, bool* cut = nullptr) {
    const uint64_t at = pos_;
    const uint64_t n = Le<uint64_t>(field);
    if (n > Left()) {
      FailAt(
          at, field,
          fmt::format("string length {} runs past the end of the file ({} bytes left)", n, Left()));
    }
    if (n > keep) {
      if (cut == nullptr) {
        FailAt(at, field, fmt::format("string length {} is over the limit of {}", n, keep));
      }
      *cut = true;
      Skip(n, field);
      return {};
    }
    std::string s(n, '\0');
    Bytes(n, s.data(), field);
    return s;
  }

 private:
  const GgufReadAt& read_;
  uint64_t size_;
  std::string path_;
  uint64_t pos_ = 0;
};

// Bytes one element of a fixed-size type takes; 0 for strings and arrays.
uint64_t FixedSize(GgufType t) {
  switch (t) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool:
      return 1;
    case GgufType::kU16:
    case GgufType::kI16:
      return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32:
      return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64:
      return 8;
    default:
      return 0;
  }
}

GgufType ReadType(Cursor& c, std::string_view field) {
  const uint64_t at = c.pos();
  const uint32_t t = c.Le<uint32_t>(field);
  if (t > static_cast<uint32_t>(GgufType::kF64)) {
    c.FailAt(at, field, fmt::format("value type {} is not a GGUF type (0-12)", t));
  }
  return static_cast<GgufType>(t);
}

GgufNumber ReadNumber(Cursor& c, GgufType t, std::string_view field) {
  GgufNumber n;
  auto sign = [&](int64_t v) {
    n.negative = v < 0;
    n.u = n.negative ? 0 : static_cast<uint64_t>(v);
  };
  switch (t) {
    case GgufType::kU8:
      n.u = c.Le<uint8_t>(field);
      break;
    case GgufType::kBool: {
      const uint64_t at = c.pos();
      n.u = c.Le<uint8_t>(field);
      if (n.u > 1) c.FailAt(at, field, fmt::format("bool value {} is neither 0 nor 1", n.u));
      break;
    }
    case GgufType::kI8:
      sign(c.Le<int8_t>(field));
      break;
    case GgufType::kU16:
      n.u = c.Le<uint16_t>(field);
      break;
    case GgufType::kI16:
      sign(c.Le<int16_t>(field));
      break;
    case GgufType::kU32:
      n.u = c.Le<uint32_t>(field);
      break;
    case GgufType::kI32:
      sign(c.Le<int32_t>(field));
      break;
    case GgufType::kU64:
      n.u = c.Le<uint64_t>(field);
      break;
    case GgufType::kI64:
      sign(c.Le<int64_t>(field));
      break;
    case GgufType::kF32:
      n.is_float = true;
      n.f = c.Le<float>(field);
      break;
    case GgufType::kF64:
      n.is_float = true;
      n.f = c.Le<double>(field);
      break;
    default:
      break;
  }
  return n;
}

void ReadValue(Cursor& c, GgufKv& kv, uint64_t& kept_items) {
  const std::string& field = kv.key;
  if (kv.type == GgufType::kString) {
    kv.text = c.String(field, GgufLimits::kMaxKeptString, &kv.text_cut);
    return;
  }
  if (kv.type != GgufType::kArray) {
    kv.number = ReadNumber(c, kv.type, field);
    return;
  }
  const uint64_t at = c.pos();
  kv.elem = ReadType(c, field);
  if (kv.elem == GgufType::kArray) c.FailAt(at, field, "arrays of arrays are not GGUF metadata");
  const uint64_t count_at = c.pos();
  kv.count = c.Le<uint64_t>(field);
  // Each element takes at least one byte (a string its 8-byte length).
  const uint64_t min_size = kv.elem == GgufType::kString ? 8 : FixedSize(kv.elem);
  if (kv.count > c.Left() / min_size) {
    c.FailAt(count_at, field,
             fmt::format("array of {} {} values runs past the end of the file ({} bytes left)",
                         kv.count, GgufTypeName(kv.elem), c.Left()));
  }
  if (kv.elem == GgufType::kString) {
    for (uint64_t i = 0; i < kv.count; ++i) {
      const uint64_t n_at = c.pos();
      const uint64_t n = c.Le<uint64_t>(field);
      if (n > c.Left()) {
        c.FailAt(n_at, field,
                 fmt::format("string {} of the array: length {} runs past the end of the file "
                             "({} bytes left)",
                             i, n, c.Left()));
      }
      c.Skip(n, field);
    }
    return;
  }
  kv.kept =
      kv.count <= GgufLimits::kMaxKeptArray && kept_items + kv.count <= GgufLimits::kMaxKeptItems;
  if (!kv.kept) {
    c.Skip(kv.count * min_size, field);
    return;
  }
  kept_items += kv.count;
  kv.items.reserve(kv.count);
  for (uint64_t i = 0; i < kv.count; ++i) kv.items.push_back(ReadNumber(c, kv.elem, field));
}

void ReadHeader(Cursor& c, GgufFile& f, uint64_t& n_tensors, uint64_t& n_kv) {
  std::array<char, 4> magic{};
  c.Bytes(4, magic.data(), "magic");
  if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
    c.FailAt(0, "magic", "not a GGUF file (it does not start with \"GGUF\")");
  }
  f.version = c.Le<uint32_t>("version");
  if (f.version == 1) {
    c.FailAt(4, "version",
             "GGUF v1 is not supported (llama.cpp reads v2 and v3 only; convert the model "
             "again with a current llama.cpp)");
  }
  if (f.version != 2 && f.version != 3) {
    if ((f.version & 0xFFFFu) == 0) {
      c.FailAt(4, "version",
               fmt::format("version {} read little-endian: a big-endian GGUF file, which "
                           "kvplan does not read",
                           f.version));
    }
    c.FailAt(4, "version", fmt::format("GGUF version {} is not supported (2 or 3)", f.version));
  }
  n_tensors = c.Le<uint64_t>("tensor_count");
  n_kv = c.Le<uint64_t>("metadata_kv_count");
  // Each key takes at least 13 bytes (length, type, one byte), each tensor
  // info at least 24 (name length, dims count, type, offset).
  if (n_kv > c.Left() / 13) {
    c.FailAt(16, "metadata_kv_count",
             fmt::format("{} keys cannot fit in the {} bytes left", n_kv, c.Left()));
  }
  if (n_tensors > GgufLimits::kMaxTensors || n_tensors > c.Left() / 24) {
    c.FailAt(8, "tensor_count",
             fmt::format("{} tensors cannot fit in the {} bytes left (limit {})", n_tensors,
                         c.Left(), GgufLimits::kMaxTensors));
  }
}

void ReadMetadata(Cursor& c, GgufFile& f, uint64_t n_kv) {
  uint64_t kept_items = 0;
  f.kvs.reserve(std::min<uint64_t>(n_kv, 4096));
  for (uint64_t i = 0; i < n_kv; ++i) {
    GgufKv kv;
    kv.offset = c.pos();
    kv.key = c.String(fmt::format("metadata key {}", i), GgufLimits::kMaxKeyBytes);
    if (kv.key.empty()) c.FailAt(kv.offset, fmt::format("metadata key {}", i), "empty key");
    if (f.index.count(kv.key) != 0) {
      c.FailAt(kv.offset, kv.key,
               fmt::format("duplicate key (first at byte {})", f.kvs[f.index[kv.key]].offset));
    }
    kv.type = ReadType(c, kv.key);
    ReadValue(c, kv, kept_items);
    f.index.emplace(kv.key, f.kvs.size());
    f.kvs.push_back(std::move(kv));
  }
  if (const GgufKv* a = f.Find("general.alignment")) {
    if (a->type != GgufType::kU32) {
      c.FailAt(a->offset, a->key, fmt::format("expected a u32, found {}", GgufTypeName(a->type)));
    }
    if (a->number.u == 0 || (a->number.u & (a->number.u - 1)) != 0) {
      c.FailAt(a->offset, a->key, fmt::format("{} is not a power of two", a->number.u));
    }
    f.alignment = a->number.u;
  }
}

void ReadTensorInfo(Cursor& c, GgufFile& f, std::set<std::string, std::less<>>& names, uint64_t i) {
  GgufTensor t;
  t.info_offset = c.pos();
  t.name = c.String(fmt::format("tensor info {}", i), GgufLimits::kMaxKeyBytes);
  const std::string field = "tensor '" + t.name + "'";
  if (!names.insert(t.name).second) c.FailAt(t.info_offset, field, "duplicate tensor name");
  const uint64_t dims_at = c.pos();
  const uint32_t n_dims = c.Le<uint32_t>(field);
  if (n_dims == 0 || n_dims > GgufLimits::kMaxDims) {
    c.FailAt(dims_at, field, fmt::format("{} dimensions (ggml tensors have 1 to 4)", n_dims));
  }
  t.elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t at = c.pos();
    const uint64_t ne = c.Le<uint64_t>(field);
    if (ne > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_mul_overflow(t.elements, ne, &t.elements)) {
      c.FailAt(at, field, fmt::format("dimension {} = {}: the element count overflows", d, ne));
    }
    t.dims.push_back(ne);
  }
  const uint64_t type_at = c.pos();
  const uint32_t type = c.Le<uint32_t>(field);
  t.type = FindGgmlType(type);
  if (t.type == nullptr) {
    c.FailAt(type_at, field, fmt::format("ggml type {} is not one kvplan knows", type));
  }
  if (t.dims[0] % t.type->block != 0) {
    c.FailAt(dims_at, field,
             fmt::format("row length {} is not a multiple of {}'s block of {}", t.dims[0],
                         t.type->name, t.type->block));
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(t.elements / t.type->block, t.type->bytes, &bytes)) {
    c.FailAt(dims_at, field, "its byte count overflows");
  }
  t.bytes = bytes;
  const uint64_t off_at = c.pos();
  t.offset = c.Le<uint64_t>(field);
  if (t.offset % f.alignment != 0) {
    c.FailAt(
        off_at, field,
        fmt::format("data offset {} is not a multiple of the alignment {}", t.offset, f.alignment));
  }
  f.tensors.push_back(std::move(t));
}

// The data section: after the tensor infos, aligned; each tensor's data must
// lie inside the file and not overlap another's.
void CheckData(Cursor& c, GgufFile& f) {
  const uint64_t end = c.pos();
  const uint64_t pad = (f.alignment - end % f.alignment) % f.alignment;
  f.data_offset = end + pad;
  if (f.tensors.empty()) return;
  if (f.data_offset > f.file_size) {
    c.FailAt(end, "data", "the file ends before its tensor data starts (truncated file?)");
  }
  const uint64_t room = f.file_size - f.data_offset;
  std::vector<const GgufTensor*> order;
  order.reserve(f.tensors.size());
  for (const GgufTensor& t : f.tensors) {
    if (t.offset > room || t.bytes > room - t.offset) {
      c.FailAt(t.info_offset, "tensor '" + t.name + "'",
               fmt::format("data at {} + {} bytes runs past the end of the file ({} bytes of "
                           "data; truncated file?)",
                           t.offset, t.bytes, room));
    }
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(),
            [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1]->offset + order[i - 1]->bytes > order[i]->offset) {
      c.FailAt(order[i]->info_offset, "tensor '" + order[i]->name + "'",
               fmt::format("data at {} overlaps tensor '{}' (at {}, {} bytes)", order[i]->offset,
                           order[i - 1]->name, order[i - 1]->offset, order[i - 1]->bytes));
    }
  }
  // Disjoint and inside the file: the sum is at most the file's size.
  for (const GgufTensor& t : f.tensors) f.tensor_bytes += t.bytes;
}

}  // namespace

std::string_view GgufTypeName(GgufType type) {
  static constexpr std::array<std::string_view, 13> kNames = {
      "u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
      "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<size_t>(type);
  return i < kNames.size() ? kNames[i] : "?";
}

const GgmlType* FindGgmlType(uint32_t id) {
  for (const GgmlType& t : kGgmlTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

const GgufKv* GgufFile::Find(std::string_view key) const {
  auto it = index.find(key);
  return it == index.end() ? nullptr : &kvs[it->second];
}

GgufFile ParseGguf(const GgufReadAt& read, uint64_t file_size, const std::string& path) {
  GgufFile f;
  f.path = path;
  f.file_size = file_size;
  Cursor c(read, file_size, path);
  uint64_t n_tensors = 0, n_kv = 0;
  ReadHeader(c, f, n_tensors, n_kv);
  ReadMetadata(c, f, n_kv);
  std::set<std::string, std::less<>> names;
  f.tensors.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) ReadTensorInfo(c, f, names, i);
  CheckData(c, f);
  return f;
}

GgufFile ParseGgufBytes(std::string_view bytes, const std::string& path) {
  GgufReadAt read = [bytes](uint64_t offset, uint64_t n, char* out) {
    std::memcpy(out, bytes.data() + offset, n);
  };
  return ParseGguf(read, bytes.size(), path);
}

GgufFile ReadGgufFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) Fail("{}: a folder, not a GGUF file", path);
  const InputFile in(path);
  const uint64_t end = in.size();
  // A window of the file read in 1 MiB pieces: the metadata is read front to
  // back, and skipped arrays move the window forward without reading them.
  constexpr uint64_t kWindow = 1 << 20;
  std::string window;
  uint64_t window_at = 0;
  GgufReadAt read = [&](uint64_t offset, uint64_t n, char* out) {
    while (n > 0) {
      if (offset < window_at || offset >= window_at + window.size()) {
        window_at = offset;
        window.resize(std::min<uint64_t>(kWindow, end - offset));
        in.ReadAt(offset, window.size(), window.data());
      }
      const uint64_t k = std::min<uint64_t>(n, window_at + window.size() - offset);
      std::memcpy(out, window.data() + (offset - window_at), k);
      out += k;
      offset += k;
      n -= k;
    }
  };
  return ParseGguf(read, end, path);
}

}  // namespace kvplan
