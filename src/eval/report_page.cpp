// The report's HTML page, and the folder that holds it with the JSON and the figures.
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "flynn/eval/report_files.hpp"
#include "flynn/io/atomic_directory.hpp"
#include "flynn/version.hpp"

namespace flynn::eval {

namespace {

// The classes whose confusion tables the page shows (the figure and the JSON hold up to
// kReportMaxConfusionClasses).
constexpr std::size_t kPageMaxConfusionClasses = 30;

constexpr const char* kStyle =
    R"(body{font-family:"DejaVu Sans",Verdana,sans-serif;margin:2em auto;max-width:70em;
padding:0 1em;color:#222;line-height:1.4}h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;
border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}table{border-collapse:collapse;margin:.6em 0}
th,td{border:1px solid #ccc;padding:.25em .6em}td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f2f2f2;text-align:left}tr.avg td,tr.avg th{background:#fafafa;font-style:italic}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #ddd}figcaption{font-size:.9em;
color:#555;max-width:50em}.note{color:#555;font-size:.9em}footer{margin-top:2.5em;color:#777;font-size:.85em})";

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A JSON pointer token: '~' and '/' escaped (RFC 6901).
std::string pointer_token(std::string_view s) {
  std::string out;
  for (char c : s)
    out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const auto byte = [&](std::size_t k) {
      return k < bytes.size() ? static_cast<unsigned char>(bytes[k]) : 0u;
    };
    const unsigned v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += kBase64[v >> 18 & 63];
    out += kBase64[v >> 12 & 63];
    out += i + 1 < bytes.size() ? kBase64[v >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kBase64[v & 63] : '=';
  }
  return out;
}

// The page's cells of numbers from the JSON: the value at `pointer`, and the pointer.
class Cells {
 public:
  explicit Cells(const nlohmann::json& j) : j_(j) {}
  std::string td(const std::string& pointer) const {
    return fmt::format("<td class=\"n\" data-key=\"{}\">{}</td>", escape(pointer),
                       escape(format_report_number(j_.at(nlohmann::json::json_pointer(pointer)))));
  }

 private:
  const nlohmann::json& j_;
};

std::string facts_section(const nlohmann::json& j, const Cells& cells) {
  std::string html = "<table class=\"facts\">\n";
  for (const auto& [key, value] : j["facts"].items()) {
    const std::string cell =
        value.is_number()
            ? cells.td("/facts/" + pointer_token(key))
            : "<td>" + escape(value.is_string() ? value.get<std::string>() : value.dump()) +
                  "</td>";
    html += fmt::format("<tr><th>{}</th>{}</tr>\n", escape(key), cell);
  }
  return html + "</table>\n";
}

std::string summary_section(const nlohmann::json& j, const Cells& cells) {
  std::string html = "<h2>Summary</h2>\n<table class=\"summary\">\n";
  const std::pair<const char*, const char*> rows[] = {{"rows", "/rows"},
                                                      {"accuracy", "/accuracy"},
                                                      {"balanced accuracy", "/balanced_accuracy"},
                                                      {"log-loss", "/log_loss"},
                                                      {"ECE", "/ece"}};
  for (const auto& [name, pointer] : rows)
    html += fmt::format("<tr><th>{}</th>{}</tr>\n", name, cells.td(pointer));
  if (j.contains("binary")) {
    html += fmt::format("<tr><th>ROC AUC (positive class '{}')</th>{}</tr>\n",
                        escape(j["binary"]["positive_class"].get<std::string>()),
                        cells.td("/binary/roc_auc"));
    html += fmt::format("<tr><th>average precision</th>{}</tr>\n",
                        cells.td("/binary/average_precision"));
  }
  if (j["excluded_rows"].get<std::uint64_t>() > 0)
    html += fmt::format("<tr><th>rows left out (a class the model does not know)</th>{}</tr>\n",
                        cells.td("/excluded_rows"));
  return html + "</table>\n";
}

std::string per_class_section(const nlohmann::json& j, const Cells& cells) {
  std::string html =
      "<h2>Per class</h2>\n<table "
      "class=\"per-class\">\n<tr><th>class</th><th>precision</th><th>recall</th>"
      "<th>F1</th><th>support (rows)</th><th>predicted (rows)</th></tr>\n";
  for (std::size_t l = 0; l < j["per_class"].size(); ++l) {
    const std::string p = fmt::format("/per_class/{}/", l);
    html += fmt::format("<tr><th>{}</th>{}{}{}{}{}</tr>\n",
                        escape(j["per_class"][l]["class"].get<std::string>()),
                        cells.td(p + "precision"), cells.td(p + "recall"), cells.td(p + "f1"),
                        cells.td(p + "support"), cells.td(p + "predicted"));
  }
  for (const auto& [name, key] :
       {std::pair{"macro average", "macro_avg"}, std::pair{"weighted average", "weighted_avg"}})
    html +=
        fmt::format("<tr class=\"avg\"><th>{}</th>{}{}{}<td></td><td></td></tr>\n", name,
                    cells.td(fmt::format("/{}/precision", key)),
                    cells.td(fmt::format("/{}/recall", key)), cells.td(fmt::format("/{}/f1", key)));
  return html +
         "</table>\n<p class=\"note\">Macro averages are over the classes that occur in the truth "
         "or the "
         "predictions; weighted averages weigh each class by its rows.</p>\n";
}

std::string figure_html(const ReportFigure& f) {
  return fmt::format(
      "<figure><img src=\"data:image/png;base64,{}\" width=\"{}\" height=\"{}\" alt=\"{}\">"
      "<figcaption>{}</figcaption></figure>\n",
      base64(f.png), f.width, f.height, escape(f.caption), escape(f.caption));
}

std::string figures_named(const std::vector<ReportFigure>& figures, std::string_view file) {
  for (const ReportFigure& f : figures)
    if (f.file == file) return figure_html(f);
  return "";
}

// One confusion table: `key` is "counts" or "normalised".
std::string confusion_table(const nlohmann::json& j, const Cells& cells, const std::string& key) {
  std::string html = "<table class=\"confusion\">\n<tr><th>true \\ predicted</th>";
  for (const auto& c : j["classes"]) html += "<th>" + escape(c.get<std::string>()) + "</th>";
  html += "</tr>\n";
  for (std::size_t t = 0; t < j["classes"].size(); ++t) {
    html += "<tr><th>" + escape(j["classes"][t].get<std::string>()) + "</th>";
    for (std::size_t p = 0; p < j["classes"].size(); ++p)
      html += cells.td(fmt::format("/confusion_matrix/{}/{}/{}", key, t, p));
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string confusion_section(const nlohmann::json& j, const Cells& cells,
                              const std::vector<ReportFigure>& figures) {
  std::string html = "<h2>Confusion matrix</h2>\n";
  if (!j.contains("confusion_matrix"))
    return html + fmt::format("<p class=\"note\">Not kept: more than {} classes.</p>\n",
                              kReportMaxConfusionClasses);
  html += figures_named(figures, "confusion_matrix.png");
  if (j["classes"].size() > kPageMaxConfusionClasses)
    return html + "<p class=\"note\">The counts are in report.json (confusion_matrix).</p>\n";
  html += "<p>Rows (counts):</p>\n" + confusion_table(j, cells, "counts");
  return html + "<p>Share of each true class's rows (row-normalised):</p>\n" +
         confusion_table(j, cells, "normalised");
}

std::string reliability_section(const nlohmann::json& j, const Cells& cells,
                                const std::vector<ReportFigure>& figures) {
  std::string html =
      "<h2>Reliability of the probabilities</h2>\n" + figures_named(figures, "reliability.png");
  html +=
      "<table class=\"reliability\">\n<tr><th>confidence from</th><th>to</th><th>rows</th><th>mean "
      "confidence</th><th>accuracy</th></tr>\n";
  for (std::size_t b = 0; b < j["reliability"]["rows"].size(); ++b) {
    const std::string p = fmt::format("/reliability/rows/{}/", b);
    html += fmt::format("<tr>{}{}{}{}{}</tr>\n", cells.td(p + "lower"), cells.td(p + "upper"),
                        cells.td(p + "rows"), cells.td(p + "mean_confidence"),
                        cells.td(p + "accuracy"));
  }
  return html +
         "</table>\n<p class=\"note\">ECE (expected calibration error) is the rows-weighted mean "
         "gap "
         "between a bin's accuracy and its mean confidence.</p>\n";
}

}  // namespace

std::string format_report_number(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return fmt::format("{:.4f}", v.get<double>());
  return "\u2013";
}

std::string report_html(const ClassificationReport& report,
                        const std::vector<ReportFigure>& figures) {
  const nlohmann::json j = to_json(report);
  const Cells cells(j);
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta "
      "name=\"viewport\" "
      "content=\"width=device-width, "
      "initial-scale=1\">\n<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n"
      "<h1>{0}</h1>\n<p>{2}</p>\n",
      escape(report.title), kStyle, escape(report.description));
  html += facts_section(j, cells) + summary_section(j, cells) + per_class_section(j, cells);
  html += confusion_section(j, cells, figures) + reliability_section(j, cells, figures);
  if (report.binary) {
    html += "<h2>Two classes: ROC and precision-recall</h2>\n";
    html += figures_named(figures, "roc.png") + figures_named(figures, "precision_recall.png");
  }
  html += fmt::format(
      "<footer>Written by flynn {}. Every number on this page is in report.json beside it; the "
      "figures are "
      "also there as PNG files.</footer>\n</body>\n</html>\n",
      version_string);
  return html;
}

namespace {

// An earlier report may be replaced: a folder of report.json, report.html and PNG files.
bool earlier_report(const std::vector<std::string>& entries) {
  bool has_json = false;
  for (const std::string& e : entries) {
    has_json = has_json || e == kReportJsonFile;
    const bool png = e.size() > 4 && e.compare(e.size() - 4, 4, ".png") == 0;
    if (e != kReportJsonFile && e != kReportHtmlFile && !png) return false;
  }
  return has_json;
}

}  // namespace

void check_report_folder(const std::string& dir) {
  require_report_figures();
  io::check_folder_target(dir, earlier_report);
}

std::vector<std::string> write_report(const ClassificationReport& report, const std::string& dir) {
  const std::vector<ReportFigure> figures = draw_report_figures(report);
  std::vector<io::FolderFile> files = {{kReportJsonFile, to_json(report).dump(2) + "\n"},
                                       {kReportHtmlFile, report_html(report, figures)}};
  for (const ReportFigure& f : figures) files.emplace_back(f.file, f.png);
  io::write_folder_atomic(dir, files, earlier_report);
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.first);
  return names;
}

}  // namespace flynn::eval

namespace flynn::eval {

void attach_report(Report& out, const ClassificationReport& report, const std::string& dir) {
  const std::vector<std::string> files = write_report(report, dir);
  out.json["report"] = {{"folder", dir}, {"files", files}, {"rows", report.tally.rows()}};
  out.text += fmt::format("report: {}/{} ({} files: the page, its numbers in {} and {} figures)\n",
                          dir, kReportHtmlFile, files.size(), kReportJsonFile, files.size() - 2);
}

}  // namespace flynn::eval
