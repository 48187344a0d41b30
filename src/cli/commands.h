// The subcommands, one file each. main.cpp registers them in this order.
#pragma once

#include "cli/common.h"

namespace kvplan {

void SetupSizeCommand(CLI::App& app, int& exit_code);
void SetupModelsCommand(CLI::App& app, int& exit_code);
void SetupCapacityCommand(CLI::App& app, int& exit_code);
void SetupGpusCommand(CLI::App& app, int& exit_code);
void SetupImportHfCommand(CLI::App& app, int& exit_code);

inline constexpr CommandSetup kCommands[] = {
    SetupSizeCommand,
    SetupModelsCommand,
    SetupCapacityCommand,
    SetupGpusCommand,
    SetupImportHfCommand,
};

}  // namespace kvplan
