// GGUF files: the reader's bounds checks and the spec each file's metadata
// describes. Every fixture is written here by a small GGUF writer (header,
// keys, tensor infos, alignment padding); the tensor data is zeros, or, for
// the full-size Llama 3.1 8B file, a sparse region the size of the real data
// (the reader checks that each tensor's data lies inside the file but never
// reads it).
#include "import/gguf.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "import/resolve.h"
#include "plan/kv.h"
#include "spec/catalog.h"

using namespace kvplan;
using kvplan::test::TempDir;

namespace {

// ggml type ids and (elements, bytes) per block, as the writer needs them.
struct T {
  uint32_t id;
  uint64_t block;
  uint64_t bytes;
};
constexpr T kF32{0, 1, 4}, kF16{1, 1, 2}, kQ8_0{8, 32, 34}, kQ4_K{12, 256, 144},
    kQ6_K{14, 256, 210};

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}

  GgufWriter& U32(const std::string& key, uint64_t v) { return Scalar(key, 4, v, 4); }
  GgufWriter& U64(const std::string& key, uint64_t v) { return Scalar(key, 10, v, 8); }
  GgufWriter& I32(const std::string& key, int64_t v) {
    return Scalar(key, 5, static_cast<uint64_t>(v), 4);
  }
  GgufWriter& F32(const std::string& key, float v) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, 4);
    return Scalar(key, 6, bits, 4);
  }
  GgufWriter& Str(const std::string& key, const std::string& v) {
    Key(key, 8);
    String(kvs_, v);
    return *this;
  }
  GgufWriter& ArrU32(const std::string& key, const std::vector<uint64_t>& v, uint32_t type = 4,
                     int width = 4) {
    Key(key, 9);
    Put(kvs_, type, 4);
    Put(kvs_, v.size(), 8);
    for (uint64_t x : v) Put(kvs_, x, width);
    return *this;
  }
  GgufWriter& ArrStr(const std::string& key, const std::vector<std::string>& v) {
    Key(key, 9);
    Put(kvs_, 8, 4);
    Put(kvs_, v.size(), 8);
    for (const std::string& s : v) String(kvs_, s);
    return *this;
  }
  GgufWriter& Tensor(const std::string& name, std::vector<uint64_t> dims, T type) {
    uint64_t elems = 1;
    for (uint64_t d : dims) elems *= d;
    const uint64_t bytes = elems / type.block * type.bytes;
    infos_.push_back({name, dims, type.id, data_});
    data_ += bytes;
    data_ = (data_ + 31) / 32 * 32;
    tensor_bytes_ += bytes;
    return *this;
  }
  // A tensor info with a chosen data offset (its data is not laid out).
  GgufWriter& TensorAt(const std::string& name, std::vector<uint64_t> dims, T type,
                       uint64_t offset) {
    infos_.push_back({name, dims, type.id, offset});
    return *this;
  }
  // A raw key with any type id and value bytes (for malformed files).
  GgufWriter& Raw(const std::string& key, uint32_t type, const std::string& value) {
    Key(key, type);
    kvs_ += value;
    return *this;
  }

  uint64_t TensorBytes() const { return tensor_bytes_; }

  /// Header, keys, tensor infos and the padding to the data section.
  std::string Head() const {
    std::string s = "GGUF";
    Put(s, version_, 4);
    Put(s, infos_.size(), 8);
    Put(s, n_kv_, 8);
    s += kvs_;
    for (const Info& t : infos_) {
      String(s, t.name);
      Put(s, t.dims.size(), 4);
      for (uint64_t d : t.dims) Put(s, d, 8);
      Put(s, t.type, 4);
      Put(s, t.offset, 8);
    }
    s.resize((s.size() + 31) / 32 * 32, '\0');
    return s;
  }
  /// The whole file, its data zeros.
  std::string Bytes() const { return Head() + std::string(data_, '\0'); }
  /// Writes the file to dir/name; the data region is sparse (never written).
  std::string Write(const std::string& dir, const std::string& name) const {
    const std::string path = dir + "/" + name;
    const std::string head = Head();
    {
      std::ofstream out(path, std::ios::binary);
      out.write(head.data(), static_cast<std::streamsize>(head.size()));
    }
    std::filesystem::resize_file(path, head.size() + data_);
    return path;
  }

  static void Put(std::string& s, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  static void String(std::string& s, const std::string& v) {
    Put(s, v.size(), 8);
    s += v;
  }

 private:
  struct Info {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    uint64_t offset;
  };
  void Key(const std::string& key, uint32_t type) {
    String(kvs_, key);
    Put(kvs_, type, 4);
    ++n_kv_;
  }
  GgufWriter& Scalar(const std::string& key, uint32_t type, uint64_t v, int bytes) {
    Key(key, type);
    Put(kvs_, v, bytes);
    return *this;
  }

  uint32_t version_;
  std::string kvs_;
  uint64_t n_kv_ = 0;
  std::vector<Info> infos_;
  uint64_t data_ = 0;
  uint64_t tensor_bytes_ = 0;
};

