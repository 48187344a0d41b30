// Opening an input path for reading without ever hanging or reading what is
// no file: a named FIFO would block open(2) until a writer comes (forever
// in CI), a socket or device is no config. One rule for every reader.
#pragma once

#include <cstddef>
#include <string>

namespace kvplan {

/// True for the paths that name a descriptor this process already holds
/// (`-` is not one): /dev/stdin, /dev/fd/N, /proc/self/fd/N. A pipe or
/// terminal is accepted there (`--requests <(zcat trace.gz)`), since the
/// shell opened it before kvplan started and reading it cannot wait for a
/// writer that never comes.
bool IsOpenDescriptorPath(const std::string& path);

/// Throws Error ("<path>: is a FIFO (named pipe), not a regular file", ...)
/// unless `path` leads (through links) to a regular file, or a folder when
/// `folder_ok`, or is an open descriptor path. Missing or unreadable paths
/// pass: opening them says why.
void CheckInputPath(const std::string& path, bool folder_ok = false);

/// Opens `path` for reading: CheckInputPath first, then open(2) with
/// O_NONBLOCK (a FIFO swapped in since the check cannot block the open)
/// and fstat(2) of what was opened, refused again unless it is a regular
/// file or an open descriptor path. Returns the descriptor (blocking again);
/// the caller closes it. Throws Error "<path>: cannot open file: <why>".
int OpenInputFile(const std::string& path);

/// Reads all of `fd` (a regular file from its size; a pipe to its end),
/// at most `max_bytes`, naming `path` in errors. Does not close `fd`.
std::string ReadAllBounded(int fd, const std::string& path, size_t max_bytes);

}  // namespace kvplan
