#include "plugins/elastic/goodput.h"

#include <algorithm>

namespace lahar {
namespace {

// The least-squares `a` of T = a * f(n) for the serial fraction s.
double FitPerPod(const std::vector<ThroughputPoint>& points, double s) {
  double tf = 0;
  double ff = 0;
  for (const ThroughputPoint& p : points) {
    const double f = p.size / (1.0 + s * (p.size - 1));
    tf += p.rate * f;
    ff += f * f;
  }
  return ff > 0 ? tf / ff : 0;
}

// The throughput-per-pod ratio of going from n to n+1 pods, from two throughputs.
double Gain(double at_n, double at_next, int32_t n) {
  if (at_n <= 0 || n <= 0) return at_next > 0 ? 1.0 : 0.0;  // nothing to compare with: as linear
  return (at_next - at_n) / (at_n / n);
}

}  // namespace

ScalingCurve ScalingCurve::Fit(const std::vector<ThroughputPoint>& points) {
  ScalingCurve curve;
  if (points.empty()) return curve;
  // The line y = b0 + b1 * n through (n, n / T) of the points with T > 0.
  double count = 0, sn = 0, sy = 0, snn = 0, sny = 0;
  for (const ThroughputPoint& p : points) {
    if (p.rate <= 0) continue;
    const double y = p.size / p.rate;
    count += 1;
    sn += p.size;
    sy += y;
    snn += static_cast<double>(p.size) * p.size;
    sny += p.size * y;
  }
  double s = 0;
  const double spread = count * snn - sn * sn;
  if (count >= 2 && spread > 0) {
    const double b1 = (count * sny - sn * sy) / spread;
    const double b0 = (sy - b1 * sn) / count;
    // 1 / T(1) = b0 + b1 and s = b1 / (b0 + b1) on an exact Amdahl curve.
    if (b0 + b1 > 0) s = std::clamp(b1 / (b0 + b1), 0.0, 1.0);
  }
  curve.serial_ = s;
  curve.per_pod_ = FitPerPod(points, s);
  return curve;
}

double ScalingCurve::Throughput(int32_t n) const {
  if (n <= 0) return 0;
  return per_pod_ * n / (1.0 + serial_ * (n - 1));
}

double ScalingCurve::GainOfNext(int32_t n) const {
  if (per_pod_ <= 0) return 0;
  return Gain(Throughput(n), Throughput(n + 1), n);
}

std::optional<double> ReportedGain(const std::vector<ThroughputPoint>& points, int32_t n) {
  const ThroughputPoint* before = nullptr;
  const ThroughputPoint* at = nullptr;
  for (const ThroughputPoint& p : points) {
    if (p.size == n - 1) before = &p;
    if (p.size == n) at = &p;
  }
  if (before == nullptr || at == nullptr) return std::nullopt;
  return Gain(before->rate, at->rate, n - 1);
}

std::optional<int32_t> UsefulSizeLimit(const std::vector<ThroughputPoint>& points, double min_gain) {
  for (size_t i = 1; i < points.size(); ++i) {  // sorted by size: the smallest such size first
    const ThroughputPoint& before = points[i - 1];
    const ThroughputPoint& at = points[i];
    if (at.size == before.size + 1 && Gain(before.rate, at.rate, before.size) < min_gain) return before.size;
  }
  return std::nullopt;
}

}  // namespace lahar
