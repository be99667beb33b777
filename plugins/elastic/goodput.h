// The goodput estimator of the elastic plugin (spec 3.2): from the throughput a job reported at
// some sizes, what its next worker is expected to add and whether its last one paid.
//
// The curve is Amdahl's law, T(n) = a * n / (1 + s * (n - 1)): `a` the throughput of one pod,
// `s` the serial fraction (0: linear, 1: flat). Its reciprocal per pod, n / T(n), is a straight
// line in n, so (a, s) come from a least-squares line through the points' n / T; `s` is then kept
// within [0, 1] (no super-linear or shrinking curve is extrapolated) and `a` refitted to the
// points for that `s`. Points of zero throughput take no part in the line (n / T is infinite)
// but do in `a`. One point, or points that do not define a line: linear through them.
#ifndef LAHAR_PLUGINS_ELASTIC_GOODPUT_H_
#define LAHAR_PLUGINS_ELASTIC_GOODPUT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "api/throughput.h"

namespace lahar {

class ScalingCurve {
 public:
  // Fitted to `points` (any order); an empty set gives the linear curve of one pod = 1.
  static ScalingCurve Fit(const std::vector<ThroughputPoint>& points);

  double per_pod() const { return per_pod_; }
  double serial_fraction() const { return serial_; }
  // Expected throughput with `n` running pods (0 for n <= 0).
  double Throughput(int32_t n) const;
  // The throughput the (n+1)th pod is expected to add, as a fraction of the throughput per pod
  // at n pods (1 for a linear job, 0 for a flat one, and 0 when nothing is done at n pods).
  double GainOfNext(int32_t n) const;

 private:
  double per_pod_ = 1;
  double serial_ = 0;
};

// The gain that the reported points show for the pod that took the job from n-1 to n pods
// (both sizes reported), computed as GainOfNext does; nullopt when either point is missing.
std::optional<double> ReportedGain(const std::vector<ThroughputPoint>& points, int32_t n);

// The largest size worth running by the job's reports (`points` sorted by size, as parsed): one
// below the smallest reported size whose last pod gained less than `min_gain` (ReportedGain; the
// pod that is taken back and not added again), or nullopt when no report shows such a pod.
std::optional<int32_t> UsefulSizeLimit(const std::vector<ThroughputPoint>& points, double min_gain);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_ELASTIC_GOODPUT_H_
