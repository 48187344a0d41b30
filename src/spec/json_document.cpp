// JsonDocument (spec/json_syntax.h): the parsed JSON value, built from
// VisitJson's events, with the offset of every value by its JSON pointer.
#include <memory>
#include <string>
#include <vector>

#include "spec/json_syntax.h"

namespace kvplan {
namespace {

using ojson = nlohmann::ordered_json;

// Builds a JsonDocument.
class DocumentBuilder : public JsonVisitor {
 public:
  explicit DocumentBuilder(JsonDocument& doc) : doc_(doc) {}

  void Key(const std::string& key, size_t, size_t, int) override { key_ = key; }
  void Scalar(ojson value, size_t begin, size_t, int) override {
    std::string path;
    Place(begin, path) = std::move(value);
  }
  // A container stays on the stack, with its path, until it closes.
  void Open(bool object, size_t begin, int) override {
    std::string path;
    ojson& slot = Place(begin, path);
    slot = object ? ojson::object() : ojson::array();
    stack_.push_back(&slot);
    paths_.push_back(path);
  }
  void Close(size_t, int) override {
    stack_.pop_back();
    paths_.pop_back();
  }

 private:
  static std::string Escaped(const std::string& key) {
    std::string out;
    for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return out;
  }
  // The slot of the value that starts at `begin`, its offset recorded
  // under its path (`path`).
  ojson& Place(size_t begin, std::string& path) {
    ojson* slot = &doc_.root;
    if (!stack_.empty()) {
      ojson& parent = *stack_.back();
      if (parent.is_object()) {
        path = paths_.back() + "/" + Escaped(key_);
        slot = &parent[key_];
      } else {
        path = paths_.back() + "/" + std::to_string(parent.size());
        parent.push_back(nullptr);
        slot = &parent.back();
      }
    }
    doc_.offsets[path] = begin;
    return *slot;
  }

  JsonDocument& doc_;
  std::vector<ojson*> stack_;
  std::vector<std::string> paths_;
  std::string key_;
};

}  // namespace

JsonDocument ParseJsonDocument(std::string_view text, const JsonOptions& options) {
  JsonDocument doc;
  // A document parsed again (a Python constant stood in for) starts afresh.
  class Fresh : public JsonVisitor {
   public:
    explicit Fresh(JsonDocument& d) : d_(d), b_(std::make_unique<DocumentBuilder>(d)) {}
    void Key(const std::string& k, size_t b, size_t e, int depth) override {
      b_->Key(k, b, e, depth);
    }
    void Scalar(ojson v, size_t b, size_t e, int depth) override {
      Restart(depth);
      b_->Scalar(std::move(v), b, e, depth);
    }
    void Open(bool o, size_t b, int depth) override {
      Restart(depth);
      b_->Open(o, b, depth);
    }
    void Close(size_t e, int depth) override { b_->Close(e, depth); }

   private:
    void Restart(int depth) {
      if (depth != 0) return;
      d_ = JsonDocument{};
      b_ = std::make_unique<DocumentBuilder>(d_);
    }
    JsonDocument& d_;
    std::unique_ptr<DocumentBuilder> b_;
  } visitor(doc);
  VisitJson(text, visitor, options);
  return doc;
}

}  // namespace kvplan
