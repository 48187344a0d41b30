// vLLM's CUDA-graph flags: which batch sizes it captures and whether graphs
// are off, from --compilation-config/-cc (a JSON object or dotted keys),
// -O/--optimization-level, --cudagraph-capture-sizes (and the older
// --cuda-graph-sizes) and --max-cudagraph-capture-size. vLLM captures its
// graphs up to the largest batch size, and from 0.21 takes their memory out
// of the cache's budget, so these flags change the plan.
#include <algorithm>
#include <cctype>

#include "import/vllm_args.h"
#include "import/vllm_args_internal.h"
#include "spec/json_syntax.h"
#include "spec/yaml_reader.h"
#include "util/error.h"

namespace kvplan {
namespace {

// A list of CUDA-graph batch sizes, as vLLM takes them:
// `--cudagraph-capture-sizes 1 2 4 8`, `-cc.cudagraph_capture_sizes '[1,2,4,8]'`.
std::vector<uint64_t> SizeList(const std::vector<std::string>& words, const std::string& what,
                               bool words_are_flag_values) {
  std::vector<uint64_t> sizes;
  for (const std::string& word : words) {
    std::string item;
    for (char c : word + ",") {
      if (c == '[' || c == ']' || c == ',' || c == ' ') {
        if (!item.empty()) sizes.push_back(GraphSize(item, what, words_are_flag_values));
        item.clear();
      } else {
        item += c;
      }
    }
  }
  if (sizes.empty()) Fail("{}: needs at least one batch size", what);
  return sizes;
}

bool IsCompilationConfig(const std::string& name) {
  return name == "--compilation-config" || name == "-cc";
}
bool IsOptimizationLevel(const std::string& name) {
  return name == "-O" || name == "--optimization-level";
}
bool IsSizeList(const std::string& name) {
  return name == "--cudagraph-capture-sizes" || name == "--cuda-graph-sizes";
}

void SetList(GraphSizes& g, std::vector<uint64_t> sizes, const std::string& by) {
  if (g.listed && g.listed_by != by) {
    Fail("--vllm-args: {} and {} both list the CUDA-graph sizes (vLLM refuses both)", g.listed_by,
         by);
  }
  g.listed = std::move(sizes);
  g.listed_by = by;
}

// `key` (dashes or underscores) of the compilation config set to `value`:
// false where it is not one kvplan reads.
bool SetCompilationKey(std::string key, const std::string& value, GraphSizes& g,
                       const std::string& what) {
  std::replace(key.begin(), key.end(), '-', '_');
  if (key == "max_cudagraph_capture_size") {
    SetMax(g, GraphSize(value, what, false), "the compilation config's max_cudagraph_capture_size");
    return true;
  }
  if (key == "cudagraph_capture_sizes") {
    SetList(g, SizeList({value}, what, false), "cudagraph_capture_sizes");
    return true;
  }
  if (key == "cudagraph_mode") {
    g.mode_none = CudagraphMode(value, what) == "NONE";
    return true;
  }
  return false;
}

// A JSON object given to --compilation-config: its graph keys read, the
// names of the others added to `ignored`.
void ReadCompilationJson(const std::string& value, GraphSizes& g, const std::string& flag,
                         std::vector<std::string>& ignored) {
  const std::string what = "--vllm-args: " + flag;
  // vLLM parses it as JSON (pydantic): what YAML would also accept
  // (a trailing comma, single quotes) stops vLLM at startup.
  CheckJsonSyntax(value, what);
  const YAML::Node root = ParseYaml(value, what);
  if (!root.IsMap()) Fail("{}: expected a JSON object", what);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const std::string at = what + " " + key;
    if (kv.second.IsNull()) continue;  // vLLM's default
    if (key == "cudagraph_capture_sizes" && kv.second.IsSequence()) {
      std::vector<std::string> items;
      for (const auto& item : kv.second) items.push_back(item.Scalar());
      SetList(g, SizeList(items, at, false), "cudagraph_capture_sizes");
    } else if (key == "max_cudagraph_capture_size" || key == "cudagraph_capture_sizes" ||
               key == "cudagraph_mode") {
      if (!kv.second.IsScalar()) {
        Fail("{}: expected {}", at, key == "cudagraph_mode" ? "a mode such as NONE" : "a number");
      }
      SetCompilationKey(key, kv.second.Scalar(), g, at);
    } else {
      ignored.push_back(flag + " " + Redacted(key));
    }
  }
}

}  // namespace

