#include "util/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "util/error.h"

namespace kvplan {

namespace {

// The process's umask, read where reading it changes nothing: Linux's
// /proc/self/status "Umask:" line. Setting it to read it back
// (umask(0); umask(old)) would leave a window in which another thread's
// new files are world-writable; that is the fallback only.
mode_t CurrentUmask() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f) != nullptr) {
      found = std::sscanf(line, "Umask: %o", &mask) == 1;
    }
    std::fclose(f);
    if (found) return static_cast<mode_t>(mask & 0777);
  }
  const mode_t mask = umask(0);
  umask(mask);
  return mask;
}

}  // namespace

void CheckOutputFile(const std::string& path, bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) Fail("an empty output file name");
  if (fs::is_directory(fs::path(path), ec)) Fail("{}: is a directory, not a file", path);
  // The name itself, not what a link points to: a dangling symlink exists too.
  const fs::file_status own = fs::symlink_status(fs::path(path), ec);
  if (fs::exists(own)) {
    if (!force) Fail("{}: file exists (use --force to overwrite)", path);
    // Renaming over a symlink would replace the link, not update its target,
    // and over a device (/dev/null) would put a file in its place: kvplan
    // writes regular files only.
    if (!fs::is_regular_file(own)) {
      Fail("{}: is not a regular file ({}); kvplan only writes regular files", path,
           fs::is_symlink(own) ? "a symbolic link" : "a device, pipe or socket");
    }
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) Fail("{}: the folder {} does not exist", path, dir.string());
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    Fail("{}: cannot write in the folder {}: {}", path, dir.string(), std::strerror(errno));
  }
}

void WriteFileAtomic(const std::string& path, const std::string& text, bool force) {
  namespace fs = std::filesystem;
  CheckOutputFile(path, force);
  std::error_code ec;
  const fs::file_status own = fs::symlink_status(fs::path(path), ec);
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::string tmpl = (dir / ".kvplan-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0)
    Fail("{}: cannot create a temporary file in {}: {}", path, dir.string(), std::strerror(errno));
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
  // An overwritten file keeps its permission bits (a 0600 secret stays
  // 0600; set-id bits are not carried onto new content); a new one gets
  // what open(2) would give it: 0666 less the umask (mkstemp makes 0600).
  mode_t mode = 0;
  struct stat st {};
  if (fs::exists(own) && stat(path.c_str(), &st) == 0) {
    mode = st.st_mode & 0777;
  } else {
    mode = 0666 & ~CurrentUmask();
  }
  fchmod(fd, mode);
  // Closed whatever fsync says; the first failure is the one reported.
  int sync_err = fsync(fd) != 0 ? errno : 0;
  if (close(fd) != 0 && sync_err == 0) sync_err = errno;
  if (sync_err != 0) {
    std::remove(tmp.c_str());
    Fail("{}: write failed: {}", path, std::strerror(sync_err));
  }
  // Without --force, the rename itself refuses an existing name, so a file
  // that appeared since the check above is not overwritten either (where the
  // file system cannot, EINVAL, the check above stands alone).
  int rc = force ? -1 : renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && !force && errno == EEXIST) {
    std::remove(tmp.c_str());
    Fail("{}: file exists (use --force to overwrite)", path);
  }
  if (rc != 0 && (force || errno == EINVAL || errno == ENOSYS)) {
    rc = std::rename(tmp.c_str(), path.c_str());
  }
  if (rc != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    Fail("{}: cannot rename the temporary file into place: {}", path, std::strerror(err));
  }
}

}  // namespace kvplan
