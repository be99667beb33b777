#include "scheduler/sim/report/series.h"

#include <algorithm>
#include <iterator>

namespace lahar::report_internal {

void AppendStep(std::vector<Point>* series, double t, double v) {
  if (!series->empty() && series->back().t == t) {
    series->back().v = v;
    if (series->size() >= 2 && (*series)[series->size() - 2].v == v) series->pop_back();
    return;
  }
  if (!series->empty() && series->back().v == v) return;
  series->push_back({t, v});
}

double ValueAt(const std::vector<Point>& series, double t) {
  auto after = std::upper_bound(series.begin(), series.end(), t,
                                [](double at, const Point& point) { return at < point.t; });
  return after == series.begin() ? 0 : std::prev(after)->v;
}

std::vector<Point> DownsampleSteps(const std::vector<Point>& points, double end,
                                   size_t max_points) {
  if (points.size() <= max_points) return points;
  const double start = points.front().t;
  if (end <= start) return {points.back()};
  const double width = (end - start) / static_cast<double>(max_points);
  std::vector<double> area(max_points, 0.0);
  size_t bucket = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    double at = points[i].t;
    const double segment_end = i + 1 < points.size() ? std::min(points[i + 1].t, end) : end;
    while (at < segment_end) {
      const bool last = bucket + 1 == max_points;
      const double bucket_end = last ? end : start + static_cast<double>(bucket + 1) * width;
      if (bucket_end <= at && !last) {
        ++bucket;
        continue;
      }
      const double take = std::min(segment_end, bucket_end) - at;
      area[bucket] += points[i].v * take;
      at += take;
      if (at >= bucket_end && !last) ++bucket;
    }
  }
  std::vector<Point> out;
  out.reserve(max_points);
  for (size_t b = 0; b < max_points; ++b) {
    const double bucket_start = start + static_cast<double>(b) * width;
    const double bucket_width = b + 1 == max_points ? end - bucket_start : width;
    AppendStep(&out, bucket_start, bucket_width > 0 ? area[b] / bucket_width : 0);
  }
  return out;
}

std::vector<Point> Cdf(std::vector<double> values, size_t max_points) {
  std::vector<Point> out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  out.push_back({std::min(0.0, values.front()), 0});
  const size_t steps = std::min(n, max_points);
  for (size_t k = 1; k <= steps; ++k) {
    // The k-th of `steps` quantiles; with steps == n this is every value.
    const size_t index = (k * n + steps - 1) / steps - 1;
    AppendStep(&out, values[index], static_cast<double>(index + 1) / static_cast<double>(n));
  }
  return out;
}

}  // namespace lahar::report_internal
