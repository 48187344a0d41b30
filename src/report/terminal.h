// Text that fits the terminal: the width to fit (COLUMNS, or the terminal
// stdout is, or 100), and word-wrapping of notes and sentences to it.
// Renderers take the width as a parameter; the CLI reads it once.
#pragma once

#include <cstddef>
#include <string>

namespace kvplan {

/// The width text output wraps to when nothing says otherwise: stdout is a
/// file or a pipe, and COLUMNS is unset.
inline constexpr size_t kDefaultWidth = 100;

/// The narrowest width honoured: below it, lines of a table's essential
/// columns cannot fit anyway, and wrapping words to a few columns helps no one.
inline constexpr size_t kMinWidth = 40;

/// The width to fit: COLUMNS when it is a positive number, else the
/// terminal's columns (TIOCGWINSZ) when stdout is a terminal, else
/// kDefaultWidth; never below kMinWidth.
size_t TerminalWidth();

/// `columns` (COLUMNS' text, or nullptr when unset) and `tty_columns` (the
/// terminal's width, 0 when stdout is no terminal) turned into the width to
/// fit, as TerminalWidth does.
size_t WidthFrom(const char* columns, size_t tty_columns);

/// One line (no '\n') broken at spaces so that no piece is wider than
/// `width` (a word longer than that stays whole, on a line of its own).
/// Continuation lines start with `hang`. Leading spaces of `line` stay.
/// Each piece ends in '\n'.
std::string WrapLine(const std::string& line, size_t width, const std::string& hang);

/// Every line of `text` wrapped as WrapLine does, each continuation indented
/// as its line plus `extra_indent` spaces. Lines that fit are unchanged.
std::string WrapText(const std::string& text, size_t width, size_t extra_indent = 2);

}  // namespace kvplan
