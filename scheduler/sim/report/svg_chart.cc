#include "scheduler/sim/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/strings.h"
#include "scheduler/sim/report/format.h"

namespace lahar::report_internal {
namespace {

// Tableau 10 plus two dark tones: distinct on white and in greyscale print.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                    "#bcbd22", "#17becf", "#393b79", "#637939"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// Compact duration for axis ticks, where a zero unit is noise: "0", "30s", "1h", "1h 30m".
std::string TickDuration(double seconds, double step) {
  if (seconds == 0) return "0";
  if (step < 1) return StrFormat("%.1fs", seconds);
  if (seconds >= 1e9) return StrFormat("%.3gd", seconds / 86400);  // beyond int64 rounding
  int64_t total = std::llround(seconds);
  const int64_t days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60,
                secs = total % 60;
  std::string out;
  auto part = [&](int64_t value, const char* unit) {
    if (value == 0) return;
    if (!out.empty()) out.push_back(' ');
    StrAppend(&out, value, unit);
  };
  part(days, "d");
  part(hours, "h");
  part(minutes, "m");
  part(secs, "s");
  return out;
}

// 1, 2 or 5 times a power of ten, giving about `target` intervals over `range`.
double NiceStep(double range, double target) {
  const double raw = range / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  const double nice = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10;
  return nice * magnitude;
}

// Steps people count time in, so ticks land on "30m" or "2h" rather than "1h 23m".
double TimeStep(double range) {
  static constexpr double kSteps[] = {1,     2,     5,     10,     15,     30,     60,
                                      120,   300,   600,   900,    1800,   3600,   7200,
                                      10800, 21600, 43200, 86400,  172800, 604800, 1209600};
  if (range < 5) return NiceStep(range, 5);
  for (double step : kSteps) {
    if (range / step <= 8) return step;
  }
  return NiceStep(range / 86400, 6) * 86400;
}

std::string Coord(double value) { return StrFormat("%.1f", value); }

// Mark glyphs in the legend: neutral, as a kind of mark can take every series' colour.
constexpr const char* kInk = "#3d444d";

// A glyph of about 9 by 9 centred on (x, y).
std::string MarkGlyph(MarkShape shape, double x, double y, const char* colour) {
  switch (shape) {
    case MarkShape::kTriangleDown:
      return StrCat("<path d=\"M", Coord(x - 4.5), " ", Coord(y - 4), "H", Coord(x + 4.5), "L",
                    Coord(x), " ", Coord(y + 4.5), "Z\" fill=\"", colour, "\"/>");
    case MarkShape::kSquare:
      return StrCat("<rect x=\"", Coord(x - 3.5), "\" y=\"", Coord(y - 3.5),
                    "\" width=\"7\" height=\"7\" fill=\"", colour, "\"/>");
    case MarkShape::kCircle:
      return StrCat("<circle cx=\"", Coord(x), "\" cy=\"", Coord(y), "\" r=\"4\" fill=\"", colour,
                    "\"/>");
    case MarkShape::kCross:
      return StrCat("<path d=\"M", Coord(x - 4), " ", Coord(y - 4), "L", Coord(x + 4), " ",
                    Coord(y + 4), "M", Coord(x - 4), " ", Coord(y + 4), "L", Coord(x + 4), " ",
                    Coord(y - 4), "\" stroke=\"", colour, "\" stroke-width=\"2.2\"/>");
  }
  return "";
}

}  // namespace

const char* Colour(size_t i) { return kPalette[i % kPaletteSize]; }

double DataMax(const Chart& chart) {
  double max = 0;
  for (const Series& series : chart.series) {
    for (const Point& point : series.points) max = std::max(max, point.v);
  }
  return max;
}

std::string RenderChart(const Chart& chart) {
  constexpr double kWidth = 640, kLeft = 64, kRight = 18, kTop = 46, kPlotHeight = 210;
  constexpr double kLegendRow = 17;
  constexpr size_t kLegendColumns = 2;
  constexpr size_t kLegendChars = 44;
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_bottom = kTop + kPlotHeight;

  std::vector<const Series*> legend;
  bool has_data = false;
  for (const Series& series : chart.series) {
    if (series.in_legend) legend.push_back(&series);
    if (!series.points.empty()) has_data = true;
  }
  const size_t legend_entries = legend.size() + chart.mark_keys.size();
  const size_t legend_rows = (legend_entries + kLegendColumns - 1) / kLegendColumns;
  const double legend_top = plot_bottom + 52;
  const double height = legend_top + static_cast<double>(legend_rows) * kLegendRow + 6;

  const double x_max = chart.x_max > 0 ? chart.x_max : 1;
  double y_max = chart.y_max;
  double y_step;
  if (chart.y_axis == Axis::kPercent) {
    if (y_max <= 0) y_max = 1;
    y_step = NiceStep(y_max, 5);
  } else {
    if (y_max <= 0) y_max = DataMax(chart);
    if (y_max <= 0) y_max = 1;
    y_step = NiceStep(y_max, 5);
    if (chart.y_axis == Axis::kCount) y_step = std::max(1.0, std::round(y_step));
  }
  y_max = std::ceil(y_max / y_step - 1e-9) * y_step;
  const double x_step = chart.x_axis == Axis::kTime ? TimeStep(x_max) : NiceStep(x_max, 6);

  auto sx = [&](double t) { return kLeft + std::clamp(t / x_max, 0.0, 1.0) * plot_width; };
  auto sy = [&](double v) { return plot_bottom - std::clamp(v / y_max, 0.0, 1.0) * kPlotHeight; };
  auto y_tick = [&](double v) {
    if (chart.y_axis == Axis::kPercent) {
      return y_step < 0.01 ? StrFormat("%.1f%%", v * 100) : StrFormat("%.0f%%", v * 100);
    }
    return y_step < 1 ? StrFormat("%g", v) : FormatCount(v);
  };

  std::string out;
  StrAppend(&out, "<svg class=\"chart\" viewBox=\"0 0 ", kWidth, " ", Coord(height),
            "\" role=\"img\" aria-label=\"", Escape(chart.title), "\">\n");
  StrAppend(&out, "<text class=\"ct\" x=\"", kLeft, "\" y=\"18\">", Escape(chart.title),
            "</text>\n");
  if (!chart.note.empty()) {
    StrAppend(&out, "<text class=\"cn\" x=\"", kLeft, "\" y=\"35\">", Escape(chart.note),
              "</text>\n");
  }

  // Grid and tick labels.
  out += "<g class=\"grid\">";
  const int y_ticks = static_cast<int>(std::llround(y_max / y_step));
  for (int i = 0; i <= y_ticks; ++i) {
    const double y = sy(i * y_step);
    StrAppend(&out, "<line x1=\"", kLeft, "\" x2=\"", kLeft + plot_width, "\" y1=\"", Coord(y),
              "\" y2=\"", Coord(y), "\"/>");
  }
  const int x_ticks = static_cast<int>(std::floor(x_max / x_step + 1e-9));
  for (int i = 0; i <= x_ticks; ++i) {
    const double x = sx(i * x_step);
    StrAppend(&out, "<line x1=\"", Coord(x), "\" x2=\"", Coord(x), "\" y1=\"", kTop, "\" y2=\"",
              plot_bottom, "\"/>");
  }
  out += "</g>\n<g class=\"tick\">";
  for (int i = 0; i <= y_ticks; ++i) {
    StrAppend(&out, "<text x=\"", kLeft - 6, "\" y=\"", Coord(sy(i * y_step) + 4),
              "\" text-anchor=\"end\">", y_tick(i * y_step), "</text>");
  }
  for (int i = 0; i <= x_ticks; ++i) {
    const double value = i * x_step;
    const std::string label = chart.x_axis == Axis::kTime ? TickDuration(value, x_step)
                                                          : StrFormat("%g", value);
    // A label at the right edge would be cut by the viewBox; it ends at its tick instead.
    const bool at_edge = sx(value) > kLeft + plot_width - 16;
    StrAppend(&out, "<text x=\"", Coord(sx(value)), "\" y=\"", plot_bottom + 16,
              "\" text-anchor=\"", at_edge ? "end" : "middle", "\">", Escape(label), "</text>");
  }
  out += "</g>\n";
  StrAppend(&out, "<path class=\"axis\" d=\"M", kLeft, " ", kTop, "V", plot_bottom, "H",
            kLeft + plot_width, "\"/>\n");
  StrAppend(&out, "<text class=\"al\" x=\"", Coord(kLeft + plot_width / 2), "\" y=\"",
            plot_bottom + 36, "\" text-anchor=\"middle\">", Escape(chart.x_label), "</text>\n");
  StrAppend(&out, "<text class=\"al\" transform=\"translate(16 ", Coord(kTop + kPlotHeight / 2),
            ") rotate(-90)\" text-anchor=\"middle\">", Escape(chart.y_label), "</text>\n");

  if (!has_data) {
    StrAppend(&out, "<text class=\"empty\" x=\"", Coord(kLeft + plot_width / 2), "\" y=\"",
              Coord(kTop + kPlotHeight / 2), "\" text-anchor=\"middle\">",
              Escape(chart.empty_text), "</text>\n");
  }

  // Series as step paths; coordinates in tenths so that unchanged moves can be dropped.
  for (const Series& series : chart.series) {
    if (series.points.empty()) continue;
    StrAppend(&out, "<path class=\"line\" stroke=\"", series.colour, "\"",
              series.dashed ? " stroke-dasharray=\"6 4\"" : "", " d=\"");
    int64_t last_x = 0, last_y = 0;
    for (size_t i = 0; i < series.points.size(); ++i) {
      const int64_t x = std::llround(sx(series.points[i].t) * 10);
      const int64_t y = std::llround(sy(series.points[i].v) * 10);
      if (i == 0) {
        StrAppend(&out, "M", Coord(x / 10.0), " ", Coord(y / 10.0));
      } else {
        if (x != last_x) StrAppend(&out, "H", Coord(x / 10.0));
        if (y != last_y) StrAppend(&out, "V", Coord(y / 10.0));
      }
      last_x = x;
      last_y = y;
    }
    if (series.extend_to_end) {
      const int64_t x = std::llround(sx(x_max) * 10);
      if (x != last_x) StrAppend(&out, "H", Coord(x / 10.0));
    }
    out += "\"/>\n";
  }

  // Marks over the lines they annotate, each with its tooltip.
  for (const Mark& mark : chart.marks) {
    StrAppend(&out, "<g class=\"mark ", mark.css_class, "\"><title>", Escape(mark.tooltip),
              "</title>", MarkGlyph(mark.shape, sx(mark.t), sy(mark.v), mark.colour), "</g>\n");
  }

  // Legend below the plot, in columns: the series' lines, then the kinds of marks. Long names
  // are cut and kept whole in a tooltip.
  const double column_width = plot_width / kLegendColumns;
  for (size_t i = 0; i < legend_entries; ++i) {
    const double x = kLeft + static_cast<double>(i % kLegendColumns) * column_width;
    const double y = legend_top + static_cast<double>(i / kLegendColumns) * kLegendRow;
    const bool is_series = i < legend.size();
    const std::string& name = is_series ? legend[i]->name : chart.mark_keys[i - legend.size()].name;
    StrAppend(&out, "<g class=\"legend\"><title>", Escape(name), "</title>");
    if (is_series) {
      StrAppend(&out, "<line x1=\"", Coord(x), "\" x2=\"", Coord(x + 22), "\" y1=\"",
                Coord(y - 4), "\" y2=\"", Coord(y - 4), "\" stroke=\"", legend[i]->colour, "\"",
                legend[i]->dashed ? " stroke-dasharray=\"6 4\"" : "", "/>");
    } else {
      const MarkKey& key = chart.mark_keys[i - legend.size()];
      StrAppend(&out, "<g class=\"mark ", key.css_class, "-key\">",
                MarkGlyph(key.shape, x + 11, y - 4, kInk), "</g>");
    }
    StrAppend(&out, "<text x=\"", Coord(x + 28), "\" y=\"", Coord(y), "\">",
              Escape(Truncate(name, kLegendChars)), "</text></g>\n");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace lahar::report_internal
