// The subcommands, one file each. main.cpp registers them in this order.
#pragma once

#include "cli/common.h"

namespace kvplan {

void SetupSizeCommand(CLI::App& app, int& exit_code);
void SetupModelsCommand(CLI::App& app, int& exit_code);
void SetupCapacityCommand(CLI::App& app, int& exit_code);
void SetupGpusCommand(CLI::App& app, int& exit_code);
void SetupImportHfCommand(CLI::App& app, int& exit_code);
void SetupCheckCommand(CLI::App& app, int& exit_code);
void SetupBenchCommand(CLI::App& app, int& exit_code);
void SetupDemoCommand(CLI::App& app, int& exit_code);
void SetupLatencyCommand(CLI::App& app, int& exit_code);
void SetupTradeoffCommand(CLI::App& app, int& exit_code);
void SetupCompareCommand(CLI::App& app, int& exit_code);
void SetupPagingCommand(CLI::App& app, int& exit_code);
void SetupFleetCommand(CLI::App& app, int& exit_code);

inline constexpr CommandSetup kCommands[] = {
    SetupSizeCommand,     SetupModelsCommand,  SetupGpusCommand,   SetupCapacityCommand,
    SetupTradeoffCommand, SetupCompareCommand, SetupPagingCommand, SetupLatencyCommand,
    SetupFleetCommand,    SetupBenchCommand,   SetupDemoCommand,   SetupCheckCommand,
    SetupImportHfCommand,
};

}  // namespace kvplan
