// Writing output files the safe way: never over an existing file unless
// asked, and never a half-written file (write a temporary file in the same
// directory, then rename it into place, which is atomic on POSIX).
#pragma once

#include <string>

namespace kvplan {

/// Throws Error unless `path` can be written by WriteFileAtomic: not a
/// directory; not existing unless `force`; when it exists, a regular file
/// (a symbolic link, dangling or not, a device such as /dev/full, a FIFO or
/// a socket is refused even with --force); its folder exists and is a
/// writable folder. Every command with an output flag calls it before any
/// work, so nothing is computed or measured only to fail at the end.
void CheckOutputFile(const std::string& path, bool force);

/// Writes `text` to `path` atomically (after CheckOutputFile), through a
/// temporary file named `.kvplan-XXXXXX` in the same folder, so any name
/// that fits the folder fits the temporary too (a 255-byte name plus a
/// suffix would not). A failed write (a full disk, `ulimit -f`: main
/// ignores SIGXFSZ so it fails as EFBIG) removes the temporary file. Throws Error when `path`
/// exists and !force ("<path>: file exists (use --force to overwrite)") or on I/O errors.
void WriteFileAtomic(const std::string& path, const std::string& text, bool force);

}  // namespace kvplan
