#include "api/labels.h"

#include <catch2/catch.hpp>

namespace lahar {
namespace {

NodeSelectorRequirement Req(std::string key, std::string op, std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

TEST_CASE("a label selector needs every matchLabels pair and every expression") {
  const StringMap labels = {{"job-name", "bert"}, {"role", "worker"}};
  CHECK(MatchesLabelSelector(LabelSelector{}, labels));  // empty: selects everything
  CHECK(MatchesLabelSelector(LabelSelector{{{"job-name", "bert"}}, {}}, labels));
  CHECK_FALSE(MatchesLabelSelector(LabelSelector{{{"job-name", "gpt"}}, {}}, labels));
  CHECK(MatchesLabelSelector(LabelSelector{{{"job-name", "bert"}}, {Req("role", "In", {"worker", "ps"})}}, labels));
  CHECK_FALSE(MatchesLabelSelector(LabelSelector{{{"job-name", "bert"}}, {Req("role", "NotIn", {"worker"})}}, labels));
  CHECK(MatchesLabelSelector(LabelSelector{{}, {Req("role", "Exists"), Req("tier", "DoesNotExist")}}, labels));
  CHECK_FALSE(MatchesLabelSelector(LabelSelector{{}, {Req("role", "Exists"), Req("job-name", "DoesNotExist")}}, labels));
}

TEST_CASE("matchLabels: every pair present with its value") {
  CHECK(MatchesLabels({}, {{"a", "1"}}));
  CHECK(MatchesLabels({{"a", "1"}}, {{"a", "1"}, {"b", "2"}}));
  CHECK_FALSE(MatchesLabels({{"a", "1"}}, {{"a", "2"}}));
  CHECK_FALSE(MatchesLabels({{"c", "1"}}, {{"a", "1"}}));
}

}  // namespace
}  // namespace lahar
