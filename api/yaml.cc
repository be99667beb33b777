#include "api/yaml.h"

#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "yaml-cpp/eventhandler.h"

namespace lahar {

namespace {

// yaml-cpp 0.7's LoadAll never returns when a document starts with a token no node can start
// with ("," or "&a ,"): the parser reports the same empty document forever, allocating as it
// goes (jbeder/yaml-cpp#1040, fixed upstream by #1319). A first pass that only watches where
// documents start finds that stall; every real document consumes at least one token.
class DocumentStallDetector : public YAML::EventHandler {
 public:
  bool stalled() const { return stalled_; }
  const YAML::Mark& mark() const { return last_start_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    stalled_ = started_ && mark.pos == last_start_.pos;
    started_ = true;
    last_start_ = mark;
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

 private:
  bool started_ = false;
  bool stalled_ = false;
  YAML::Mark last_start_;
};

absl::Status YamlSyntaxError(const YAML::Mark& mark, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("YAML syntax error at line ", mark.line + 1,
                                           ", column ", mark.column + 1, ": ", what));
}

}  // namespace

absl::StatusOr<std::vector<YAML::Node>> ParseYamlDocuments(std::string_view text) {
  std::string copy(text);
  try {
    std::istringstream in(copy);
    YAML::Parser parser(in);
    DocumentStallDetector detector;
    while (parser.HandleNextDocument(detector)) {
      if (detector.stalled()) return YamlSyntaxError(detector.mark(), "unexpected token");
    }
    return YAML::LoadAll(copy);
  } catch (const YAML::Exception& e) {
    return YamlSyntaxError(e.mark, e.msg);
  }
}

namespace {

// Aliases turn a YAML tree into a graph: "&a [*a]" is a cycle, and a few lines of nested
// aliases expand to billions of nodes. Conversion therefore bounds its depth and the number of
// nodes it emits; real Kubernetes objects stay far below both.
constexpr int kMaxYamlDepth = 512;

struct YamlBudget {
  int64_t nodes_left;
};

absl::Status ConvertYaml(const YAML::Node& node, rapidjson::Value& out,
                         rapidjson::Document::AllocatorType& allocator, int depth,
                         YamlBudget& budget) {
  if (depth > kMaxYamlDepth || --budget.nodes_left < 0) {
    return absl::InvalidArgumentError(
        "YAML nests too deeply or expands too far through aliases (a recursive anchor?)");
  }
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      out.SetObject();
      for (const auto& kv : node) {
        rapidjson::Value key, value;
        const std::string& k = kv.first.Scalar();
        key.SetString(k.data(), static_cast<rapidjson::SizeType>(k.size()), allocator);
        RETURN_IF_ERROR(ConvertYaml(kv.second, value, allocator, depth + 1, budget));
        out.AddMember(key, value, allocator);
      }
      return absl::OkStatus();
    }
    case YAML::NodeType::Sequence: {
      out.SetArray();
      for (const auto& item : node) {
        rapidjson::Value value;
        RETURN_IF_ERROR(ConvertYaml(item, value, allocator, depth + 1, budget));
        out.PushBack(value, allocator);
      }
      return absl::OkStatus();
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      bool quoted = node.Tag() == "!";
      int64_t i;
      if (!quoted) {
        if (s == "true" || s == "True") {
          out.SetBool(true);
          return absl::OkStatus();
        }
        if (s == "false" || s == "False") {
          out.SetBool(false);
          return absl::OkStatus();
        }
        if (s == "null" || s == "~" || s == "Null") {
          out.SetNull();
          return absl::OkStatus();
        }
        if (absl::SimpleAtoi(s, &i) && s.find_first_of("+") == std::string::npos) {
          out.SetInt64(i);
          return absl::OkStatus();
        }
      }
      out.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), allocator);
      return absl::OkStatus();
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out.SetNull();
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

// The void signature cannot report a recursive alias: conversion stops at the bounds and leaves
// a partial value. DecodeObjectStream uses ConvertYaml and reports the error instead.
void YamlToJson(const YAML::Node& node, rapidjson::Value& out,
                rapidjson::Document::AllocatorType& allocator) {
  YamlBudget budget{int64_t{1} << 26};
  ConvertYaml(node, out, allocator, 0, budget).IgnoreError();
}

absl::Status ConvertYamlToJson(const YAML::Node& node, rapidjson::Value& out,
                               rapidjson::Document::AllocatorType& allocator, int64_t& nodes_left) {
  YamlBudget budget{nodes_left};
  absl::Status status = ConvertYaml(node, out, allocator, 0, budget);
  nodes_left = budget.nodes_left;
  return status;
}

}  // namespace lahar
