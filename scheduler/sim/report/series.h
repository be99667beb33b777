// Step series over simulated time, as the report's charts draw them. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_SERIES_H_
#define LAHAR_SCHEDULER_SIM_REPORT_SERIES_H_

#include <cstddef>
#include <vector>

namespace lahar::report_internal {

// In a step series the value `v` holds from `t` until the next point's `t`.
struct Point {
  double t;
  double v;
};

// Appends a step to a step series: several changes at one instant keep only the last value,
// and a change to the same value adds nothing.
void AppendStep(std::vector<Point>* series, double t, double v);

// The value a step series holds at `t`: the last point at or before it, 0 before the first.
double ValueAt(const std::vector<Point>& series, double t);

// Reduces a step series (the last point holds until `end`) to at most `max_points` equal time
// buckets holding the time-weighted mean of each bucket. Means keep the area under the curve
// (pod-seconds, used capacity) right, which is what the reader compares; a min/max envelope
// would exaggerate short spikes. Linear in points + buckets.
std::vector<Point> DownsampleSteps(const std::vector<Point>& points, double end,
                                   size_t max_points);

// Empirical CDF as a step series: (x, fraction of values <= x), at most `max_points` steps.
std::vector<Point> Cdf(std::vector<double> values, size_t max_points);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_SERIES_H_
