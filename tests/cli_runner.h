// Runs the real kvplan executable for golden and error-text tests.
#pragma once

#include <string>

namespace kvplan::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// The COLUMNS the CLI tests run kvplan with: wide enough that no text is
/// wrapped or table narrowed, so goldens hold the whole lines.
inline constexpr int kGoldenColumns = 1000;

/// Runs `kvplan <args>` (args are passed to /bin/sh, so quote as in a shell)
/// from `cwd` (default: a fresh temporary directory) and captures its output.
/// `env` prefixes the command (default: COLUMNS=kGoldenColumns; "" runs
/// without COLUMNS, as a pipe to a file would).
CliResult RunKvplan(const std::string& args, const std::string& cwd = "",
                    const std::string& env = "COLUMNS=" + std::to_string(kGoldenColumns));

/// Checks that `r` is an error: exit status 2, nothing on stdout, and
/// exactly `kvplan: error: <line>` on stderr.
void CheckOneLineError(const CliResult& r, const std::string& line);

/// As RunKvplan, but stdout goes to `stdout_path` (e.g. /dev/full); out is empty.
CliResult RunKvplanInto(const std::string& args, const std::string& stdout_path);

/// A fresh empty temporary directory, removed at process exit.
std::string TempDir();

/// Writes `text` to `dir/name` and returns the path.
std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text);

/// Reads a whole file ("" when missing).
std::string ReadFile(const std::string& path);

/// The number of lines in `text` (a final line without '\n' counts).
int LineCount(const std::string& text);

/// Path of a file in the source tree, e.g. SourcePath("models/gpt2.yaml").
std::string SourcePath(const std::string& rel);

/// The CPU's vendor_id as /proc/cpuinfo gives it ("AuthenticAMD",
/// "GenuineIntel"), read independently of the code under test; "" where
/// there is none (not Linux, or no such line).
std::string CpuVendorId();

}  // namespace kvplan::test
