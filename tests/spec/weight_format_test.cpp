// Weight formats: every vLLM --quantization method that changes weight bytes
// is known, maps to the layout it loads, and a bad name lists them all.
#include "spec/weight_format.h"

#include <doctest/doctest.h>

#include <string>

#include "util/error.h"

namespace kvplan {

TEST_CASE("weight formats: vLLM's quantization methods map to the layouts they load") {
  // AWQ's kernels (awq_marlin) read AWQ checkpoints; GPTQ's (gptq_marlin,
  // marlin) GPTQ ones, which add an int32 g_idx per input.
  CHECK(SameLayout(FindWeightFormat("awq_marlin"), FindWeightFormat("awq")));
  CHECK(SameLayout(FindWeightFormat("awq"), FindWeightFormat("int4")));
  CHECK(SameLayout(FindWeightFormat("gptq_marlin"), FindWeightFormat("gptq")));
  CHECK(SameLayout(FindWeightFormat("marlin"), FindWeightFormat("gptq")));
  CHECK(FindWeightFormat("gptq").col_bits == 32);
  CHECK(FindWeightFormat("gptq").name == "int4");
  CHECK_FALSE(SameLayout(FindWeightFormat("gptq"), FindWeightFormat("awq")));
  CHECK(FindWeightFormat("gptq", 64).group_elems == 64);
  // ModelOpt: fp8 with fp32 weight and input scales; its FP4 is NVFP4.
  CHECK(FindWeightFormat("modelopt").name == "fp8");
  CHECK(FindWeightFormat("modelopt").tensor_scale_bytes == 8);
  CHECK(FindWeightFormat("modelopt_fp4").name == "nvfp4");
  // bitsandbytes: NF4 with double quantization (a uint8 absmax per 64, an
  // fp32 one per 256 of those).
  const WeightFormat bnb = FindWeightFormat("bitsandbytes");
  CHECK(bnb.bits == 4);
  CHECK(bnb.group_elems == 64);
  CHECK(bnb.group_scale_bits == 8);
  CHECK(bnb.group2_elems == 64 * 256);
  // experts_int8: the MoE experts only.
  const WeightFormat ei8 = FindWeightFormat("experts_int8");
  CHECK(ei8.name == "int8");
  CHECK(ei8.Quantizes(TensorPart::kExperts));
  CHECK_FALSE(ei8.Quantizes(TensorPart::kAttention));
  // compressed-tensors and gguf read the format from the checkpoint.
  CHECK(FindWeightFormat("compressed-tensors").name == "checkpoint");
  CHECK(FindWeightFormat("compressed-tensors").unmodelled == "compressed-tensors");
  CHECK(FindWeightFormat("gguf").name == "checkpoint");
}

TEST_CASE("weight formats: a bad name lists every accepted one") {
  const std::string known = KnownWeightFormats();
  for (const char* name : {"fp32",
                           "bf16",
                           "fp8",
                           "int8",
                           "int4",
                           "nvfp4",
                           "mxfp4",
                           "awq",
                           "awq_marlin",
                           "gptq",
                           "gptq_marlin",
                           "marlin",
                           "compressed-tensors",
                           "fp8",
                           "modelopt",
                           "modelopt_fp4",
                           "bitsandbytes",
                           "gguf",
                           "experts_int8",
                           "fbgemm_fp8",
                           "ct-w4a16",
                           "ct-w8a8",
                           "ct-w8a16",
                           "bnb-int8"}) {
    CAPTURE(name);
    CHECK(known.find(name) != std::string::npos);
    CHECK_NOTHROW(FindWeightFormat(name));
  }
  CHECK(known.find("checkpoint") == std::string::npos);  // internal, not a user's name
  const std::string checkpoint = "unknown weight dtype 'checkpoint' (known: " + known + ")";
  CHECK_THROWS_WITH_AS(FindWeightFormat("checkpoint"), checkpoint.c_str(), Error);
  const std::string typo = "unknown weight dtype 'awq-int4' (known: " + known + ")";
  CHECK_THROWS_WITH_AS(FindWeightFormat("awq-int4"), typo.c_str(), Error);
}

TEST_CASE("weight formats: a method that reads the checkpoint takes the checkpoint's format") {
  ModelSpec m;
  m.weight_dtype = "bf16";
  // No quantization kvplan sizes: the model's own dtype, marked unmodelled.
  WeightFormat f = ModelWeightFormat(m, "compressed-tensors");
  CHECK(f.name == "bf16");
  CHECK(f.unmodelled == "compressed-tensors");
  // A compressed-tensors W4A16 checkpoint: its own layout.
  QuantSpec q;
  q.format = "int4";
  q.scheme = "ct-w4a16";
  q.group_size = 64;
  m.quantization = q;
  f = ModelWeightFormat(m, "compressed-tensors");
  CHECK(f.unmodelled.empty());
  CHECK(SameLayout(f, FindWeightFormat("ct-w4a16", 64)));
  CHECK(SameLayout(ModelWeightFormat(m, ""), f));
  CHECK(WeightFormatLabel(f) == "int4 (ct-w4a16; groups of 64)");
  // An override of the same type keeps the checkpoint's layout; another type replaces it.
  CHECK(SameLayout(ModelWeightFormat(m, "awq_marlin"), f));
  CHECK(ModelWeightFormat(m, "fp8").name == "fp8");
}

}  // namespace kvplan
