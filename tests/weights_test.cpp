// Weights: parameter counts from the architecture against every bundled
// model's published count, quantized bytes, and the tp/pp split.
#include <doctest/doctest.h>

#include <cmath>

#include "plan/parallel.h"
#include "plan/weights.h"
#include "spec/catalog.h"

namespace kvplan {

TEST_CASE("computed parameter count is within 1% of the published count for every model") {
  for (const ModelSpec& m : CatalogModels()) {
    CAPTURE(m.name);
    ModelTensors t = BuildModelTensors(m);
    CHECK(t.from_architecture);
    double ratio = static_cast<double>(CountParams(t)) / static_cast<double>(m.params);
    MESSAGE(m.name << " computed " << CountParams(t) << " published " << m.params << " ratio " << ratio);
    CHECK(std::abs(ratio - 1.0) < 0.01);
  }
}

}  // namespace kvplan
