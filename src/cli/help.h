// Help screens that fit the terminal: CLI11's help with every line over
// the width wrapped, an option's description under its own column.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>

namespace kvplan {

/// Makes `app` and its subcommands print help wrapped to `width` columns.
void UseWrappingHelp(CLI::App& app, size_t width);

}  // namespace kvplan
