#pragma once
// Checks a report page (report.html) against its JSON (report.json) independently of the
// library's own formatting: every cell marked data-key="<JSON pointer>" must show the
// value at that pointer (integers exactly, other numbers to the four decimals shown), and
// the page must show the numbers a person looks for. Shared by the library's and the CLI's
// report tests.
#include <cmath>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace flynn::test {

struct PageCheck {
  std::size_t cells = 0;                ///< number cells found
  std::vector<std::string> pointers;    ///< their data-key pointers
  std::vector<std::string> mismatches;  ///< "pointer: page 'x', json y"
};

inline PageCheck check_page_against_json(const std::string& html, const nlohmann::json& j) {
  PageCheck out;
  static const std::regex cell(R"re(<td class="n" data-key="([^"]*)">([^<]*)</td>)re");
      for (auto it = std::sregex_iterator(html.begin(), html.end(), cell);
           it != std::sregex_iterator(); ++it) {
    const std::string pointer = (*it)[1], text = (*it)[2];
    ++out.cells;
    out.pointers.push_back(pointer);
    const nlohmann::json::json_pointer p(pointer);
    if (!j.contains(p)) {
      out.mismatches.push_back(pointer + ": not in the JSON");
      continue;
    }
    const nlohmann::json& v = j.at(p);
    bool same = false;
    if (v.is_number_integer() || v.is_number_unsigned()) {
      same = text == std::to_string(v.get<long long>());
    } else if (v.is_number_float()) {
      char* end = nullptr;
      const double shown = std::strtod(text.c_str(), &end);
      same = end && *end == '\0' && std::abs(shown - v.get<double>()) <= 0.5e-4 + 1e-12;
    }
    if (!same) out.mismatches.push_back(pointer + ": page '" + text + "', json " + v.dump());
  }
  return out;
}

/// The pointers a report page must show (the summary, every class's row, the averages,
/// every reliability bin, and with two classes the areas under the curves).
inline std::vector<std::string> required_pointers(const nlohmann::json& j) {
  std::vector<std::string> p = {"/rows", "/accuracy", "/balanced_accuracy", "/log_loss", "/ece"};
  for (std::size_t l = 0; l < j["per_class"].size(); ++l)
    for (const char* k : {"precision", "recall", "f1", "support"})
      p.push_back("/per_class/" + std::to_string(l) + "/" + k);
  for (const char* a : {"macro_avg", "weighted_avg"})
    for (const char* k : {"precision", "recall", "f1"}) p.push_back(std::string("/") + a + "/" + k);
  for (std::size_t b = 0; b < j["reliability"]["rows"].size(); ++b)
    for (const char* k : {"rows", "mean_confidence", "accuracy"})
      p.push_back("/reliability/rows/" + std::to_string(b) + "/" + k);
  if (j.contains("binary")) {
    p.push_back("/binary/roc_auc");
    p.push_back("/binary/average_precision");
  }
  if (j.contains("confusion_matrix") && j["classes"].size() <= 30)
    for (std::size_t t = 0; t < j["classes"].size(); ++t)
      for (std::size_t q = 0; q < j["classes"].size(); ++q)
        for (const char* k : {"counts", "normalised"})
          p.push_back("/confusion_matrix/" + std::string(k) + "/" + std::to_string(t) + "/" +
                      std::to_string(q));
  return p;
}

}  // namespace flynn::test
