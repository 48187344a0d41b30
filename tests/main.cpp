// The one doctest binary: every *_test.cpp in tests/ links into it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // Every reader's list of fields is checked against what it reads, here
  // and in the kvplan processes the tests start (src/spec/yaml_reader.cpp).
  setenv("KVPLAN_CHECK_FIELDS", "1", 1);
  return doctest::Context(argc, argv).run();
}
