// Inline SVG line charts of step series over time (or any other x), with optional marks for
// point events. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_SVG_CHART_H_
#define LAHAR_SCHEDULER_SIM_REPORT_SVG_CHART_H_

#include <cstddef>
#include <string>
#include <vector>

#include "scheduler/sim/report/series.h"

namespace lahar::report_internal {

// The i-th colour of a palette that stays distinct on white and in greyscale print.
const char* Colour(size_t i);

enum class Axis { kTime, kPercent, kCount };

struct Series {
  std::string name;  // plain text; escaped when rendered
  const char* colour = "#000";
  bool dashed = false;
  bool in_legend = true;
  bool extend_to_end = true;  // hold the last value to the right edge
  std::vector<Point> points;
};

// Shapes that tell kinds of marks apart without relying on colour.
enum class MarkShape { kTriangleDown, kSquare, kCircle, kCross };

// A point event drawn over the series, such as an eviction.
struct Mark {
  double t = 0, v = 0;
  MarkShape shape = MarkShape::kCircle;
  const char* colour = "#000";
  const char* css_class = "";  // names the kind, for the page's style and for tests
  std::string tooltip;         // plain text
};

// The legend entry of one kind of mark.
struct MarkKey {
  MarkShape shape;
  const char* css_class;
  std::string name;  // plain text
};

// Every text field is plain text: the renderer escapes it.
struct Chart {
  std::string title;
  std::string note;
  std::string x_label, y_label;
  Axis x_axis = Axis::kTime;
  Axis y_axis = Axis::kCount;
  double x_max = 1;
  double y_max = 0;  // 0: fitted to the data
  std::string empty_text = "no data";
  std::vector<Series> series;
  std::vector<Mark> marks;         // drawn over the series, in order
  std::vector<MarkKey> mark_keys;  // listed in the legend after the series
};

// The largest value of any series.
double DataMax(const Chart& chart);

// One <svg class="chart"> element sized by its viewBox, so the page can scale it.
std::string RenderChart(const Chart& chart);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_SVG_CHART_H_
