#include "import/hub_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "import/hf_cache.h"
#include "util/error.h"
#include "util/input_file.h"

namespace kvplan {
namespace {

constexpr uint64_t kMaxConfigBytes = 16u << 20;  // a config.json is a few KiB
constexpr uint64_t kMaxIndexBytes = 64u << 20;   // an index is a few MiB at most
constexpr uint64_t kMaxHeaderBytes = 100000000;  // the safetensors format's limit
constexpr size_t kMaxShards = 4096;              // far above any published checkpoint

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string ToLower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One request's answer: the final status, the body, and the X-Repo-Commit
// header seen anywhere along the redirect chain.
struct Answer {
  long status = 0;
  std::string body;
  std::string repo_commit;
  uint64_t limit = 0;  // the most body bytes of a 2xx answer accepted
  CURL* curl = nullptr;
  bool too_big = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<Answer*>(user);
  const size_t bytes = size * n;
  // An error page (a 404's JSON) may be longer than a range answer; it is
  // read only to be dropped, up to 64 KiB.
  long status = 0;
  curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
  const uint64_t limit = status >= 200 && status < 300 ? a->limit : uint64_t{65536};
  if (a->body.size() + bytes > limit) {
    a->too_big = true;
    return 0;  // aborts the transfer: never more than asked for
  }
  a->body.append(data, bytes);
  return bytes;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* a = static_cast<Answer*>(user);
  const size_t bytes = size * n;
  std::string line(data, bytes);
  const size_t colon = line.find(':');
  if (colon != std::string::npos && ToLower(line.substr(0, colon)) == "x-repo-commit") {
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t\r\n") + 1);
    if (IsCommitHash(v)) a->repo_commit = v;
  }
  return bytes;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// One libcurl handle for every request of a fetch (one connection, reused).
class Http {
 public:
  explicit Http(const HubSettings& s) : settings_(s) {
    static const bool init = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    if (!init) Fail("libcurl failed to start");
    curl_.reset(curl_easy_init());
    if (!curl_) Fail("libcurl failed to start");
    curl_slist* h = curl_slist_append(nullptr, "User-Agent: kvplan");
    if (s.token) h = curl_slist_append(h, ("Authorization: Bearer " + *s.token).c_str());
    headers_.reset(h);
  }

  // GET `url` (bytes `range` when given, "first-last"); at most `limit` bytes.
  Answer Get(const std::string& url, uint64_t limit, const std::string& range = "") {
    Answer a;
    a.limit = limit;
    CURL* c = curl_.get();
    a.curl = c;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers_.get());
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, std::min(settings_.timeout_s, 15L));
    curl_easy_setopt(c, CURLOPT_TIMEOUT, settings_.timeout_s);
    // A stalled server: under 1 byte/s for this long ends the request.
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, std::min(settings_.timeout_s, 20L));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
    if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
    const CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.status);
    if (rc != CURLE_OK) Failed(url, rc, a);
    return a;
  }

 private:
  [[noreturn]] void Failed(const std::string& url, CURLcode rc, const Answer& a) {
    switch (rc) {
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_COULDNT_CONNECT:
        throw HubUnreachable(
            fmt::format("{}: cannot reach the Hub: {}", url, curl_easy_strerror(rc)));
      case CURLE_OPERATION_TIMEDOUT:
        Fail(
            "{}: no complete answer within {} s (a stalled server or network; "
            "KVPLAN_HUB_TIMEOUT sets the limit)",
            url, settings_.timeout_s);
      case CURLE_PARTIAL_FILE:
        Fail("{}: the answer was cut short after {} bytes (nothing was stored)", url,
             a.body.size());
      case CURLE_TOO_MANY_REDIRECTS:
        Fail("{}: more than 5 redirects", url);
      case CURLE_WRITE_ERROR:
        if (a.too_big) {
          Fail("{}: the answer is over the {} bytes expected (kvplan never downloads weights)", url,
               a.limit);
        }
        [[fallthrough]];
      default:
        Fail("{}: {}", url, curl_easy_strerror(rc));
    }
  }

  const HubSettings& settings_;
  std::unique_ptr<CURL, CurlDeleter> curl_;
  std::unique_ptr<curl_slist, SlistDeleter> headers_;
};

