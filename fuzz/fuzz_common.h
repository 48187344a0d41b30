// Shared pieces of the libFuzzer harnesses (docs/reliability.md).
//
// Contract under test: a reader given any bytes either returns a value or
// throws kvplan::Error. Anything else — another exception (it escapes and
// aborts), a crash, a sanitizer report, a leak, a timeout — is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/error.h"

namespace kvplan::fuzz {

/// The fuzzer's bytes as a string.
inline std::string AsText(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// A property that must hold for every accepted input; aborts (a finding) otherwise.
inline void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "kvplan fuzz: property violated: %s\n", what);
    std::abort();
  }
}

/// An Error message must be one non-empty line (main() prints it as one line).
inline void CheckMessage(const Error& e) {
  std::string m = e.what();
  Require(!m.empty(), "error message is empty");
  Require(m.find('\n') == std::string::npos, "error message spans several lines");
}

}  // namespace kvplan::fuzz