// One CUDA-graph batch size: a plain positive integer, as vLLM's int takes
// it; `in_list`: the word came from a list flag, which takes every word up
// to the next flag (so a model written after one lands here).
uint64_t GraphSize(const std::string& item, const std::string& what, bool in_list) {
  if (item.empty() || item.size() > 9 ||
      item.find_first_not_of("0123456789") != std::string::npos) {
    Fail("{}: '{}' is not a batch size{}", what, Redacted(item),
         in_list ? " (a list takes every word up to the next flag)" : "");
  }
  const uint64_t n = std::stoull(item);
  if (n == 0) Fail("{}: a graph batch size must be positive, got 0", what);
  return n;
}

// The capture size from `by`: a flag repeated keeps its last value, as
// argparse does; the flag and the compilation config's key both are refused.
void SetMax(GraphSizes& g, uint64_t size, const std::string& by) {
  if (g.max_capture_size && g.max_by != by) {
    Fail("--vllm-args: {} and {} both set the largest CUDA-graph batch: give it once", g.max_by,
         by);
  }
  g.max_capture_size = size;
  g.max_by = by;
}

std::string CudagraphMode(std::string_view mode, std::string_view what) {
  std::string upper(mode);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* m : {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"}) {
    if (upper == m) return upper;
  }
  Fail("{}: expected NONE, PIECEWISE, FULL, FULL_DECODE_ONLY or FULL_AND_PIECEWISE, got '{}'", what,
       mode);
}

bool IsGraphFlag(const std::string& name) {
  const std::string base = name.substr(0, name.find('.'));
  return IsSizeList(name) || IsCompilationConfig(base) || IsOptimizationLevel(base);
}

void ReadGraphFlag(const std::vector<std::string>& w, size_t& i, const std::string& name,
                   const std::string& shown, bool has_value, const std::string& value,
                   GraphSizes& graphs, std::vector<std::string>& ignored) {
  const size_t dot = name.find('.');
  std::vector<std::string> values;
  if (has_value) values.push_back(value);
  while (i + 1 < w.size() && !w[i + 1].starts_with("-") && (values.empty() || IsSizeList(name))) {
    values.push_back(w[++i]);
  }
  if (values.empty()) Fail("--vllm-args: {} needs a value", shown);
  const std::string what = "--vllm-args: " + shown;
  const std::string& v = values.front();
  if (IsSizeList(name)) {
    SetList(graphs, SizeList(values, what, true), name);
  } else if (dot != std::string::npos) {
    if (!SetCompilationKey(name.substr(dot + 1), v, graphs, what)) {
      ignored.push_back(shown + " ...");
    }
  } else if (v.starts_with("{")) {
    // A JSON object (older vLLM took one after -O too).
    ReadCompilationJson(v, graphs, shown, ignored);
  } else if (v.size() == 1 && v[0] >= '0' && v[0] <= '3') {
    // An optimization level; from vLLM 0.12 level 0 captures no graphs.
    if (v == "0") {
      graphs.level0 = true;
      graphs.level0_by = shown + " 0";
    } else {
      ignored.push_back(shown + " ...");
    }
  } else {
    Fail("{}: '{}' is neither an optimization level (0-3) nor a JSON object", what, Redacted(v));
  }
}

void ApplyGraphSizes(const GraphSizes& graphs, DeployConfig& d) {
  // Graphs off: cudagraph_mode NONE, or level 0 where no mode is given.
  // Otherwise the capture size and the list go on as given: whether they
  // agree depends on max_num_batched_tokens (ResolveEngineConfig).
  if (graphs.mode_none.value_or(graphs.level0)) {
    d.args.enforce_eager = true;
    d.args.names["enforce_eager"] = graphs.mode_none ? "cudagraph_mode NONE" : graphs.level0_by;
  } else {
    if (graphs.max_capture_size) d.args.cuda_graph_max_bs = graphs.max_capture_size;
    if (graphs.listed) d.args.cuda_graph_sizes = *graphs.listed;
    if (graphs.max_capture_size || graphs.listed) {
      d.args.names["cuda_graph_max_bs"] =
          graphs.max_capture_size ? "max_cudagraph_capture_size" : graphs.listed_by;
    }
  }
}

}  // namespace kvplan