// A small llama-style GQA model: 4 layers, hidden 256, 8 query heads, 2 KV.
GgufWriter SmallLlama(uint32_t version = 3) {
  GgufWriter w(version);
  w.Str("general.architecture", "llama")
      .Str("general.name", "Tiny Llama GQA")
      .U32("general.file_type", 15)
      .U32("llama.block_count", 4)
      .U32("llama.context_length", 4096)
      .U32("llama.embedding_length", 256)
      .U32("llama.feed_forward_length", 512)
      .U32("llama.attention.head_count", 8)
      .U32("llama.attention.head_count_kv", 2)
      .ArrStr("tokenizer.ggml.tokens", {"a", "b", "c"});
  w.Tensor("token_embd.weight", {256, 1000}, kQ4_K);
  for (int i = 0; i < 4; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.Tensor(b + "attn_norm.weight", {256}, kF32)
        .Tensor(b + "attn_q.weight", {256, 256}, kQ4_K)
        .Tensor(b + "attn_k.weight", {256, 64}, kQ4_K)
        .Tensor(b + "attn_v.weight", {256, 64}, kQ6_K)
        .Tensor(b + "attn_output.weight", {256, 256}, kQ4_K)
        .Tensor(b + "ffn_gate.weight", {256, 512}, kQ4_K)
        .Tensor(b + "ffn_up.weight", {256, 512}, kQ4_K)
        .Tensor(b + "ffn_down.weight", {512, 256}, kQ6_K);
  }
  w.Tensor("output_norm.weight", {256}, kF32).Tensor("output.weight", {256, 1000}, kQ6_K);
  return w;
}

