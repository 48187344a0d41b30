// Parsing one YAML (or JSON) document safely: reading the file, refusing
// what is not UTF-8 text, and enforcing YamlLimits before and after yaml-cpp
// parses it (depth, node count with aliases, scalar length, one document,
// duplicate keys). Reading the fields of a parsed map is yaml_map_reader.cpp.
#include "spec/yaml_reader.h"

#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "spec/yaml_reader_internal.h"
#include "util/input_file.h"

namespace kvplan {

size_t FirstNonUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    auto b = static_cast<unsigned char>(text[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    bool ok = n != 0 && i + n <= text.size();
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1fu) : n == 3 ? (b & 0x0fu) : (b & 0x07u);
    for (size_t k = 1; ok && k < n; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      ok = (c >> 6) == 0x2;
      cp = (cp << 6) | (c & 0x3fu);
    }
    if (ok && n > 1) {
      ok = (n == 2 && cp >= 0x80) || (n == 3 && cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff)) ||
           (n == 4 && cp >= 0x10000 && cp <= 0x10ffff);
    }
    if (!ok) return i;
    i += n;
  }
  return std::string_view::npos;
}

namespace {

// The state of CheckShapeBeforeParse's scan: where it is in YAML's
// grammar, as far as the parser's recursion and node count depend on it.
struct ShapeScan {
  int flow = 0;  // open flow collections ([ or {)
  int line = 1, column = 0;
  bool in_single = false, in_double = false, in_comment = false;
  // Whether a node may start here: at the start of a block line (after its
  // indentation, "- " and "? "), after [ { , in flow, after a ':' value
  // indicator and after an anchor or tag. Only there does a quote open a
  // quoted scalar or a bracket a flow collection (block context); elsewhere
  // they are characters of a plain scalar (a:'x and x 'y are plain).
  bool node_start = true;
  // The last token was a quoted scalar or a closed flow collection, after
  // which ':' is a value indicator even with no space ({"a":"b"}).
  bool json_like = false;
  bool at_line_start = true, line_has_content = false;
  int indent = 0;             // this line's indentation, counting "- " and "? "
  int block_parent = -1;      // >= 0: in a block scalar (| or >) whose parent is at this column
  int block_content = -1;     // the block scalar's content indentation, once its first line is seen
  int indicator_column = -1;  // the column of the last "- " or "? " in this line's indentation
  size_t values = 0;
};

// Rejects input that would make the parser go too deep or build too many
// nodes, before parsing (yaml-cpp needs ~1 s per 100k nodes): flow brackets
// nested past the limit, block indentation so deep that no real spec needs
// it, or more lines and flow items than YamlLimits::kMaxNodes. It follows
// YAML's rules for comments (after white space), quoted scalars (only where
// a node starts), plain scalars (a quote inside one is text) and block
// scalars (their lines are text), so that it sees the brackets the parser
// sees and no quote can hide them from it.
void CheckShapeBeforeParse(const std::string& text, const std::string& file) {
  ShapeScan st;
  auto count_value = [&] {
    if (++st.values > YamlLimits::kMaxNodes) {
      Fail("{}:{}:{}: more than {} values (lines and flow items) in one file", file, st.line,
           st.column, YamlLimits::kMaxNodes);
    }
  };
  auto blank_at = [&](size_t i) {
    return i >= text.size() || text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
           text[i] == '\r';
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++st.column;
    if (c == '\n') {
      if (st.line_has_content) count_value();
      ++st.line;
      st.column = 0;
      st.in_comment = false;
      if (st.flow == 0) {
        // Quoted scalars may span lines; in block context the scan ends
        // them at the line's end, which can only count more brackets.
        st.in_single = st.in_double = false;
        st.node_start = true;
        st.json_like = false;
      }
      st.at_line_start = true;
      st.line_has_content = false;
      st.indent = 0;
      st.indicator_column = -1;
      continue;
    }
    if (st.at_line_start) {
      // The lines of a block scalar are text: skipped while indented past
      // its parent (the first one fixes the content indentation) or blank.
      if (st.block_parent >= 0) {
        const size_t end = std::min(text.find('\n', i), text.size());
        const size_t first = text.find_first_not_of(' ', i);
        const bool blank = first >= end || text.find_first_not_of(" \t\r", i) >= end;
        const int spaces = static_cast<int>(std::min(first, end) - i);
        if (st.block_content < 0 && !blank && spaces > st.block_parent) {
          st.block_content = spaces;
        }
        if (blank || (st.block_content >= 0 && spaces >= st.block_content)) {
          i = end - 1;  // the '\n' (or the last byte) comes next
          st.column = 0;
          st.at_line_start = true;
          if (end == text.size()) break;
          continue;
        }
        st.block_parent = st.block_content = -1;
      }
      // YAML indents with spaces only; yaml-cpp's own message for a tab is cryptic.
      if (c == '\t' && st.flow == 0 &&
          text.find_first_not_of(' ', i + 1 - static_cast<size_t>(st.column)) == i) {
        size_t next = text.find_first_not_of(" \t", i);
        if (next != std::string::npos && text[next] != '\n' && text[next] != '\r' &&
            text[next] != '#') {
          Fail("{}:{}:{}: a tab in the indentation (YAML indents with spaces)", file, st.line,
               st.column);
        }
      }
      // "- " and "? " are indicators; "-x" and "?x" start plain scalars.
      const bool indicator = (c == '-' || c == '?') && blank_at(i + 1);
      if (c == ' ' || c == '\t' || indicator) {
        if (indicator) st.indicator_column = st.column - 1;
        if (++st.indent > 8 * YamlLimits::kMaxDepth) {
          Fail("{}:{}:{}: indentation deeper than {} columns (nesting limit {})", file, st.line,
               st.column, 8 * YamlLimits::kMaxDepth, YamlLimits::kMaxDepth);
        }
        continue;
      }
      st.at_line_start = false;
      // "---" starts a document, whose root node may follow on the line.
      if (st.flow == 0 && st.column == 1 && text.compare(i, 3, "---") == 0 && blank_at(i + 3)) {
        i += 2;
        st.column += 2;
        continue;
      }
    }
    if (st.in_comment) continue;
    if (st.in_double) {
      if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
        ++i;  // an escape; a '\' before a line break only joins the lines
        ++st.column;
      } else if (c == '"') {
        st.in_double = false;
        st.json_like = true;
      }
      continue;
    }
    if (st.in_single) {
      if (c == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is a quote inside the scalar
        ++st.column;
      } else if (c == '\'') {
        st.in_single = false;
        st.json_like = true;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;  // white space keeps the state
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
      st.in_comment = true;
      continue;
    }
    st.line_has_content = true;
    const bool was_start = st.node_start;
    const bool was_json = st.json_like;
    st.node_start = false;
    st.json_like = false;
    if ((c == '"' || c == '\'') && was_start) {
      (c == '"' ? st.in_double : st.in_single) = true;
    } else if ((c == '[' || c == '{') && (st.flow > 0 || was_start)) {
      // In flow context a bracket always opens a collection (yaml-cpp ends
      // a plain scalar there); in block context only where a node starts.
      count_value();
      if (++st.flow > YamlLimits::kMaxDepth) {
        Fail("{}:{}:{}: nesting deeper than {} levels", file, st.line, st.column,
             YamlLimits::kMaxDepth);
      }
      st.node_start = true;
    } else if ((c == ']' || c == '}') && st.flow > 0) {
      --st.flow;
      st.json_like = true;
    } else if (c == ',' && st.flow > 0) {
      count_value();
      st.node_start = true;
    } else if (c == ':' && (blank_at(i + 1) || was_json ||
                            (st.flow > 0 && i + 1 < text.size() &&
                             std::strchr(",[]{}", text[i + 1]) != nullptr))) {
      st.node_start = true;  // a value indicator
    } else if ((c == '?' || c == '-') && was_start && blank_at(i + 1)) {
      st.node_start = true;  // a key or entry indicator inside a line: "{? a: b}"
    } else if ((c == '&' || c == '!') && was_start) {
      // An anchor or tag: its name runs to white space, and a node follows.
      while (i + 1 < text.size() && !blank_at(i + 1) &&
             !(st.flow > 0 && std::strchr(",[]{}", text[i + 1]) != nullptr)) {
        ++i;
        ++st.column;
      }
      st.node_start = true;
    } else if ((c == '|' || c == '>') && was_start && st.flow == 0) {
      // A block scalar: its header ends the line; the lines after it that are
      // indented past its parent (the key, or the last "- ") are its text.
      st.block_parent = st.indicator_column >= 0 && st.indicator_column + 2 == st.column - 1
                            ? st.indicator_column
                            : st.indent;
      const size_t end = std::min(text.find('\n', i), text.size());
      st.column += static_cast<int>(end - i) - 1;
      i = end - 1;
    }
  }
}

// Rejects bytes that are not UTF-8 (yaml-cpp would silently turn them into
// U+FFFD), naming the line and column of the first bad byte.
void CheckUtf8(const std::string& text, const std::string& file) {
  const size_t bad = FirstNonUtf8(text);
  if (bad == std::string_view::npos) return;
  int line = 1, column = 1;
  for (size_t i = 0; i < bad; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == '\n') {
      ++line;
      column = 1;
    } else if ((b & 0xc0) != 0x80) {
      ++column;  // count characters, not continuation bytes
    }
  }
  Fail("{}:{}:{}: not UTF-8 text (byte 0x{:02x}); save the file as UTF-8", file, line, column,
       static_cast<unsigned char>(text[bad]));
}

