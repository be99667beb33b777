#include "plugins/elastic/goodput.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

namespace lahar {
namespace {

std::vector<ThroughputPoint> Amdahl(double per_pod, double serial, std::vector<int32_t> sizes) {
  std::vector<ThroughputPoint> points;
  for (int32_t n : sizes) points.push_back({n, per_pod * n / (1 + serial * (n - 1))});
  return points;
}

TEST_CASE("the estimator recovers Amdahl-shaped points exactly") {
  for (double serial : {0.0, 0.05, 0.3, 1.0}) {
    CAPTURE(serial);
    ScalingCurve curve = ScalingCurve::Fit(Amdahl(12.5, serial, {1, 2, 4, 5}));
    CHECK(curve.serial_fraction() == Approx(serial).margin(1e-9));
    CHECK(curve.per_pod() == Approx(12.5));
    CHECK(curve.Throughput(8) == Approx(12.5 * 8 / (1 + serial * 7)));
    // The 7th pod adds T(7) - T(6), as a fraction of the throughput per pod at 6.
    const double t6 = 12.5 * 6 / (1 + serial * 5);
    const double t7 = 12.5 * 7 / (1 + serial * 6);
    CHECK(curve.GainOfNext(6) == Approx((t7 - t6) / (t6 / 6)).margin(1e-9));
  }
}

TEST_CASE("one point or none is linear: the next worker is expected to gain 1") {
  ScalingCurve one = ScalingCurve::Fit({{3, 30}});
  CHECK(one.serial_fraction() == 0);
  CHECK(one.per_pod() == Approx(10));
  CHECK(one.GainOfNext(3) == Approx(1.0));
  CHECK(ScalingCurve::Fit({}).GainOfNext(5) == Approx(1.0));
}

TEST_CASE("the estimator stays sane on noisy and non-monotone points") {
  // Noisy but linear-ish: gain near 1, never above the linear 1 nor negative.
  ScalingCurve noisy = ScalingCurve::Fit({{1, 10.3}, {2, 19.6}, {3, 30.4}, {4, 39.2}});
  CHECK(noisy.GainOfNext(4) <= 1.0);
  CHECK(noisy.GainOfNext(4) > 0.8);
  // Throughput that falls with size: the curve is at most flat, the gain at most 0 past the top.
  ScalingCurve falling = ScalingCurve::Fit({{1, 10}, {2, 8}, {3, 5}});
  CHECK(falling.serial_fraction() == 1.0);
  CHECK(falling.GainOfNext(3) == Approx(0).margin(1e-12));
  // Super-linear reports are not extrapolated beyond linear.
  ScalingCurve superlinear = ScalingCurve::Fit({{1, 10}, {2, 25}, {3, 45}});
  CHECK(superlinear.serial_fraction() == 0);
  CHECK(superlinear.GainOfNext(3) == Approx(1.0));
}

TEST_CASE("zero throughput never divides by zero") {
  ScalingCurve zero = ScalingCurve::Fit({{1, 0}, {2, 0}});
  CHECK(zero.per_pod() == 0);
  CHECK(zero.GainOfNext(2) == 0);
  CHECK(std::isfinite(ScalingCurve::Fit({{1, 0}, {2, 10}}).GainOfNext(2)));
  CHECK(ReportedGain({{1, 0}, {2, 10}}, 2) == 1.0);
  CHECK(ReportedGain({{1, 0}, {2, 0}}, 2) == 0.0);
}

TEST_CASE("a reported point that gained less than minGain limits the job's useful size") {
  const std::vector<ThroughputPoint> points{{1, 10}, {2, 18}, {3, 18.5}, {4, 18.52}};
  CHECK(ReportedGain(points, 2) == Approx(0.8));
  CHECK(ReportedGain(points, 3) == Approx(0.5 / 9));
  CHECK(!ReportedGain(points, 5).has_value());
  CHECK(UsefulSizeLimit(points, 0.1) == 2);
  CHECK(UsefulSizeLimit(points, 0.01) == 3);
  CHECK(!UsefulSizeLimit(points, 0.0).has_value());
  CHECK(!UsefulSizeLimit({{1, 10}, {3, 10}}, 0.1).has_value());  // no consecutive sizes: unknown
}

}  // namespace
}  // namespace lahar
