// Writing output files the safe way: never over an existing file unless
// asked, and never a half-written file (write a temporary file in the same
// directory, then rename it into place, which is atomic on POSIX).
#pragma once

#include <string>

namespace kvplan {

/// Writes `text` to `path` atomically. Throws Error when `path` exists and
/// !force ("<path>: file exists (use --force to overwrite)") or on I/O errors.
void WriteFileAtomic(const std::string& path, const std::string& text, bool force);

}  // namespace kvplan
