#include "cli/help.h"

#include <memory>
#include <string>

#include "report/table.h"
#include "report/terminal.h"

namespace kvplan {
namespace {

// CLI11's formatter, each line of its help wrapped: a line whose text
// continues past the name column (an option or subcommand and its
// description) continues under the description; any other line under its
// own indent plus two.
class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(size_t width) : width_(width) {}

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    const std::string help = CLI::Formatter::make_help(app, std::move(name), mode);
    const size_t column = get_column_width();
    std::string out;
    size_t start = 0;
    while (start < help.size()) {
      const size_t nl = std::min(help.find('\n', start), help.size());
      const std::string line = help.substr(start, nl - start);
      const size_t lead = std::min(line.find_first_not_of(' '), line.size());
      // An option line: indented, with a space just before the description column.
      const bool described = lead > 0 && line.size() > column && line[column - 1] == ' ' &&
                             line[column] != ' ' && column + 20 < width_;
      std::string wrapped = WrapLine(line, width_, std::string(described ? column : lead + 2, ' '));
      if (nl == help.size()) wrapped.pop_back();
      out += wrapped;
      start = nl + 1;
    }
    return out;
  }

 private:
  size_t width_;
};

}  // namespace

void UseWrappingHelp(CLI::App& app, size_t width) {
  auto formatter = std::make_shared<WrappingFormatter>(width);
  app.formatter(formatter);
  for (CLI::App* sub : app.get_subcommands({})) sub->formatter(formatter);
}

}  // namespace kvplan
