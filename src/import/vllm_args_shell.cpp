// The launcher around vLLM's own arguments: splitting the line into shell
// words, and skipping what comes before `vllm serve`'s flags (environment
// assignments, `env`/`sudo`/`uv run`, `docker run ... vllm/vllm-openai`,
// `python -m module`) while reading the environment variables that change
// what kvplan models.
#include <string_view>

#include "import/deploy_config_reader.h"
#include "import/vllm_args.h"
#include "import/vllm_args_internal.h"
#include "util/error.h"

namespace kvplan {
namespace {

// True for the vLLM image: [registry/]vllm/vllm-openai[-rocm][:tag|@digest].
bool IsVllmImage(const std::string& word) {
  constexpr std::string_view kImage = "vllm/vllm-openai";
  // A path (a mount, -v /srv/vllm/vllm-openai:/cache) is no image.
  if (word.empty() || word[0] == '/' || word[0] == '.' || word[0] == '~') return false;
  const size_t at = word.find(kImage);
  if (at == std::string::npos || (at != 0 && word[at - 1] != '/')) return false;
  size_t end = at + kImage.size();
  if (word.compare(end, 5, "-rocm") == 0) end += 5;  // vLLM's ROCm build, same entrypoint
  return end == word.size() || word[end] == ':' || word[end] == '@';
}

}  // namespace

std::string Redacted(const std::string& word) {
  const size_t eq = word.find('=');
  return eq == std::string::npos ? word : word.substr(0, eq) + "=...";
}

std::vector<std::string> ShellSplit(std::string_view line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\\') {
      if (i + 1 < line.size() && line[i + 1] == '\n') {
        ++i;  // line continuation
        continue;
      }
      if (i + 1 < line.size()) cur += line[++i];
      in_word = true;
    } else if (c == '\'') {
      size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) {
        Fail("--vllm-args: unterminated ' quote starting at column {}", i + 1);
      }
      cur += line.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '"') {
      size_t start = i;
      bool closed = false;
      for (++i; i < line.size(); ++i) {
        if (line[i] == '"') {
          closed = true;
          break;
        }
        if (line[i] == '\\' && i + 1 < line.size() &&
            std::string_view("\"\\$`\n").find(line[i + 1]) != std::string_view::npos) {
          if (line[i + 1] != '\n') cur += line[i + 1];
          ++i;
          continue;
        }
        cur += line[i];
      }
      if (!closed) Fail("--vllm-args: unterminated \" quote starting at column {}", start + 1);
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

size_t SkipLauncher(const std::vector<std::string>& w, DeployConfig& d,
                    std::vector<std::string>& ignored) {
  // Skip the launcher: env assignments, `vllm serve`, `python -m module`.
  // One assignment changes the budget: whether vLLM subtracts its CUDA-graph
  // estimate (envs.py reads it as bool(int(value))).
  // Another lets max_model_len pass the model's own limit (envs.py: "1" or
  // "true", any case). The rest are named in the notes as ignored.
  const auto env = [&](const std::string& assignment) {
    const size_t eq = assignment.find('=');
    const std::string name = assignment.substr(0, eq);
    // The name only when ignored: values are often secrets (HF_TOKEN) and
    // land in CI logs. `docker -e NAME` passes the host's value, unknown here.
    if (eq == std::string::npos || !ApplyVllmEnv(name, assignment.substr(eq + 1), name, d)) {
      ignored.push_back(Redacted(assignment));
    }
  };
  size_t i = 0;
  // Launchers before the command: `env [NAME=VALUE...]`, `sudo`, `nohup`,
  // `exec`, `time`, `uv run`; environment assignments anywhere among them.
  for (; i < w.size(); ++i) {
    if (w[i].find('=') != std::string::npos && w[i][0] != '-') {
      env(w[i]);
    } else if (w[i] == "uv" && i + 1 < w.size() && w[i + 1] == "run") {
      ++i;
    } else if (w[i] != "env" && w[i] != "sudo" && w[i] != "-E" && w[i] != "nohup" &&
               w[i] != "exec" && w[i] != "time") {
      break;
    }
  }
  // `docker run [docker options] vllm/vllm-openai[:tag] ARGS`: the image's
  // entrypoint is the API server, so ARGS are vLLM's; docker's -e/--env
  // assignments are the server's environment. Docker's other options are
  // not vLLM's and are skipped.
  if (i < w.size() && (w[i] == "docker" || w[i] == "podman" || w[i].ends_with("/docker"))) {
    size_t image = i + 1;
    while (image < w.size() && !IsVllmImage(w[image])) ++image;
    if (image == w.size()) {
      Fail(
          "--vllm-args: a {} command without the vllm/vllm-openai image: give the arguments "
          "after the image, or `vllm serve MODEL ...`",
          w[i]);
    }
    for (size_t k = i + 1; k < image; ++k) {
      if ((w[k] == "-e" || w[k] == "--env") && k + 1 < image) {
        env(w[++k]);
      } else if (w[k].starts_with("--env=") || (w[k].starts_with("-e") && w[k].size() > 2)) {
        env(w[k].substr(w[k][1] == 'e' ? 2 : 6));
      }
    }
    i = image + 1;
  }
  if (i < w.size() && (w[i] == "vllm" || w[i].ends_with("/vllm"))) {
    ++i;
    if (i < w.size() && w[i] == "serve") ++i;
  } else if (i < w.size() &&
             (w[i].rfind("python", 0) == 0 || w[i].find("/python") != std::string::npos)) {
    ++i;
    if (i + 1 < w.size() && w[i] == "-m") i += 2;
  }
  return i;
}

}  // namespace kvplan
