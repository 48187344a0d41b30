// Opening an input path for reading without ever hanging or reading what is
// no file: a named FIFO would block open(2) until a writer comes (forever
// in CI), a socket or device is no config. One rule for every reader.
#pragma once

#include <cstddef>
#include <cstdint>
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

/// The whole of a small input file: OpenInputFile, then ReadAllBounded.
std::string ReadInputFile(const std::string& path, size_t max_bytes);

/// An input file opened by OpenInputFile and closed when it goes, read at
/// offsets: the readers that skip through big files (GGUF, safetensors)
/// read their headers without reading the weights.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  /// The size when opened (fstat), in bytes.
  uint64_t size() const { return size_; }
  /// Reads exactly `n` bytes from `offset` into `out`, or throws Error
  /// "<path>: byte <offset>: ..." (a read error or the file's end).
  void ReadAt(uint64_t offset, uint64_t n, char* out) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace kvplan