// The error for an answer other than 200/206.
[[noreturn]] void RefusedBy(const HubSettings& s, std::string_view repo, const std::string& url,
                            long status) {
  if (status == 401 || status == 403) {
    if (s.token) {
      Fail(
          "{}: the Hub answered {} with the token from {}: it has no access to this repo "
          "(accept the repo's terms on its Hub page, or use a token that has)",
          repo, status, s.token_from);
    }
    Fail(
        "{}: the Hub answered {} (a gated or private repo): accept its terms on its Hub page, "
        "then set HF_TOKEN or run `huggingface-cli login`",
        repo, status);
  }
  if (status == 404) {
    Fail("{}: not found on the Hub ({}): check the repo id and --revision", repo, url);
  }
  Fail("{}: the Hub answered HTTP {}", url, status);
}

std::string ReadSmallFile(const std::string& path, uint64_t limit) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > limit) Fail("{}: over {} bytes, not a token file", path, limit);
  return ReadInputFile(path, limit);
}

// The headers of each shard, as "<file>.header": 8 length bytes + JSON.
void FetchHeaders(Http& http, const std::string& base, const std::vector<std::string>& shards,
                  HubFiles& out) {
  for (const std::string& shard : shards) {
    const std::string url = base + shard;
    Answer len = http.Get(url, 8, "0-7");
    if (len.status != 206) {
      Fail("{}: the server answered {} to a range request (kvplan never downloads weights)", url,
           len.status);
    }
    const uint64_t n = ParseSafetensorsHeaderLength(len.body, url);
    Answer json = http.Get(url, n, fmt::format("8-{}", 8 + n - 1));
    if (json.status != 206 || json.body.size() != n) {
      Fail("{}: the header's range answer holds {} of {} bytes", url, json.body.size(), n);
    }
    CheckSafetensorsHeaderJson(json.body, url);
    out.files.emplace_back(shard + ".header", len.body + json.body);
  }
}

}  // namespace

bool EnvFlagTrue(std::string_view value) {
  const std::string v = ToLower(std::string(value));
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

std::string HfTokenPath() {
  namespace fs = std::filesystem;
  if (std::string v = Env("HF_TOKEN_PATH"); !v.empty()) return v;
  if (std::string v = Env("HF_HOME"); !v.empty()) return (fs::path(v) / "token").string();
  if (std::string v = Env("XDG_CACHE_HOME"); !v.empty()) {
    return (fs::path(v) / "huggingface" / "token").string();
  }
  if (std::string home = Env("HOME"); !home.empty()) {
    return (fs::path(home) / ".cache" / "huggingface" / "token").string();
  }
  return "";
}

std::optional<std::string> ParseTokenText(std::string_view text, const std::string& file) {
  auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  const bool printable = std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (!printable || text.size() > 1024) {
    Fail("{}: not a Hugging Face token (one word of printable ASCII, at most 1024 bytes)", file);
  }
  return std::string(text);
}

HubSettings HubSettingsFromEnv() {
  HubSettings s;
  if (std::string e = Env("HF_ENDPOINT"); !e.empty()) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    if (!e.starts_with("http://") && !e.starts_with("https://")) {
      Fail("HF_ENDPOINT: '{}' is not an http:// or https:// address", e);
    }
    s.endpoint = e;
  }
  s.offline = EnvFlagTrue(Env("HF_HUB_OFFLINE"));
  if (std::string t = Env("HF_TOKEN"); !t.empty()) {
    s.token = ParseTokenText(t, "HF_TOKEN");
    s.token_from = "HF_TOKEN";
  } else {
    const std::string path = HfTokenPath();
    std::error_code ec;
    if (!path.empty() && std::filesystem::is_regular_file(path, ec)) {
      s.token = ParseTokenText(ReadSmallFile(path, 4096), path);
      s.token_from = path;
    }
  }
  if (std::string t = Env("KVPLAN_HUB_TIMEOUT"); !t.empty()) {
    char* end = nullptr;
    const long v = std::strtol(t.c_str(), &end, 10);
    if (end == t.c_str() || *end != '\0' || v < 1 || v > 3600) {
      Fail("KVPLAN_HUB_TIMEOUT: '{}' is not a number of seconds from 1 to 3600", t);
    }
    s.timeout_s = v;
  }
  return s;
}

