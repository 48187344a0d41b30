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

// CheckShapeBeforeParse's scan: where it is in YAML's grammar, as far as
// the parser's recursion and node count depend on it, one byte at a time.
class ShapeScan {
 public:
  ShapeScan(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  void Run() {
    for (size_t i = 0; i < text_.size(); ++i) {
      const char c = text_[i];
      ++column_;
      if (c == '\n') {
        EndLine();
        continue;
      }
      if (at_line_start_) {
        const Step step = LineStart(i, c);
        if (step == Step::kStop) break;
        if (step == Step::kNext) continue;
      }
      if (Skipped(i, c)) continue;
      Token(i, c);
    }
  }

 private:
  enum class Step { kNext, kStop, kOn };

  void CountValue() {
    if (++values_ > YamlLimits::kMaxNodes) {
      Fail("{}:{}:{}: more than {} values (lines and flow items) in one file", file_, line_,
           column_, YamlLimits::kMaxNodes);
    }
  }

  bool BlankAt(size_t i) const {
    return i >= text_.size() || text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' ||
           text_[i] == '\r';
  }

  bool FlowPunctuationAt(size_t i) const {
    return flow_ > 0 && i < text_.size() && std::strchr(",[]{}", text_[i]) != nullptr;
  }

  void EndLine() {
    if (line_has_content_) CountValue();
    ++line_;
    column_ = 0;
    in_comment_ = false;
    if (flow_ == 0) {
      // Quoted scalars may span lines; in block context the scan ends
      // them at the line's end, which can only count more brackets.
      in_single_ = in_double_ = false;
      node_start_ = true;
      json_like_ = false;
    }
    at_line_start_ = true;
    line_has_content_ = false;
    indent_ = 0;
    indicator_column_ = -1;
  }

  // The start of a line: a block scalar's text, the indentation ("- " and
  // "? " count), a tab in it, a "---".
  Step LineStart(size_t& i, char c) {
    // The lines of a block scalar are text: skipped while indented past
    // its parent (the first one fixes the content indentation) or blank.
    if (block_parent_ >= 0) {
      const size_t end = std::min(text_.find('\n', i), text_.size());
      const size_t first = text_.find_first_not_of(' ', i);
      const bool blank = first >= end || text_.find_first_not_of(" \t\r", i) >= end;
      const int spaces = static_cast<int>(std::min(first, end) - i);
      if (block_content_ < 0 && !blank && spaces > block_parent_) block_content_ = spaces;
      if (blank || (block_content_ >= 0 && spaces >= block_content_)) {
        i = end - 1;  // the '\n' (or the last byte) comes next
        column_ = 0;
        at_line_start_ = true;
        return end == text_.size() ? Step::kStop : Step::kNext;
      }
      block_parent_ = block_content_ = -1;
    }
    // YAML indents with spaces only; yaml-cpp's own message for a tab is cryptic.
    if (c == '\t' && flow_ == 0 &&
        text_.find_first_not_of(' ', i + 1 - static_cast<size_t>(column_)) == i) {
      const size_t next = text_.find_first_not_of(" \t", i);
      if (next != std::string::npos && text_[next] != '\n' && text_[next] != '\r' &&
          text_[next] != '#') {
        Fail("{}:{}:{}: a tab in the indentation (YAML indents with spaces)", file_, line_,
             column_);
      }
    }
    // "- " and "? " are indicators; "-x" and "?x" start plain scalars.
    const bool indicator = (c == '-' || c == '?') && BlankAt(i + 1);
    if (c == ' ' || c == '\t' || indicator) {
      if (indicator) indicator_column_ = column_ - 1;
      if (++indent_ > 8 * YamlLimits::kMaxDepth) {
        Fail("{}:{}:{}: indentation deeper than {} columns (nesting limit {})", file_, line_,
             column_, 8 * YamlLimits::kMaxDepth, YamlLimits::kMaxDepth);
      }
      return Step::kNext;
    }
    at_line_start_ = false;
    // "---" starts a document, whose root node may follow on the line.
    if (flow_ == 0 && column_ == 1 && text_.compare(i, 3, "---") == 0 && BlankAt(i + 3)) {
      i += 2;
      column_ += 2;
      return Step::kNext;
    }
    return Step::kOn;
  }

  // True where `c` is inside a comment or quoted scalar, or white space: no
  // token of its own.
  bool Skipped(size_t& i, char c) {
    if (in_comment_) return true;
    if (in_double_) {
      if (c == '\\' && i + 1 < text_.size() && text_[i + 1] != '\n') {
        ++i;  // an escape; a '\' before a line break only joins the lines
        ++column_;
      } else if (c == '"') {
        in_double_ = false;
        json_like_ = true;
      }
      return true;
    }
    if (in_single_) {
      if (c == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
        ++i;  // '' is a quote inside the scalar
        ++column_;
      } else if (c == '\'') {
        in_single_ = false;
        json_like_ = true;
      }
      return true;
    }
    if (c == ' ' || c == '\t' || c == '\r') return true;  // white space keeps the state
    if (c == '#' &&
        (i == 0 || text_[i - 1] == ' ' || text_[i - 1] == '\t' || text_[i - 1] == '\n')) {
      in_comment_ = true;
      return true;
    }
    return false;
  }

  // A byte of content: quotes, brackets, indicators, anchors, tags and
  // block scalar headers move the state; anything else is a plain scalar's.
  void Token(size_t& i, char c) {
    line_has_content_ = true;
    const bool was_start = node_start_;
    const bool was_json = json_like_;
    node_start_ = false;
    json_like_ = false;
    if ((c == '"' || c == '\'') && was_start) {
      (c == '"' ? in_double_ : in_single_) = true;
    } else if ((c == '[' || c == '{') && (flow_ > 0 || was_start)) {
      // In flow context a bracket always opens a collection (yaml-cpp ends
      // a plain scalar there); in block context only where a node starts.
      CountValue();
      if (++flow_ > YamlLimits::kMaxDepth) {
        Fail("{}:{}:{}: nesting deeper than {} levels", file_, line_, column_,
             YamlLimits::kMaxDepth);
      }
      node_start_ = true;
    } else if ((c == ']' || c == '}') && flow_ > 0) {
      --flow_;
      json_like_ = true;
    } else if (c == ',' && flow_ > 0) {
      CountValue();
      node_start_ = true;
    } else if (c == ':' && (BlankAt(i + 1) || was_json || FlowPunctuationAt(i + 1))) {
      node_start_ = true;  // a value indicator
    } else if ((c == '?' || c == '-') && was_start && BlankAt(i + 1)) {
      node_start_ = true;  // a key or entry indicator inside a line: "{? a: b}"
    } else if ((c == '&' || c == '!') && was_start) {
      // An anchor or tag: its name runs to white space, and a node follows.
      while (i + 1 < text_.size() && !BlankAt(i + 1) && !FlowPunctuationAt(i + 1)) {
        ++i;
        ++column_;
      }
      node_start_ = true;
    } else if ((c == '|' || c == '>') && was_start && flow_ == 0) {
      // A block scalar: its header ends the line; the lines after it that are
      // indented past its parent (the key, or the last "- ") are its text.
      block_parent_ = indicator_column_ >= 0 && indicator_column_ + 2 == column_ - 1
                          ? indicator_column_
                          : indent_;
      const size_t end = std::min(text_.find('\n', i), text_.size());
      column_ += static_cast<int>(end - i) - 1;
      i = end - 1;
    }
  }

  const std::string& text_;
  const std::string& file_;
  int flow_ = 0;  // open flow collections ([ or {)
  int line_ = 1, column_ = 0;
  bool in_single_ = false, in_double_ = false, in_comment_ = false;
  // Whether a node may start here: at the start of a block line (after its
  // indentation, "- " and "? "), after [ { , in flow, after a ':' value
  // indicator and after an anchor or tag. Only there does a quote open a
  // quoted scalar or a bracket a flow collection (block context); elsewhere
  // they are characters of a plain scalar (a:'x and x 'y are plain).
  bool node_start_ = true;
  // The last token was a quoted scalar or a closed flow collection, after
  // which ':' is a value indicator even with no space ({"a":"b"}).
  bool json_like_ = false;
  bool at_line_start_ = true, line_has_content_ = false;
  int indent_ = 0;          // this line's indentation, counting "- " and "? "
  int block_parent_ = -1;   // >= 0: in a block scalar (| or >) whose parent is at this column
  int block_content_ = -1;  // the block scalar's content indentation, once its first line is seen
  int indicator_column_ = -1;  // the column of the last "- " or "? " in this line's indentation
  size_t values_ = 0;
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
  ShapeScan(text, file).Run();
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
  return LoneCrToLf(ReadInputFile(path, max_bytes));
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