// Walks the parsed tree once, enforcing depth, node count and scalar length.
// `visited` counts every node reached, so shared (aliased) subtrees count
// each time they are used.
void CheckTree(const YAML::Node& node, const std::string& file, int depth, size_t& visited) {
  if (depth > YamlLimits::kMaxDepth) {
    Fail("{}nesting deeper than {} levels", PosOf(node, file).Prefix(), YamlLimits::kMaxDepth);
  }
  if (++visited > YamlLimits::kMaxNodes) {
    Fail(
        "{}more than {} values in one file (anchors and aliases count each time they are "
        "used)",
        PosOf(node, file).Prefix(), YamlLimits::kMaxNodes);
  }
  if (node.IsScalar() && node.Scalar().size() > YamlLimits::kMaxScalarBytes) {
    Fail("{}a value of {} bytes, over the {} byte limit", PosOf(node, file).Prefix(),
         node.Scalar().size(), YamlLimits::kMaxScalarBytes);
  }
  if (node.IsMap()) {
    // Duplicate keys are refused in every map, not just those a MapReader
    // reads: yaml-cpp keeps the first, Python's json (transformers) the last.
    std::set<std::string, std::less<>> keys;
    for (const auto& it : node) {
      CheckTree(it.first, file, depth + 1, visited);
      if (it.first.IsScalar() && !keys.insert(it.first.Scalar()).second) {
        Fail("{}{}: duplicate key", PosOf(it.first, file).Prefix(), it.first.Scalar());
      }
      CheckTree(it.second, file, depth + 1, visited);
    }
  } else if (node.IsSequence()) {
    for (const auto& it : node) CheckTree(it, file, depth + 1, visited);
  }
}

