// Shared pieces of the subcommands: output formats, token and memory
// options, resolving a model and cache dtype from the command line.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "measure/harness.h"
#include "plan/capacity.h"
#include "report/capacity.h"
#include "report/json.h"
#include "spec/cache_dtype.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

enum class Format { kText, kJson, kCsv };

/// Adds --format text|json|csv (more choices may be allowed) bound to `value`.
CLI::Option* AddFormatOption(CLI::App* sub, std::string& value,
                             std::vector<std::string> choices = {"text", "json", "csv"});

/// "text" -> kText, "json" -> kJson, "csv" -> kCsv.
Format ToFormat(const std::string& value);

/// The cache dtype for `requested` ("auto" or empty: the activations' type
/// as a serving engine runs the checkpoint, ResolvedCacheDtype: an fp32
/// checkpoint in bf16, a quantized one in its 16-bit type).
const CacheDtype& ResolveCacheDtype(const ModelSpec& model, const std::string& requested);

/// The width text output fits (report/terminal.h's TerminalWidth), read
/// once.
size_t OutputWidth();

/// Writes text to stdout.
void Print(const std::string& text);

/// Flushes stdout (as Print, remembering the errno of a failure).
void FlushOutput();

/// The errno of the first failed write to stdout by Print or FlushOutput, 0
/// if none failed.
int PrintErrno();

/// A measured bandwidth curve as JSON: [{bytes, gbps, group, batch}, ...] (bench, CPU and CUDA).
Json CurveJson(const std::vector<BandwidthPoint>& curve);

/// A bench shape as the first fields of a result row in `bench --format
/// json` (CPU and CUDA alike): label, dtype, context, batch, heads, layout.
Json BenchShapeJson(const kernels::BenchShape& s);

/// Throws Error when `path` cannot be written later (util/atomic_file.h's
/// CheckOutputFile: a directory, a missing folder, an existing file without
/// --force, a link or device even with it). Every command with an output
/// flag (-o, --save, --svg) calls it before any reading or measuring.
void CheckOutputPath(const std::string& path, bool force);

/// Registers one subcommand on `app`. The subcommand's callback stores its
/// exit code (0 ok, 1 a check failed) in `exit_code`; errors are thrown.
using CommandSetup = void (*)(CLI::App& app, int& exit_code);

}  // namespace kvplan
