// kvplan import-hf config.json [-o FILE] [--force]: a spec YAML from a
// Hugging Face config, with every assumption written as a comment.
#include "cli/commands.h"
#include "import/hf_import.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace kvplan {
namespace {

struct ImportOptions {
  std::string config;
  std::string output;
  std::string name;
  bool force = false;
};

void Run(const ImportOptions& o) {
  const bool to_file = !o.output.empty() && o.output != "-";
  if (to_file) CheckOutputPath(o.output, o.force);  // before any reading
  HfImport imported = ImportHfConfigFile(o.config, o.name);
  if (!to_file) {
    Print(imported.yaml);
    return;
  }
  WriteFileAtomic(o.output, imported.yaml, o.force);
  WriteStderr("kvplan: " +
              OneLine(fmt::format("wrote {} ({}, {} layers)", o.output, imported.spec.name,
                                  imported.spec.layers)) +
              "\n");
}

}  // namespace

void SetupImportHfCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ImportOptions>();
  std::string archs;
  for (const std::string& a : SupportedHfArchitectures()) archs += "\n  " + a;
  CLI::App* sub = app.add_subcommand(
      "import-hf", "Write a kvplan model spec (YAML) from a Hugging Face config.json");
  sub->add_option("config", o->config, "Path to the model's config.json")->required();
  sub->add_option("-o,--output", o->output, "Write the spec here (default: stdout)");
  sub->add_option("--name", o->name,
                  "Spec name (default: from _name_or_path or the config's folder)");
  sub->add_flag("--force", o->force, "Overwrite the output file if it exists");
  sub->footer(
      "Examples:\n"
      "  kvplan import-hf ./Llama-3.1-8B/config.json -o models/my-llama.yaml\n"
      "  kvplan import-hf config.json --name my-model | less\n"
      "  kvplan size ./Qwen3-8B/config.json -c 32K   (a config.json works as a MODEL "
      "anywhere)\n\n"
      "Supported architectures (others are refused, not guessed):" +
      archs);
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