std::vector<std::string> ParseSafetensorsIndexShards(std::string_view body,
                                                     const std::string& what) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) Fail("{}: not a JSON object", what);
  auto map = j.find("weight_map");
  if (map == j.end() || !map->is_object()) Fail("{}: weight_map: missing or not an object", what);
  std::vector<std::string> shards;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string()) Fail("{}: weight_map: {}: expected a file name", what, tensor);
    const std::string& f = file.get_ref<const std::string&>();
    if (!f.ends_with(".safetensors") || f.find('/') != std::string::npos || f.starts_with(".")) {
      Fail("{}: weight_map: {}: '{}' is not a .safetensors file of the repo", what, tensor, f);
    }
    if (std::find(shards.begin(), shards.end(), f) == shards.end()) {
      if (shards.size() == kMaxShards) Fail("{}: weight_map: over {} files", what, kMaxShards);
      shards.push_back(f);
    }
  }
  if (shards.empty()) Fail("{}: weight_map: empty", what);
  return shards;
}

uint64_t ParseSafetensorsHeaderLength(std::string_view bytes, const std::string& what) {
  if (bytes.size() != 8) Fail("{}: expected 8 header-length bytes, got {}", what, bytes.size());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n < 2 || n > kMaxHeaderBytes) {
    Fail("{}: header length {} is outside the safetensors format's 2..{} bytes", what, n,
         kMaxHeaderBytes);
  }
  return n;
}

void CheckSafetensorsHeaderJson(std::string_view json, const std::string& what) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    Fail("{}: the safetensors header is not a JSON object", what);
}

std::string ParseRevisionSha(std::string_view body, const std::string& what) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object()) {
    auto sha = j.find("sha");
    if (sha != j.end() && sha->is_string() && IsCommitHash(sha->get_ref<const std::string&>())) {
      return sha->get<std::string>();
    }
  }
  Fail("{}: the answer names no commit (\"sha\")", what);
}

HubFiles FetchFromHub(const HubSettings& s, std::string_view repo, std::string_view revision) {
  if (s.offline) Fail("{}: the Hub is off (HF_HUB_OFFLINE is set)", repo);
  Http http(s);
  HubFiles out;
  const std::string rev(revision);
  const std::string config_url = fmt::format("{}/{}/resolve/{}/config.json", s.endpoint, repo, rev);
  Answer config = http.Get(config_url, kMaxConfigBytes);
  if (config.status != 200) RefusedBy(s, repo, config_url, config.status);
  if (!nlohmann::json::accept(config.body)) Fail("{}: not a JSON document", config_url);
  out.commit = IsCommitHash(rev) ? rev : config.repo_commit;
  if (out.commit.empty()) {
    const std::string api = fmt::format("{}/api/models/{}/revision/{}", s.endpoint, repo, rev);
    Answer info = http.Get(api, kMaxConfigBytes);
    if (info.status != 200) RefusedBy(s, repo, api, info.status);
    out.commit = ParseRevisionSha(info.body, api);
  }
  const std::string base = fmt::format("{}/{}/resolve/{}/", s.endpoint, repo, out.commit);
  std::vector<std::string> shards;
  Answer index = http.Get(base + "model.safetensors.index.json", kMaxIndexBytes);
  if (index.status == 200) {
    shards = ParseSafetensorsIndexShards(index.body, base + "model.safetensors.index.json");
    out.files.emplace_back("model.safetensors.index.json", index.body);
  } else if (index.status == 404) {
    shards = {"model.safetensors"};
    // One unsharded file, or none (a .bin or GGUF-only repo): probe it.
    Answer probe = http.Get(base + "model.safetensors", 8, "0-7");
    if (probe.status == 404) {
      shards.clear();
      out.notes.push_back(fmt::format(
          "{} has no safetensors files; the weights are counted from the architecture", repo));
    } else if (probe.status != 206) {
      RefusedBy(s, repo, base + "model.safetensors", probe.status);
    }
  } else {
    RefusedBy(s, repo, base + "model.safetensors.index.json", index.status);
  }
  FetchHeaders(http, base, shards, out);
  out.files.emplace_back("config.json", config.body);
  return out;
}

}  // namespace kvplan
