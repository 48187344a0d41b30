// The one doctest binary: every *_test.cpp in tests/ links into it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // Every reader's list of fields is checked against what it reads, here
  // and in the kvplan processes the tests start (src/spec/yaml_reader.cpp).
  setenv("KVPLAN_CHECK_FIELDS", "1", 1);
  // No test reaches the Hub or reads the user's Hugging Face cache: the tests
  // that resolve through them set a fake Hub on 127.0.0.1 and a temp cache.
  setenv("HF_HUB_OFFLINE", "1", 1);
  setenv("HF_HUB_CACHE", "/nonexistent/kvplan-tests/hub", 1);
  unsetenv("HF_TOKEN");
  setenv("HF_TOKEN_PATH", "/nonexistent/kvplan-tests/token", 1);
  return doctest::Context(argc, argv).run();
}
