#include "cli/common.h"

#include <cerrno>
#include <cstdio>

#include "plan/capacity.h"
#include "report/terminal.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace kvplan {

CLI::Option* AddFormatOption(CLI::App* sub, std::string& value, std::vector<std::string> choices) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
  return sub->add_option("--format", value, "Output format: " + list)
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

Format ToFormat(const std::string& value) {
  if (value == "json") return Format::kJson;
  if (value == "csv") return Format::kCsv;
  return Format::kText;
}

const CacheDtype& ResolveCacheDtype(const ModelSpec& model, const std::string& requested) {
  if (requested.empty() || requested == "auto") {
    // As `capacity` resolves it for its default engine (vLLM).
    return FindCacheDtype(ResolvedCacheDtype(model, EngineConfig{}));
  }
  return FindCacheDtype(requested);
}

size_t OutputWidth() {
  static const size_t width = TerminalWidth();
  return width;
}

namespace {
int print_errno = 0;
}  // namespace

void Print(const std::string& text) {
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() && print_errno == 0) {
    print_errno = errno != 0 ? errno : EIO;
  }
}

void FlushOutput() {
  errno = 0;
  if (std::fflush(stdout) != 0 && print_errno == 0) print_errno = errno != 0 ? errno : EIO;
}

int PrintErrno() {
  return print_errno;
}

Json CurveJson(const std::vector<BandwidthPoint>& curve) {
  Json out = Json::MakeArray();
  for (const BandwidthPoint& p : curve) {
    Json c;
    c.Set("bytes", p.bytes);
    c.Set("gbps", p.gbps);
    c.Set("group", p.group);
    c.Set("batch", p.batch);
    out.Push(std::move(c));
  }
  return out;
}

Json BenchShapeJson(const kernels::BenchShape& s) {
  Json j;
  j.Set("label", s.Label());
  j.Set("dtype", kernels::KvDtypeName(s.dtype));
  j.Set("context", s.context);
  j.Set("batch", s.batch);
  j.Set("kv_heads", s.kv_heads);
  j.Set("q_heads", s.kv_heads * s.group);
  j.Set("group", s.group);
  j.Set("head_dim", s.head_dim);
  j.Set("layout", s.block_tokens > 0 ? "paged" : "contiguous");
  if (s.block_tokens > 0) j.Set("block_tokens", s.block_tokens);
  return j;
}

void CheckOutputPath(const std::string& path, bool force) {
  CheckOutputFile(path, force);
}

}  // namespace kvplan
