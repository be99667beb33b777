// The HTML report of lahar-sim (spec section 6.3): one self-contained page rendered from the two
// files the simulator writes, events.jsonl and summary.json.
//
// The report reads only those files, never the simulator's internals, so a report can be
// rebuilt from an old output directory and the simulator can change without touching it.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_REPORT_H_
#define LAHAR_SCHEDULER_SIM_REPORT_REPORT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace lahar {
namespace report_internal {
class EventsInPieces;
}  // namespace report_internal

// One simulated configuration: what `lahar-sim run --out DIR` leaves in DIR.
struct ReportRun {
  std::string label{};       // configuration label, e.g. "elastic.conf"
  std::string events_jsonl{};  // contents of events.jsonl
  std::string summary_json{};  // contents of summary.json
  // When set, events.jsonl is read from this file line by line instead (a long run's events need
  // not fit in memory).
  std::string events_path{};
  // Or the events as the run wrote them, taken as it did (lahar-sim run): nothing is read.
  std::shared_ptr<report_internal::EventsInPieces> events_as_written{};
};

// Renders one self-contained HTML page: inline CSS and inline SVG charts, no scripts, no
// fonts or images from anywhere (a Content-Security-Policy forbids every network load). One
// run gives a single report; several runs (`lahar-sim compare`) give a comparison table and
// each chart of every run side by side on a shared time axis.
//
// Every string read from the inputs is HTML-escaped. Time series are downsampled to at most
// 1000 points each, so the page stays small for runs of any length.
//
// Returns InvalidArgument when there are no runs, when summary.json is not a JSON object or a
// field has the wrong type, or when an events.jsonl line is bad; the message names the run's
// label and the 1-based line number ("elastic.conf: events.jsonl line 3: ...").
absl::StatusOr<std::string> RenderHtmlReport(std::string_view title,
                                             const std::vector<ReportRun>& runs);

// Formats a duration for people, as the report prints every time figure: the two most
// significant units ("2h 03m", "12m 05s", "3d 04h"), or seconds below a minute ("45s", "4.2s").
std::string FormatHumanDuration(double seconds);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_REPORT_REPORT_H_
