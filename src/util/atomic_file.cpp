#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "util/error.h"

namespace kvplan {

void WriteFileAtomic(const std::string& path, const std::string& text, bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(fs::path(path), ec)) Fail("{}: is a directory, not a file", path);
  if (!force && fs::exists(fs::path(path), ec)) {
    Fail("{}: file exists (use --force to overwrite)", path);
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::string tmpl =
      fmt::format("{}/.{}.tmp-XXXXXX", dir.string(), fs::path(path).filename().string());
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) Fail("{}: cannot create a temporary file in {}: {}", path, dir.string(),
                   std::strerror(errno));
  std::string tmp(buf.data());
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      std::remove(tmp.c_str());
      Fail("{}: write failed: {}", path, std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  fchmod(fd, 0644);
  if (close(fd) != 0) {
    std::remove(tmp.c_str());
    Fail("{}: write failed: {}", path, std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    Fail("{}: cannot rename the temporary file into place: {}", path, std::strerror(err));
  }
}

}  // namespace kvplan
