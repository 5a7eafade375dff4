#pragma once
// A classification report (classification_report.hpp) as files a person opens: PNG
// figures, one self-contained HTML page and one JSON file, written together into one
// folder (`--report DIR` of `flynn eval`, `flynn predict` and `flynn tune`; Python's
// flynn.Report.write). docs/guide/reports.md describes them.
#include <string>
#include <vector>

#include "flynn/eval/classification_report.hpp"
#include "flynn/eval/report.hpp"

namespace flynn::eval {

/// One figure of a report.
struct ReportFigure {
  std::string file;     ///< its file name in the folder, e.g. "reliability.png"
  std::string caption;  ///< what it shows, under it on the page
  std::string png;      ///< the PNG bytes (twice the nominal size each way, for sharp screens)
  int width = 0, height = 0;  ///< nominal size in CSS pixels, as the page shows it
};

/// Throws flynn::Error saying why unless this build draws figures (flynn is built with
/// cairo, Debian's libcairo2-dev; FLYNN_HAVE_CAIRO in flynn/build_config.hpp).
void require_report_figures();

/// The report's figures, in the order of the page: the confusion matrix (when the report
/// keeps it), the reliability diagram and, for two classes, the ROC and precision-recall
/// curves. Throws flynn::Error when this build cannot draw (require_report_figures).
std::vector<ReportFigure> draw_report_figures(const ClassificationReport& report);

/// How the page writes a number of the JSON: an integer as it is, any other number with
/// four decimals ("0.8125"), a missing one as "–".
std::string format_report_number(const nlohmann::json& value);

/// The report as one HTML page that needs nothing else: the figures inline (PNG data
/// URLs), the styles inline, no script and no link to anything outside it. Every cell that
/// shows a number of the JSON carries data-key="<JSON pointer into to_json(report)>" and
/// shows format_report_number of that value, so the page can be checked against the JSON.
std::string report_html(const ClassificationReport& report,
                        const std::vector<ReportFigure>& figures);

/// The files of a report folder: report.json, report.html and the figures.
inline constexpr const char* kReportJsonFile = "report.json";
inline constexpr const char* kReportHtmlFile = "report.html";

/// Writes the report into the folder `dir`: report.json (to_json), report.html and each
/// figure's PNG. All at once: the files go to a new folder beside `dir`, which then takes
/// its place, so a reader never sees half a report and an error leaves nothing behind.
/// `dir` may not exist yet (missing parent folders are made), may be an empty folder or a
/// folder holding an earlier report (report.json, report.html and PNG files only), which is
/// replaced; anything else is refused. Returns the names of the files written. Throws
/// flynn::Error naming `dir`.
std::vector<std::string> write_report(const ClassificationReport& report, const std::string& dir);

/// Throws flynn::Error when write_report(…, dir) would be refused before any work is done:
/// this build cannot draw figures, or something other than an earlier report is at `dir`.
/// Commands call it first, so a long evaluation does not end in that error.
void check_report_folder(const std::string& dir);

/// Writes the report into `dir` (write_report) and says so in a command's output:
/// out.json["report"] = {"folder", "files", "rows"} and one line of out.text.
void attach_report(Report& out, const ClassificationReport& report, const std::string& dir);

}  // namespace flynn::eval
