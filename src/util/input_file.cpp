#include "util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "util/error.h"

namespace kvplan {

namespace {

// What a file type is called in a refusal.
const char* KindName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// Throws unless `st` is a file kvplan reads at `path`.
void CheckKind(const std::string& path, const struct stat& st, bool folder_ok) {
  if (S_ISREG(st.st_mode)) return;
  if (S_ISDIR(st.st_mode)) {
    if (folder_ok) return;
    Fail("{}: is a directory, not a file", path);
  }
  if (IsOpenDescriptorPath(path) && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) return;
  Fail("{}: is {}, not a regular file", path, KindName(st.st_mode));
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool IsOpenDescriptorPath(const std::string& path) {
  if (path == "/dev/stdin") return true;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p(prefix);
    if (path.size() > p.size() && path.compare(0, p.size(), p) == 0) {
      return AllDigits(path.substr(p.size()));
    }
  }
  return false;
}

void CheckInputPath(const std::string& path, bool folder_ok) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // open(2) says why
  CheckKind(path, st, folder_ok);
}

int OpenInputFile(const std::string& path) {
  CheckInputPath(path);
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) Fail("{}: cannot open file: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    Fail("{}: cannot open file: {}", path, std::strerror(err));
  }
  try {
    CheckKind(path, st, false);
  } catch (...) {
    ::close(fd);
    throw;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

std::string ReadAllBounded(int fd, const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
      static_cast<uint64_t>(st.st_size) > max_bytes) {
    Fail("{}: file is {} bytes, over the {} byte limit for input files", path,
         static_cast<uint64_t>(st.st_size), max_bytes);
  }
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      Fail("{}: cannot read file: {}", path, std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      Fail("{}: more than {} bytes, the limit for input files", path, max_bytes);
    }
  }
  return text;
}

std::string ReadInputFile(const std::string& path, size_t max_bytes) {
  const int fd = OpenInputFile(path);
  try {
    std::string text = ReadAllBounded(fd, path, max_bytes);
    ::close(fd);
    return text;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

InputFile::InputFile(const std::string& path) : path_(path), fd_(OpenInputFile(path)) {
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    size_ = static_cast<uint64_t>(st.st_size);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::ReadAt(uint64_t offset, uint64_t n, char* out) const {
  while (n > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, uint64_t{1} << 30));
    const ssize_t got = ::pread(fd_, out, want, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      Fail("{}: byte {}: cannot read: {}", path_, offset, std::strerror(errno));
    }
    if (got == 0) Fail("{}: byte {}: the file ends there (truncated?)", path_, offset);
    out += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<uint64_t>(got);
  }
}

}  // namespace kvplan
