#include "api/resources.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace lahar {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

// Builds a vector from (name, amount) pairs: R({{"cpu", 4000}, {"memory", 16 * kGi}}).
Resources R(std::initializer_list<std::pair<std::string_view, int64_t>> amounts) {
  Resources r;
  for (const auto& [name, amount] : amounts) r.Set(InternResource(name), amount);
  return r;
}

TEST_CASE("well-known resources have fixed ids and units") {
  CHECK(InternResource("cpu") == kCpu);
  CHECK(InternResource("memory") == kMemory);
  CHECK(InternResource("pods") == kPods);
  CHECK(InternResource("ephemeral-storage") == kEphemeralStorage);
  CHECK(InternResource("nvidia.com/gpu") == kNvidiaGpu);
  CHECK(ResourceName(kCpu) == "cpu");
  CHECK(ResourceName(kNvidiaGpu) == "nvidia.com/gpu");
  CHECK(ResourceUnit(kCpu) == QuantityUnit::kMilli);
  CHECK(ResourceUnit(kMemory) == QuantityUnit::kUnit);
  CHECK(ResourceUnit(kPods) == QuantityUnit::kUnit);
  CHECK(ResourceUnit(kNvidiaGpu) == QuantityUnit::kUnit);
  CHECK(ResourceCount() >= 5);
}

TEST_CASE("interning is stable and names are exact") {
  size_t before = ResourceCount();
  ResourceId a = InternResource("resources-test.example.com/fpga");
  CHECK(a >= 5);
  CHECK(ResourceCount() == before + 1);
  CHECK(InternResource("resources-test.example.com/fpga") == a);
  CHECK(ResourceCount() == before + 1);  // a second sight adds nothing
  CHECK(ResourceName(a) == "resources-test.example.com/fpga");
  CHECK(ResourceUnit(a) == QuantityUnit::kUnit);

  ResourceId b = InternResource("resources-test.example.com/FPGA");  // names are case-sensitive
  CHECK(b != a);
  CHECK(b == a + 1);  // ids are handed out densely
  std::string owned = "resources-test.example.com/fpga";
  CHECK(InternResource(std::string_view(owned)) == a);  // no dependence on the caller's storage
  CHECK(ResourceName(static_cast<ResourceId>(ResourceCount() + 10)).rfind("resource#", 0) == 0);
}

TEST_CASE("Get, Set and Add treat missing entries as zero") {
  Resources r;
  CHECK(r.IsZero());
  CHECK(r.size() == 0);
  CHECK(r.Get(kNvidiaGpu) == 0);
  r.Set(kNvidiaGpu, 0);
  CHECK(r.size() == 0);  // setting a zero does not grow the vector
  r.Add(kMemory, 2 * kGi);
  r.Add(kMemory, kGi);
  CHECK(r.Get(kMemory) == 3 * kGi);
  CHECK(r.size() == 2);
  r.Set(kMemory, 0);
  CHECK(r.IsZero());
  CHECK(r == Resources());  // explicit zeros equal missing ones
}

TEST_CASE("addition and subtraction are element-wise over vectors of any length") {
  Resources node = R({{"cpu", 8000}, {"memory", 32 * kGi}});
  Resources pod = R({{"cpu", 1500}, {"nvidia.com/gpu", 1}});
  Resources sum = node + pod;
  CHECK(sum.Get(kCpu) == 9500);
  CHECK(sum.Get(kMemory) == 32 * kGi);
  CHECK(sum.Get(kNvidiaGpu) == 1);
  Resources diff = node - pod;
  CHECK(diff.Get(kCpu) == 6500);
  CHECK(diff.Get(kNvidiaGpu) == -1);
  CHECK(diff.AnyNegative());
  CHECK((sum - pod) == node);
  node += pod;
  CHECK(node == sum);
  node -= pod;
  node -= node;
  CHECK(node.IsZero());
  CHECK_FALSE(node.AnyNegative());
}

TEST_CASE("scaling multiplies every amount: n jobs alike summed at once") {
  Resources lacking = R({{"cpu", 1500}, {"nvidia.com/gpu", 2}});
  Resources summed;
  for (int i = 0; i < 3; ++i) summed += lacking;
  lacking *= 3;
  CHECK(lacking == summed);
  CHECK(lacking.Get(kCpu) == 4500);
  lacking *= 0;
  CHECK(lacking.IsZero());
}

TEST_CASE("equality ignores trailing zeros") {
  Resources a = R({{"cpu", 1000}});
  Resources b = R({{"cpu", 1000}, {"nvidia.com/gpu", 1}});
  b.Set(kNvidiaGpu, 0);
  CHECK(a == b);
  CHECK(b == a);
  CHECK_FALSE(a == R({{"cpu", 1001}}));
  CHECK_FALSE(a == R({{"cpu", 1000}, {"pods", 1}}));
}

