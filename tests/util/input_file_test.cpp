#include "util/input_file.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "cli_runner.h"
#include "util/error.h"

using namespace kvplan;

TEST_CASE("OpenInputFile: regular files and open descriptors only, never a wait") {
  const std::string dir = kvplan::test::TempDir();
  const std::string file = kvplan::test::WriteFile(dir, "a.yaml", "x: 1\n");
  const int fd = OpenInputFile(file);
  REQUIRE(fd >= 0);
  CHECK(ReadAllBounded(fd, file, 100) == "x: 1\n");
  close(fd);
  const int again = OpenInputFile(file);
  CHECK_THROWS_WITH(ReadAllBounded(again, file, 3),
                    (file + ": file is 5 bytes, over the 3 byte limit for input files").c_str());
  close(again);

  const std::string fifo = dir + "/p.yaml";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(OpenInputFile(fifo),
                    (fifo + ": is a FIFO (named pipe), not a regular file").c_str());
  CHECK_THROWS_WITH(CheckInputPath(fifo, true),
                    (fifo + ": is a FIFO (named pipe), not a regular file").c_str());
  CHECK_THROWS_WITH(OpenInputFile("/dev/null"),
                    "/dev/null: is a character device, not a regular file");
  CHECK_THROWS_WITH(OpenInputFile(dir), (dir + ": is a directory, not a file").c_str());
  CHECK_NOTHROW(CheckInputPath(dir, true));
  CHECK_THROWS_WITH(OpenInputFile(dir + "/none"),
                    (dir + "/none: cannot open file: No such file or directory").c_str());

  // A pipe this process holds, named as the shell names one.
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  REQUIRE(write(fds[1], "abc", 3) == 3);
  close(fds[1]);
  const std::string name = "/dev/fd/" + std::to_string(fds[0]);
  const int p = OpenInputFile(name);
  CHECK(ReadAllBounded(p, name, 2 + 1) == "abc");
  close(p);
  close(fds[0]);
  CHECK(IsOpenDescriptorPath("/dev/stdin"));
  CHECK(IsOpenDescriptorPath("/proc/self/fd/0"));
  CHECK_FALSE(IsOpenDescriptorPath("/dev/fd/"));
  CHECK_FALSE(IsOpenDescriptorPath("/dev/fd/0/../x"));
  CHECK_FALSE(IsOpenDescriptorPath("/tmp/fifo"));
}

TEST_CASE("InputFile: reads at offsets, names the byte where the file ends") {
  const std::string dir = kvplan::test::TempDir();
  const std::string file = kvplan::test::WriteFile(dir, "w.bin", "0123456789");
  const InputFile in(file);
  CHECK(in.size() == 10);
  char buf[4] = {};
  in.ReadAt(6, 4, buf);
  CHECK(std::string(buf, 4) == "6789");
  in.ReadAt(0, 0, buf);  // nothing to read is no error
  CHECK_THROWS_WITH(in.ReadAt(8, 4, buf),
                    (file + ": byte 10: the file ends there (truncated?)").c_str());
  CHECK(ReadInputFile(file, 10) == "0123456789");
  CHECK_THROWS_WITH(ReadInputFile(file, 9),
                    (file + ": file is 10 bytes, over the 9 byte limit for input files").c_str());
  const std::string fifo = dir + "/p.gguf";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(InputFile{fifo},
                    (fifo + ": is a FIFO (named pipe), not a regular file").c_str());
  CHECK_THROWS_WITH(ReadInputFile(fifo, 100),
                    (fifo + ": is a FIFO (named pipe), not a regular file").c_str());
}