// Records where the parser starts a document, and ignores the rest.
struct DocumentStart : YAML::EventHandler {
  bool seen = false;
  YAML::Mark mark;
  void OnDocumentStart(const YAML::Mark& m) override {
    seen = true;
    mark = m;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

namespace {

// A lone CR (classic Mac line endings) is a line break, as YAML says; yaml-cpp
// and the request-mix reader only know LF and CRLF, so it becomes LF here,
// keeping every line and column where it was.
std::string LoneCrToLf(std::string text) {
  for (size_t i = text.find('\r'); i != std::string::npos; i = text.find('\r', i + 1)) {
    if (i + 1 == text.size() || text[i + 1] != '\n') text[i] = '\n';
  }
  return text;
}

}  // namespace

std::string ReadTextFile(const std::string& path, size_t max_bytes) {
  // Only a regular file, or a pipe the shell already opened (/dev/stdin,
  // <(...)): a named FIFO, socket or device is refused before it is opened
  // (util/input_file.h), so no read waits forever or reads without end.
  const int fd = OpenInputFile(path);
  std::string text;
  try {
    text = ReadAllBounded(fd, path, max_bytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return LoneCrToLf(std::move(text));
}

YAML::Node ParseYaml(const std::string& text, const std::string& file) {
  if (text.size() > YamlLimits::kMaxYamlBytes) {
    Fail("{}: {} bytes of YAML, over the {} byte limit for YAML and JSON input", file, text.size(),
         YamlLimits::kMaxYamlBytes);
  }
  if (text.size() >= 2 &&
      ((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff'))) {
    Fail("{}: UTF-16 text; save the file as UTF-8", file);
  }
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    size_t line_start = text.rfind('\n', nul);
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    Fail("{}:{}:{}: a NUL byte (is this a binary file?)", file,
         1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'),
         nul - line_start + 1);
  }
  CheckUtf8(text, file);
  // One byte-order mark may open the file (yaml-cpp skips it); any other
  // U+FEFF would become part of a key or value ("\uFEFFname" is no field).
  const size_t bom = text.find("\xEF\xBB\xBF", text.starts_with("\xEF\xBB\xBF") ? 3 : 0);
  if (bom != std::string::npos) {
    const size_t line_start =
        text.rfind('\n', bom) == std::string::npos ? 0 : text.rfind('\n', bom) + 1;
    Fail(
        "{}:{}:{}: a {}byte-order mark (U+FEFF) inside the text; save the file with at most one, "
        "at its start",
        file, 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bom), '\n'),
        1 + static_cast<size_t>(std::count_if(
                text.begin() + static_cast<std::ptrdiff_t>(line_start),
                text.begin() + static_cast<std::ptrdiff_t>(bom),
                [](char b) { return (static_cast<unsigned char>(b) & 0xc0) != 0x80; })),
        bom == 3 ? "second " : "");
  }
  CheckShapeBeforeParse(text, file);
  YAML::Node root;
  DocumentStart second;
  try {
    root = YAML::Load(text);
    // Anything after the first document is an error, but yaml-cpp 0.7's
    // LoadAll never returns on a stray ',' (found by fuzzing: it loops,
    // allocating). So ask the event parser for at most one more document.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStart first;
    if (parser.HandleNextDocument(first)) parser.HandleNextDocument(second);
  } catch (const YAML::Exception& e) {
    // JSON (an HF config.json) is read as YAML, of which it is a subset.
    const char* what = file.ends_with(".json") ? "malformed JSON" : "malformed YAML";
    if (e.mark.is_null()) Fail("{}: {}: {}", file, what, e.msg);
    Fail("{}:{}:{}: {}: {}", file, e.mark.line + 1, e.mark.column + 1, what, e.msg);
  }
  if (IsAbsent(root)) Fail("{}: empty document", file);
  if (second.seen) {
    Fail(
        "{}:{}:{}: text after the end of the YAML document (a second '---' document, or a "
        "stray ',' or ']'); a file holds exactly one",
        file, second.mark.line + 1, second.mark.column + 1);
  }
  size_t visited = 0;
  CheckTree(root, file, 0, visited);
  return root;
}

SourcePos PosOf(const YAML::Node& node, const std::string& file) {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return SourcePos{file, 0, 0};
  return SourcePos{file, m.line + 1, m.column + 1};
}

}  // namespace kvplan