TEST_CASE("LessEqual compares every dimension") {
  Resources small = R({{"cpu", 1000}, {"memory", kGi}});
  Resources big = R({{"cpu", 2000}, {"memory", kGi}, {"nvidia.com/gpu", 2}});
  CHECK(small.LessEqual(big));
  CHECK(small.LessEqual(small));
  CHECK_FALSE(big.LessEqual(small));  // gpu 2 > missing 0
  CHECK(Resources().LessEqual(small));
  CHECK_FALSE(small.LessEqual(Resources()));
  // Negative amounts are below a missing (zero) entry, and vice versa.
  Resources debt = R({{"memory", -kGi}});
  CHECK(debt.LessEqual(Resources()));
  CHECK_FALSE(Resources().LessEqual(debt));
}

TEST_CASE("FitsIn only checks the dimensions the request asks for") {
  Resources cpu_node = R({{"cpu", 4000}, {"memory", 16 * kGi}});
  Resources gpu_pod = R({{"cpu", 1000}, {"nvidia.com/gpu", 1}});
  Resources cpu_pod = R({{"cpu", 1000}, {"memory", kGi}});
  CHECK(cpu_pod.FitsIn(cpu_node));
  CHECK_FALSE(gpu_pod.FitsIn(cpu_node));
  CHECK(cpu_node.FitsIn(cpu_node));  // equality fits

  // A node short of something the pod does not request still fits it, unlike LessEqual.
  Resources overcommitted = R({{"cpu", 4000}, {"memory", -kGi}});
  Resources cpu_only = R({{"cpu", 500}});
  CHECK(cpu_only.FitsIn(overcommitted));
  CHECK_FALSE(cpu_only.LessEqual(overcommitted));
  CHECK(Resources().FitsIn(Resources()));
  CHECK(Resources().FitsIn(overcommitted));
  // A zero or negative request asks for nothing.
  CHECK(R({{"cpu", -5}}).FitsIn(Resources()));
  CHECK_FALSE(R({{"cpu", 4001}}).FitsIn(cpu_node));
}

TEST_CASE("FirstShortage names the lowest id that does not fit") {
  Resources node = R({{"cpu", 4000}, {"memory", 8 * kGi}});
  CHECK(R({{"cpu", 1000}}).FirstShortage(node) == -1);
  CHECK(R({{"cpu", 5000}, {"memory", 16 * kGi}}).FirstShortage(node) == kCpu);
  CHECK(R({{"cpu", 1000}, {"memory", 16 * kGi}}).FirstShortage(node) == kMemory);
  CHECK(R({{"nvidia.com/gpu", 1}}).FirstShortage(node) == kNvidiaGpu);
  CHECK(R({{"memory", 8 * kGi + 1}}).FirstShortage(node) == kMemory);
}

TEST_CASE("Max and Min are element-wise with missing entries as zero") {
  Resources a = R({{"cpu", 1000}, {"memory", 4 * kGi}});
  Resources b = R({{"cpu", 2000}, {"memory", kGi}, {"nvidia.com/gpu", 1}});
  Resources max = a.Max(b);
  CHECK(max == R({{"cpu", 2000}, {"memory", 4 * kGi}, {"nvidia.com/gpu", 1}}));
  CHECK(b.Max(a) == max);
  Resources min = a.Min(b);
  CHECK(min == R({{"cpu", 1000}, {"memory", kGi}}));
  CHECK(b.Min(a) == min);

  // Negative amounts against a shorter vector: the missing side counts as zero.
  Resources debt = R({{"memory", -kGi}});
  CHECK(debt.Max(Resources()).IsZero());
  CHECK(Resources().Max(debt).IsZero());
  CHECK(Resources().Min(debt) == debt);
  CHECK(debt.Min(Resources()) == debt);

  // MinWith is Min in place, either way round.
  Resources in_place = a;
  in_place.MinWith(b);
  CHECK(in_place == min);
  in_place = b;
  in_place.MinWith(a);
  CHECK(in_place == min);
  in_place = Resources();
  in_place.MinWith(debt);
  CHECK(in_place == debt);
}

TEST_CASE("ClampNegativeToZero keeps positive amounts") {
  Resources r = R({{"cpu", -500}, {"memory", kGi}, {"nvidia.com/gpu", -1}});
  CHECK(r.AnyNegative());
  r.ClampNegativeToZero();
  CHECK_FALSE(r.AnyNegative());
  CHECK(r == R({{"memory", kGi}}));
}

TEST_CASE("NonZero lists entries in id order and DebugString is readable") {
  Resources r = R({{"nvidia.com/gpu", 1}, {"memory", 16 * kGi}, {"cpu", 4000}, {"pods", 0}});
  std::vector<std::pair<ResourceId, int64_t>> expected = {
      {kCpu, 4000}, {kMemory, 16 * kGi}, {kNvidiaGpu, 1}};
  CHECK(r.NonZero() == expected);
  CHECK(r.DebugString() == "cpu: 4, memory: 16Gi, nvidia.com/gpu: 1");
  CHECK(R({{"cpu", 1500}}).DebugString() == "cpu: 1500m");
  CHECK(Resources().DebugString() == "none");
}

}  // namespace
}  // namespace lahar