std::string Message(const std::string& bytes, const std::string& path = "m.gguf") {
  try {
    GgufModelFromBytes(bytes, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("gguf: a llama-style GQA model: geometry, exact weight bytes, its name") {
  GgufWriter w = SmallLlama();
  const std::string dir = TempDir();
  const std::string path = w.Write(dir, "tiny.gguf");
  const ModelSpec s = LoadGgufModel(path);
  CHECK(s.name == "tiny-llama-gqa");
  CHECK(s.source == path);
  CHECK(s.origin == path);
  CHECK(s.architecture == "LlamaForCausalLM");
  CHECK(s.layers == 4);
  CHECK(s.hidden_size == 256);
  CHECK(s.query_heads == 8);
  CHECK(s.kv_heads == 2);
  CHECK(s.head_dim == 32);
  CHECK(s.v_head_dim == 32);
  CHECK(s.max_context == 4096);
  CHECK(s.intermediate_size == 512);
  CHECK(s.vocab_size == 1000);
  CHECK_FALSE(s.tie_embeddings);
  CHECK(s.mlp == "gated");
  CHECK(s.AttentionKind() == "GQA");
  REQUIRE(s.groups.size() == 1);
  CHECK(s.groups[0].kind == LayerKind::kFull);
  CHECK(s.checkpoint_bytes == w.TensorBytes());
  CHECK(s.checkpoint_bytes_from == "GGUF tensor infos (Q4_K_M)");
  CHECK(s.weight_dtype == "fp16");
  REQUIRE(s.quantization.has_value());
  CHECK(s.quantization->format == "int4");
  // Parameters counted element by element.
  CHECK(s.params ==
        256 * 1000 * 2 + 256 + 4 * (256 + 2 * 256 * 256 + 2 * 256 * 64 + 3 * 256 * 512));
  // The same from memory and without a name: the file's stem.
  GgufWriter unnamed;
  unnamed.Str("general.architecture", "llama")
      .U32("llama.block_count", 1)
      .U32("llama.context_length", 128)
      .U32("llama.embedding_length", 64)
      .U32("llama.attention.head_count", 2)
      .Tensor("token_embd.weight", {64, 10}, kF16);
  const ModelSpec u = GgufModelFromBytes(unnamed.Bytes(), "dir/My Model.gguf");
  CHECK(u.name == "my-model");
  CHECK(u.kv_heads == 2);  // no head_count_kv: MHA, as llama.cpp reads it
  CHECK(u.weight_dtype == "fp16");
  CHECK_FALSE(u.quantization.has_value());
  CHECK(u.tie_embeddings);
}

TEST_CASE("gguf: versions 2 and 3 read alike; v1 and big-endian files are refused") {
  const ModelSpec v3 = GgufModelFromBytes(SmallLlama(3).Bytes(), "m.gguf");
  const ModelSpec v2 = GgufModelFromBytes(SmallLlama(2).Bytes(), "m.gguf");
  CHECK(v2.layers == v3.layers);
  CHECK(v2.kv_heads == v3.kv_heads);
  CHECK(v2.checkpoint_bytes == v3.checkpoint_bytes);
  std::string v1 = SmallLlama(3).Bytes();
  v1[4] = 1;
  CHECK(Message(v1) ==
        "m.gguf: byte 4: version: GGUF v1 is not supported (llama.cpp reads v2 and v3 only; "
        "convert the model again with a current llama.cpp)");
  std::string big = SmallLlama(3).Bytes();
  big[4] = 0;
  big[7] = 3;
  CHECK(Message(big) ==
        "m.gguf: byte 4: version: version 50331648 read little-endian: a big-endian GGUF "
        "file, which kvplan does not read");
  std::string magic = SmallLlama(3).Bytes();
  magic[0] = 'X';
  CHECK(Message(magic) ==
        "m.gguf: byte 0: magic: not a GGUF file (it does not start with \"GGUF\")");
}

TEST_CASE("gguf: Llama 3.1 8B Instruct Q4_K_M: weight bytes within 0.5% of the published file") {
  // The real shapes of Meta-Llama-3.1-8B-Instruct (config.json: hidden 4096,
  // 32 layers, 32 heads, 8 KV heads, intermediate 14336, vocab 128256) with
  // the per-tensor types of llama.cpp's Q4_K_M mix (src/llama-quant.cpp,
  // llama_tensor_get_type): Q4_K everywhere, except output.weight in Q6_K
  // and attn_v / ffn_down in Q6_K on the layers where use_more_bits(i, n)
  // holds (i < n/8, i >= 7n/8, or (i - n/8) % 3 == 2: 16 of the 32 layers);
  // norms and rope_freqs stay F32.
  // Published size: bartowski/Meta-Llama-3.1-8B-Instruct-GGUF,
  // Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf, 4.92 GB (the repository's README
  // table and file listing).
  const uint64_t H = 4096, V = 128256, F = 14336, KV = 1024, L = 32;
  GgufWriter w;
  w.Str("general.architecture", "llama")
      .Str("general.name", "Meta Llama 3.1 8B Instruct")
      .U32("general.file_type", 15)
      .U32("llama.block_count", L)
      .U32("llama.context_length", 131072)
      .U32("llama.embedding_length", H)
      .U32("llama.feed_forward_length", F)
      .U32("llama.attention.head_count", 32)
      .U32("llama.attention.head_count_kv", 8)
      .U32("llama.rope.dimension_count", 128)
      .U32("llama.vocab_size", V);
  w.Tensor("rope_freqs.weight", {64}, kF32).Tensor("token_embd.weight", {H, V}, kQ4_K);
  for (uint64_t i = 0; i < L; ++i) {
    const bool more = i < L / 8 || i >= 7 * L / 8 || (i - L / 8) % 3 == 2;
    const std::string b = "blk." + std::to_string(i) + ".";
    w.Tensor(b + "attn_norm.weight", {H}, kF32)
        .Tensor(b + "ffn_norm.weight", {H}, kF32)
        .Tensor(b + "attn_q.weight", {H, H}, kQ4_K)
        .Tensor(b + "attn_k.weight", {H, KV}, kQ4_K)
        .Tensor(b + "attn_v.weight", {H, KV}, more ? kQ6_K : kQ4_K)
        .Tensor(b + "attn_output.weight", {H, H}, kQ4_K)
        .Tensor(b + "ffn_gate.weight", {H, F}, kQ4_K)
        .Tensor(b + "ffn_up.weight", {H, F}, kQ4_K)
        .Tensor(b + "ffn_down.weight", {F, H}, more ? kQ6_K : kQ4_K);
  }
  w.Tensor("output_norm.weight", {H}, kF32).Tensor("output.weight", {H, V}, kQ6_K);
  const std::string path = w.Write(TempDir(), "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf");
  const ModelSpec s = LoadGgufModel(path);
  CHECK(s.checkpoint_bytes == 4'912'898'304ull);
  const double published = 4.92e9;
  CHECK(std::abs(static_cast<double>(s.checkpoint_bytes) / published - 1.0) < 0.005);
  CHECK(s.checkpoint_bytes_from == "GGUF tensor infos (Q4_K_M)");
  // The geometry is the catalog's Llama 3.1 8B, as its config.json gives it.
  const ModelSpec* cat = nullptr;
  for (const ModelSpec& m : CatalogModels()) {
    if (m.name == "llama-3.1-8b") cat = &m;
  }
  REQUIRE(cat != nullptr);
  CHECK(s.layers == cat->layers);
  CHECK(s.hidden_size == cat->hidden_size);
  CHECK(s.query_heads == cat->query_heads);
  CHECK(s.kv_heads == cat->kv_heads);
  CHECK(s.head_dim == cat->head_dim);
  CHECK(s.max_context == cat->max_context);
  CHECK(s.vocab_size == cat->vocab_size);
  CHECK(s.intermediate_size == cat->intermediate_size);
  CHECK(s.groups.size() == cat->groups.size());
  CHECK(s.params == 8'030'261'312ull);  // the published 8.03B
}

TEST_CASE("gguf: per-layer head_count_kv with ssm keys: Jamba's attention and Mamba layers") {
  // Jamba v0.1's geometry: 32 layers, attention at i % 8 == 4, hidden 4096,
  // d_inner 8192 (expand 2), d_conv 4, d_state 16: the catalog's 311,296 B of
  // state per sequence and Mamba layer (as the HF importer computes it).
  std::vector<uint64_t> kv(32, 0);
  for (uint64_t i = 4; i < 32; i += 8) kv[i] = 8;
  GgufWriter w;
  w.Str("general.architecture", "jamba")
      .U32("jamba.block_count", 32)
      .U32("jamba.context_length", 262144)
      .U32("jamba.embedding_length", 4096)
      .U32("jamba.feed_forward_length", 14336)
      .U32("jamba.attention.head_count", 32)
      .ArrU32("jamba.attention.head_count_kv", kv)
      .U32("jamba.ssm.conv_kernel", 4)
      .U32("jamba.ssm.inner_size", 8192)
      .U32("jamba.ssm.state_size", 16)
      .U32("jamba.ssm.time_step_rank", 256)
      .Tensor("token_embd.weight", {4096, 64}, kF16);
  const ModelSpec s = GgufModelFromBytes(w.Bytes(), "jamba.gguf");
  CHECK(s.architecture == "JambaForCausalLM");
  CHECK(s.kv_heads == 8);
  REQUIRE(s.groups.size() == 2);
  const LayerGroup* full = &s.groups[0];
  const LayerGroup* state = &s.groups[1];
  if (full->kind != LayerKind::kFull) std::swap(full, state);
  CHECK(full->kind == LayerKind::kFull);
  CHECK(full->layers == 4);
  CHECK(full->every == 8);
  CHECK(full->offset == 4);
  CHECK(state->kind == LayerKind::kState);
  CHECK(state->layers == 28);
  CHECK(state->state_bytes == 311'296);
  REQUIRE(s.mamba.has_value());
  CHECK(s.mamba->expand == 2);
  CHECK(s.mamba->d_state == 16);
  // Mamba-2 (group_count): B and C add 2 x groups x d_state conv channels.
  GgufWriter m2;
  m2.Str("general.architecture", "granitehybrid")
      .U32("granitehybrid.block_count", 4)
      .U32("granitehybrid.context_length", 4096)
      .U32("granitehybrid.embedding_length", 256)
      .U32("granitehybrid.attention.head_count", 4)
      .ArrU32("granitehybrid.attention.head_count_kv", {0, 0, 0, 2})
      .U32("granitehybrid.ssm.conv_kernel", 4)
      .U32("granitehybrid.ssm.inner_size", 512)
      .U32("granitehybrid.ssm.state_size", 64)
      .U32("granitehybrid.ssm.group_count", 1)
      .U32("granitehybrid.ssm.time_step_rank", 8)  // Mamba-2: the SSM heads
      .Tensor("token_embd.weight", {256, 64}, kF16);
  const ModelSpec g = GgufModelFromBytes(m2.Bytes(), "g.gguf");
  REQUIRE(g.mamba.has_value());
  CHECK(g.mamba->version == 2);
  CHECK(g.mamba->heads == 8);
  CHECK(g.mamba->head_dim == 64);
  CHECK(g.mamba->groups == 1);
  REQUIRE(g.groups.size() == 2);
  for (const LayerGroup& grp : g.groups) {
    if (grp.kind == LayerKind::kState) {
      CHECK(grp.layers == 3);
      CHECK(grp.state_bytes == ((512 + 2 * 64) * 3 + 512 * 64) * 2);
    } else {
      CHECK(grp.kind == LayerKind::kFull);
      CHECK(grp.kv_heads == 2);
      CHECK(grp.every == 4);
      CHECK(grp.offset == 3);
    }
  }
}

TEST_CASE("gguf: sliding windows: Gemma 2 and 3 patterns, and the file's own pattern") {
  auto gemma = [](const std::string& arch, uint64_t layers) {
    GgufWriter w;
    w.Str("general.architecture", arch)
        .U32(arch + ".block_count", layers)
        .U32(arch + ".context_length", 8192)
        .U32(arch + ".embedding_length", 256)
        .U32(arch + ".attention.head_count", 4)
        .U32(arch + ".attention.head_count_kv", 2)
        .U32(arch + ".attention.key_length", 128)
        .U32(arch + ".attention.value_length", 128)
        .U32(arch + ".attention.sliding_window", 4096);
    w.Tensor("token_embd.weight", {256, 64}, kQ8_0);
    return w;
  };
  // Gemma 2: even layers slide, odd layers are global (llama.cpp pattern 2).
  const ModelSpec g2 = GgufModelFromBytes(gemma("gemma2", 6).Bytes(), "g2.gguf");
  CHECK(g2.head_dim == 128);
  CHECK(g2.quantization.has_value());
  REQUIRE(g2.groups.size() == 2);
  CHECK(g2.groups[0].kind == LayerKind::kSliding);
  CHECK(g2.groups[0].window == 4096);
  CHECK(g2.groups[0].every == 2);
  CHECK(g2.groups[0].offset == 0);
  CHECK(g2.groups[1].kind == LayerKind::kFull);
  CHECK(g2.groups[1].layers == 3);
  // Gemma 3: every 6th layer global (i % 6 == 5).
  const ModelSpec g3 = GgufModelFromBytes(gemma("gemma3", 12).Bytes(), "g3.gguf");
  REQUIRE(g3.groups.size() == 2);
  const LayerGroup& full = g3.groups[0].kind == LayerKind::kFull ? g3.groups[0] : g3.groups[1];
  CHECK(full.kind == LayerKind::kFull);
  CHECK(full.layers == 2);
  CHECK(full.every == 6);
  CHECK(full.offset == 5);
  // A file's own pattern (a number) wins over the architecture's default.
  GgufWriter p = gemma("gemma3", 8);
  p.U32("gemma3.attention.sliding_window_pattern", 4);
  const ModelSpec g4 = GgufModelFromBytes(p.Bytes(), "g4.gguf");
  const LayerGroup& f4 = g4.groups[0].kind == LayerKind::kFull ? g4.groups[0] : g4.groups[1];
  CHECK(f4.every == 4);
  CHECK(f4.offset == 3);
  // ...or one bool per layer (true: the layer slides).
  GgufWriter b = gemma("gemma3", 4);
  b.ArrU32("gemma3.attention.sliding_window_pattern", {1, 0, 1, 0}, 7, 1);
  const ModelSpec g5 = GgufModelFromBytes(b.Bytes(), "g5.gguf");
  REQUIRE(g5.groups.size() == 2);
  CHECK(g5.groups[0].kind == LayerKind::kSliding);
  CHECK(g5.groups[0].every == 2);
  CHECK(g5.groups[0].offset == 0);
  // Gemma without its window: llama.cpp requires the key.
  GgufWriter nw;
  nw.Str("general.architecture", "gemma2")
      .U32("gemma2.block_count", 2)
      .U32("gemma2.context_length", 8192)
      .U32("gemma2.embedding_length", 256)
      .U32("gemma2.attention.head_count", 4)
      .Tensor("token_embd.weight", {256, 64}, kF16);
  CHECK(Message(nw.Bytes()) ==
        "m.gguf: gemma2.attention.sliding_window: missing (llama.cpp requires it for 'gemma2' "
        "models)");
}

TEST_CASE("gguf: MoE and MLA: experts from the keys, MoE layers from the tensor names") {
  GgufWriter q;
  q.Str("general.architecture", "qwen3moe")
      .U32("qwen3moe.block_count", 4)
      .U32("qwen3moe.context_length", 32768)
      .U32("qwen3moe.embedding_length", 256)
      .U32("qwen3moe.attention.head_count", 8)
      .U32("qwen3moe.attention.head_count_kv", 2)
      .U32("qwen3moe.attention.key_length", 64)
      .U32("qwen3moe.attention.value_length", 64)
      .U32("qwen3moe.expert_count", 8)
      .U32("qwen3moe.expert_used_count", 2)
      .U32("qwen3moe.expert_feed_forward_length", 128)
      .Tensor("token_embd.weight", {256, 64}, kF16);
  for (int i = 0; i < 4; ++i) {
    q.Tensor("blk." + std::to_string(i) + ".ffn_gate_exps.weight", {256, 128, 8}, kF16);
  }
  const ModelSpec s = GgufModelFromBytes(q.Bytes(), "q.gguf");
  REQUIRE(s.moe.has_value());
  CHECK(s.moe->experts == 8);
  CHECK(s.moe->experts_per_token == 2);
  CHECK(s.moe->intermediate_size == 128);
  CHECK(s.moe->dense_layers == 0);
  CHECK(s.moe->period == 1);
  CHECK(s.head_dim == 64);
  CHECK(s.architecture == "Qwen3MoeForCausalLM");
  CHECK(s.intermediate_size == 128);  // no dense MLP: the experts' width

  // DeepSeek-V3-style MLA (older conversion: key_length = nope + rope), the
  // first layer dense.
  GgufWriter d;
  d.Str("general.architecture", "deepseek2")
      .U32("deepseek2.block_count", 3)
      .U32("deepseek2.context_length", 163840)
      .U32("deepseek2.embedding_length", 512)
      .U32("deepseek2.feed_forward_length", 1024)
      .U32("deepseek2.attention.head_count", 16)
      .U32("deepseek2.attention.head_count_kv", 16)
      .U32("deepseek2.attention.key_length", 192)
      .U32("deepseek2.attention.value_length", 128)
      .U32("deepseek2.attention.kv_lora_rank", 512)
      .U32("deepseek2.attention.q_lora_rank", 1536)
      .U32("deepseek2.rope.dimension_count", 64)
      .U32("deepseek2.expert_count", 16)
      .U32("deepseek2.expert_used_count", 4)
      .U32("deepseek2.expert_shared_count", 1)
      .U32("deepseek2.expert_feed_forward_length", 256)
      .U32("deepseek2.leading_dense_block_count", 1)
      .Tensor("token_embd.weight", {512, 64}, kF16)
      .Tensor("blk.1.ffn_up_exps.weight", {512, 256, 16}, kF16)
      .Tensor("blk.2.ffn_up_exps.weight", {512, 256, 16}, kF16);
  const ModelSpec m = GgufModelFromBytes(d.Bytes(), "d.gguf");
  REQUIRE(m.mla.has_value());
  CHECK(m.mla->kv_lora_rank == 512);
  CHECK(m.mla->qk_rope_head_dim == 64);
  CHECK(m.mla->qk_nope_head_dim == 128);
  CHECK(m.mla->v_head_dim == 128);
  CHECK(m.mla->LatentDim() == 576);
  CHECK(m.AttentionKind() == "MLA");
  REQUIRE(m.groups.size() == 1);
  CHECK(m.groups[0].kind == LayerKind::kMla);
  REQUIRE(m.moe.has_value());
  CHECK(m.moe->dense_layers == 1);
  CHECK(m.moe->shared_experts == 1);
  // Newer conversions store MLA absorbed: head_count_kv 1, key_length 576,
  // the per-head dims under *_mla.
  GgufWriter a;
  a.Str("general.architecture", "deepseek2")
      .U32("deepseek2.block_count", 1)
      .U32("deepseek2.context_length", 4096)
      .U32("deepseek2.embedding_length", 512)
      .U32("deepseek2.feed_forward_length", 1024)
      .U32("deepseek2.attention.head_count", 16)
      .U32("deepseek2.attention.head_count_kv", 1)
      .U32("deepseek2.attention.key_length", 576)
      .U32("deepseek2.attention.value_length", 512)
      .U32("deepseek2.attention.key_length_mla", 192)
      .U32("deepseek2.attention.value_length_mla", 128)
      .U32("deepseek2.attention.kv_lora_rank", 512)
      .U32("deepseek2.rope.dimension_count", 64)
      .Tensor("token_embd.weight", {512, 64}, kF16);
  const ModelSpec ab = GgufModelFromBytes(a.Bytes(), "a.gguf");
  CHECK(ab.head_dim == 192);
  CHECK(ab.v_head_dim == 128);
  CHECK(ab.mla->LatentDim() == 576);
  CHECK(ab.kv_heads == 16);
}

TEST_CASE("gguf: every bounds error is one line naming the file, the byte and the field") {
  const std::string good = SmallLlama().Bytes();
  // Truncated inside the header.
  CHECK(Message(good.substr(0, 10)) ==
        "m.gguf: byte 8: tensor_count: needs 8 bytes but the file ends after 2 (truncated "
        "file?)");
  CHECK(Message("") ==
        "m.gguf: byte 0: magic: needs 4 bytes but the file ends after 0 (truncated file?)");
  // Truncated anywhere in the metadata or tensor infos: an error, never a crash.
  const std::string head = SmallLlama().Head();
  for (size_t n = 0; n < head.size(); n += 7) {
    const std::string m = Message(good.substr(0, n));
    CHECK(m.rfind("m.gguf: ", 0) == 0);
    CHECK(m != "(no error)");
  }
  // The data section cut short: a tensor's data runs past the end.
  CHECK(Message(good.substr(0, good.size() - 32)).find("runs past the end of the file") !=
        std::string::npos);

  auto header = [](uint64_t n_kv) {
    std::string s = "GGUF";
    GgufWriter::Put(s, 3, 4);
    GgufWriter::Put(s, 0, 8);
    GgufWriter::Put(s, n_kv, 8);
    return s;
  };
  // A string length past the end of the file.
  std::string s = header(1);
  GgufWriter::Put(s, 1000, 8);
  s += "general.architecture";
  CHECK(Message(s) ==
        "m.gguf: byte 24: metadata key 0: string length 1000 runs past the end of the file "
        "(20 bytes left)");
  // Far more keys than the file could hold.
  CHECK(Message(header(1ull << 40)) ==
        "m.gguf: byte 16: metadata_kv_count: 1099511627776 keys cannot fit in the 0 bytes left");
  // An unknown value type.
  std::string t = header(1);
  GgufWriter::String(t, "k");
  GgufWriter::Put(t, 99, 4);
  t += std::string(8, '\0');
  CHECK(Message(t) == "m.gguf: byte 33: k: value type 99 is not a GGUF type (0-12)");
  // An array count past the end of the file.
  std::string a = header(1);
  GgufWriter::String(a, "k");
  GgufWriter::Put(a, 9, 4);
  GgufWriter::Put(a, 4, 4);
  GgufWriter::Put(a, 1ull << 62, 8);
  CHECK(Message(a) ==
        "m.gguf: byte 41: k: array of 4611686018427387904 u32 values runs past the end of the "
        "file (0 bytes left)");
  // A duplicate key.
  GgufWriter dup = SmallLlama();
  dup.U32("llama.block_count", 8);
  const std::string dm = Message(dup.Bytes());
  CHECK(dm.find("llama.block_count: duplicate key (first at byte ") != std::string::npos);
  // More than 4 dimensions, an unknown ggml type, an offset past the end.
  GgufWriter dims;
  dims.Str("general.architecture", "llama").Tensor("x", {1, 1, 1, 1, 1}, kF32);
  CHECK(Message(dims.Bytes()).find("tensor 'x': 5 dimensions (ggml tensors have 1 to 4)") !=
        std::string::npos);
  GgufWriter type;
  type.Str("general.architecture", "llama").Tensor("x", {32}, T{4, 32, 18});
  CHECK(Message(type.Bytes()).find("tensor 'x': ggml type 4 is not one kvplan knows") !=
        std::string::npos);
  GgufWriter off;
  off.Str("general.architecture", "llama").Tensor("x", {1024}, kF32);
  CHECK(Message(off.Head())
            .find("tensor 'x': data at 0 + 4096 bytes runs past the end of the "
                  "file (0 bytes of data; truncated file?)") != std::string::npos);
  // A row that is not a whole number of blocks.
  GgufWriter row;
  row.Str("general.architecture", "llama").Tensor("x", {100, 2}, kQ4_K);
  CHECK(Message(row.Bytes()).find("row length 100 is not a multiple of Q4_K's block of 256") !=
        std::string::npos);
  // Wrong value types for the keys the spec needs.
  GgufWriter neg = SmallLlama();
  neg.I32("llama.expert_count", -1);
  CHECK(Message(neg.Bytes())
            .find("llama.expert_count: expected an unsigned integer, found a "
                  "negative value") != std::string::npos);
  GgufWriter flt;
  flt.Str("general.architecture", "llama").F32("llama.block_count", 2.0f);
  CHECK(Message(flt.Bytes()) ==
        "m.gguf: byte 69: llama.block_count: expected an unsigned integer, found a float");
}

TEST_CASE("gguf: metadata kvplan cannot plan for is refused clearly") {
  auto base = [](const std::string& arch) {
    GgufWriter w;
    w.Str("general.architecture", arch)
        .U32(arch + ".block_count", 4)
        .U32(arch + ".context_length", 4096)
        .U32(arch + ".embedding_length", 256)
        .U32(arch + ".attention.head_count", 8);
    return w;
  };
  // No architecture at all.
  GgufWriter none;
  none.U32("x", 1);
  CHECK(Message(none.Bytes()) ==
        "m.gguf: general.architecture: missing (every GGUF model names it)");
  // A per-layer array of the wrong length.
  GgufWriter len = base("llama");
  len.ArrU32("llama.attention.head_count_kv", {2, 2}).Tensor("t", {4}, kF32);
  CHECK(Message(len.Bytes())
            .find("llama.attention.head_count_kv: an array of 2 values, but "
                  "block_count is 4 (one per layer)") != std::string::npos);
  // Layers without attention and no ssm keys to size them.
  GgufWriter nossm = base("llama");
  nossm.ArrU32("llama.attention.head_count_kv", {0, 2, 2, 2}).Tensor("t", {4}, kF32);
  CHECK(Message(nossm.Bytes()) ==
        "m.gguf: llama.attention.head_count_kv: layer 0 has no attention heads and the file "
        "has no llama.ssm.* keys to size its state");
  // Attention-free (Mamba).
  GgufWriter mamba = base("mamba");
  mamba.U32("mamba.attention.head_count_kv", 0).Tensor("t", {4}, kF32);
  CHECK(Message(mamba.Bytes()).find("an attention-free model") != std::string::npos);
  // KV heads that do not divide the query heads: ValidateModel, named at the key.
  GgufWriter div = base("llama");
  div.U32("llama.attention.head_count_kv", 3).Tensor("t", {4}, kF32);
  CHECK(Message(div.Bytes()).find("m.gguf: byte ") == 0);
  CHECK(Message(div.Bytes())
            .find("llama.attention.head_count_kv: kv_heads: 3 does not divide "
                  "query_heads 8") != std::string::npos);
  // SSM keys, and every layer attends: only Falcon-H1 runs a state beside each attention.
  GgufWriter par = base("llama");
  par.U32("llama.attention.head_count_kv", 2)
      .U32("llama.ssm.inner_size", 512)
      .U32("llama.ssm.conv_kernel", 4)
      .U32("llama.ssm.state_size", 16)
      .Tensor("t", {4}, kF32);
  CHECK(Message(par.Bytes())
            .find("llama.ssm.inner_size: SSM keys, but every layer has attention heads: a state "
                  "beside the attention of every layer is Falcon-H1's layout") !=
        std::string::npos);
  // Gated DeltaNet value heads that do not divide the inner size.
  GgufWriter gdn = base("qwen3next");
  gdn.U32("qwen3next.attention.head_count_kv", 2)
      .U32("qwen3next.full_attention_interval", 4)
      .U32("qwen3next.ssm.inner_size", 500)
      .U32("qwen3next.ssm.conv_kernel", 4)
      .U32("qwen3next.ssm.state_size", 64)
      .U32("qwen3next.ssm.group_count", 2)
      .U32("qwen3next.ssm.time_step_rank", 3)
      .Tensor("t", {4}, kF32);
  CHECK(Message(gdn.Bytes())
            .find("qwen3next.ssm.inner_size: 500 is not a whole number of value heads "
                  "(ssm.time_step_rank 3) over 2 key heads (ssm.group_count)") !=
        std::string::npos);
  // A state too big for kvplan's limit on a state group.
  GgufWriter big = base("jamba");
  big.ArrU32("jamba.attention.head_count_kv", {0, 2, 0, 2})
      .U32("jamba.ssm.inner_size", 1 << 24)
      .U32("jamba.ssm.conv_kernel", 1 << 24)
      .U32("jamba.ssm.state_size", 1 << 24)
      .Tensor("t", {4}, kF32);
  CHECK(Message(big.Bytes())
            .find("jamba.ssm.inner_size: the state of one layer is over "
                  "kvplan's limit of 4294967296 bytes") != std::string::npos);
  // Data offsets: misaligned, overlapping, and an alignment that is no power of two.
  GgufWriter mis = base("llama");
  mis.TensorAt("t", {4}, kF32, 4);
  CHECK(Message(mis.Bytes() + std::string(64, '\0'))
            .find("tensor 't': data offset 4 is not a multiple of the alignment 32") !=
        std::string::npos);
  GgufWriter over = base("llama");
  over.TensorAt("a", {64}, kF32, 0).TensorAt("b", {64}, kF32, 128);
  CHECK(Message(over.Bytes() + std::string(512, '\0'))
            .find("tensor 'b': data at 128 overlaps tensor 'a' (at 0, 256 bytes)") !=
        std::string::npos);
  GgufWriter al = base("llama");
  al.U32("general.alignment", 24).Tensor("t", {4}, kF32);
  CHECK(Message(al.Bytes()).find("general.alignment: 24 is not a power of two") !=
        std::string::npos);
  // No tensors.
  GgufWriter empty = base("llama");
  CHECK(Message(empty.Bytes()) == "m.gguf: the file lists no tensors (a vocabulary-only GGUF?)");
}

TEST_CASE("gguf: size, capacity (llama.cpp) and latency take a .gguf path") {
  const std::string dir = TempDir();
  const std::string path = SmallLlama().Write(dir, "tiny-Q4_K_M.gguf");
  const test::CliResult size = test::RunKvplan("size " + path + " -c 4096");
  CHECK(size.exit_code == 0);
  CHECK(size.err.empty());
  const test::CliResult cap = test::RunKvplan(
      "capacity " + path +
      " --gpu h100-sxm --engine llama.cpp -c 32768 --kv-cache-dtype q8_0 --format json");
  CHECK(cap.exit_code == 0);
  CHECK(cap.out.find("exact: GGUF tensor infos (Q4_K_M)") != std::string::npos);
  const test::CliResult lat = test::RunKvplan("latency " + path + " --gpu h100-sxm");
  CHECK(lat.exit_code == 0);
  // A bad file through the CLI: exit 2, one line naming the file and byte.
  const std::string bad = test::WriteFile(dir, "bad.gguf", SmallLlama().Bytes().substr(0, 40));
  test::CheckOneLineError(
      test::RunKvplan("size " + bad),
      bad + ": byte 16: metadata_kv_count: 10 keys cannot fit in the 16 bytes left");
}

TEST_CASE("gguf: a missing or unreadable file is one line") {
  CHECK_THROWS_WITH_AS(LoadGgufModel("/nonexistent/x.gguf"),
                       "/nonexistent/x.gguf: cannot open file: No such file or directory", Error);
}

namespace kvplan {

TEST_CASE("gguf: Qwen3-Next's Gated DeltaNet layers and Falcon-H1's mixer beside attention") {
  // Qwen3-Next-80B's geometry as llama.cpp writes it: full_attention_interval 4 (every fourth
  // layer attends), the Gated DeltaNet in the ssm.* keys -- group_count the 16 key heads,
  // state_size their 128 width, time_step_rank the 32 value heads, inner_size 32 x 128. The
  // cache is the catalog model's, per token and per sequence.
  GgufWriter q;
  q.Str("general.architecture", "qwen3next")
      .U32("qwen3next.block_count", 48)
      .U32("qwen3next.context_length", 262144)
      .U32("qwen3next.embedding_length", 2048)
      .U32("qwen3next.attention.head_count", 16)
      .U32("qwen3next.attention.head_count_kv", 2)
      .U32("qwen3next.attention.key_length", 256)
      .U32("qwen3next.attention.value_length", 256)
      .U32("qwen3next.full_attention_interval", 4)
      .U32("qwen3next.ssm.conv_kernel", 4)
      .U32("qwen3next.ssm.state_size", 128)
      .U32("qwen3next.ssm.group_count", 16)
      .U32("qwen3next.ssm.time_step_rank", 32)
      .U32("qwen3next.ssm.inner_size", 4096)
      .Tensor("token_embd.weight", {2048, 64}, kF16);
  const ModelSpec s = GgufModelFromBytes(q.Bytes(), "qwen3next.gguf");
  REQUIRE(s.linear_attention.has_value());
  CHECK_FALSE(s.mamba.has_value());
  CHECK(s.linear_attention->kind == "gated_deltanet");
  CHECK(s.linear_attention->value_head_dim == 128);
  const ModelSpec want = LoadModel("qwen3-next-80b-a3b-instruct");
  for (uint64_t tp : {1, 2}) {
    const KvCost a = ComputeKvCost(s, FindCacheDtype("fp16"), tp);
    const KvCost b = ComputeKvCost(want, FindCacheDtype("fp16"), tp);
    CHECK(a.per_token_bytes == b.per_token_bytes);
    CHECK(a.fixed_bytes == b.fixed_bytes);
  }
  // Falcon-H1-0.5B: SSM keys and attention in every layer: the Mamba-2 mixer beside each.
  GgufWriter f;
  f.Str("general.architecture", "falcon-h1")
      .U32("falcon-h1.block_count", 36)
      .U32("falcon-h1.context_length", 16384)
      .U32("falcon-h1.embedding_length", 1024)
      .U32("falcon-h1.attention.head_count", 8)
      .U32("falcon-h1.attention.head_count_kv", 2)
      .U32("falcon-h1.attention.key_length", 64)
      .U32("falcon-h1.attention.value_length", 64)
      .U32("falcon-h1.ssm.conv_kernel", 4)
      .U32("falcon-h1.ssm.inner_size", 1536)
      .U32("falcon-h1.ssm.state_size", 128)
      .U32("falcon-h1.ssm.group_count", 1)
      .U32("falcon-h1.ssm.time_step_rank", 24)
      .Tensor("token_embd.weight", {1024, 64}, kF16);
  const ModelSpec h = GgufModelFromBytes(f.Bytes(), "falcon-h1.gguf");
  REQUIRE(h.groups.size() == 2);
  CHECK(h.groups[1].parallel);
  CHECK(h.groups[1].state_bytes == 403'968);
  const KvCost a = ComputeKvCost(h, FindCacheDtype("fp16"), 1);
  const KvCost b = ComputeKvCost(LoadModel("falcon-h1-0.5b-instruct"), FindCacheDtype("fp16"), 1);
  CHECK(a.per_token_bytes == b.per_token_bytes);
  CHECK(a.fixed_bytes == b.fixed_bytes);
}

TEST_CASE("gguf: Gemma 4's sliding layers of their own width, and shared-KV layers") {
  // Gemma-4-31B as llama.cpp writes it: key_length 512 (global layers), key_length_swa 256,
  // head_count_kv per layer (4 global, 16 sliding), the pattern as one bool a layer.
  std::vector<uint64_t> kv(60, 16), swa(60, 1);
  for (uint64_t i = 5; i < 60; i += 6) kv[i] = 4, swa[i] = 0;
  GgufWriter w;
  w.Str("general.architecture", "gemma4")
      .U32("gemma4.block_count", 60)
      .U32("gemma4.context_length", 262144)
      .U32("gemma4.embedding_length", 5376)
      .U32("gemma4.attention.head_count", 32)
      .ArrU32("gemma4.attention.head_count_kv", kv)
      .U32("gemma4.attention.key_length", 512)
      .U32("gemma4.attention.value_length", 512)
      .U32("gemma4.attention.key_length_swa", 256)
      .U32("gemma4.attention.value_length_swa", 256)
      .U32("gemma4.attention.sliding_window", 1024)
      .ArrU32("gemma4.attention.sliding_window_pattern", swa, 7, 1)
      .U32("gemma4.attention.shared_kv_layers", 0)
      .Tensor("token_embd.weight", {5376, 64}, kF16);
  const ModelSpec g = GgufModelFromBytes(w.Bytes(), "gemma4.gguf");
  const KvCost a = ComputeKvCost(g, FindCacheDtype("fp16"), 1);
  const KvCost b = ComputeKvCost(LoadModel("gemma-4-31b-it"), FindCacheDtype("fp16"), 1);
  CHECK(a.per_token_bytes == b.per_token_bytes);
  CHECK(a.SequenceBytes(32768) == b.SequenceBytes(32768));
  // The last shared_kv_layers layers (E2B/E4B) keep nothing of their own.
  GgufWriter e;
  e.Str("general.architecture", "gemma4")
      .U32("gemma4.block_count", 6)
      .U32("gemma4.context_length", 4096)
      .U32("gemma4.embedding_length", 256)
      .U32("gemma4.attention.head_count", 8)
      .U32("gemma4.attention.head_count_kv", 2)
      .U32("gemma4.attention.key_length", 64)
      .U32("gemma4.attention.sliding_window", 512)
      .ArrU32("gemma4.attention.sliding_window_pattern", {1, 1, 0, 1, 1, 0}, 7, 1)
      .U32("gemma4.attention.shared_kv_layers", 3)
      .Tensor("token_embd.weight", {256, 64}, kF16);
  const ModelSpec es = GgufModelFromBytes(e.Bytes(), "e.gguf");
  // value_length_swa without key_length_swa: the sliding layers' V width alone.
  GgufWriter v = e;
  v.U32("gemma4.attention.value_length_swa", 32);
  for (const LayerGroup& grp : GgufModelFromBytes(v.Bytes(), "v.gguf").groups) {
    if (grp.kind == LayerKind::kSliding) CHECK(grp.v_head_dim == 32);
  }
  uint64_t shared = 0;
  for (const LayerGroup& grp : es.groups) shared += grp.kind == LayerKind::kShared ? grp.layers : 0;
  CHECK(shared == 3);
  // Layers 0 and 1 slide (2 x 2 x 64 x 2 B each), layer 2 is global.
  CHECK(ComputeKvCost(es, FindCacheDtype("fp16"), 1).per_token_bytes == 3ull * 2 * 2 * 64 * 2);
}

}  // namespace kvplan
