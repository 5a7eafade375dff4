#pragma once
// Plots are drawn by matplotlib (Debian python3-matplotlib): a caller passes a short
// Python script and its arguments (typically a CSV to read and a PNG to write).
#include <string>
#include <vector>

namespace flynn::experiments {

/// The Python interpreter used for plots: $FLYNN_PYTHON, else /usr/bin/python3 (Debian's,
/// which sees the Debian matplotlib), else python3 on PATH.
std::string plot_python();

/// Whether that interpreter can import matplotlib.
bool matplotlib_available();

/// Runs `script` (Python source; sys.argv[1:] = args) with the Agg backend. Throws
/// flynn::Error with the script's stderr when it fails.
void run_matplotlib(const std::string& script, const std::vector<std::string>& args);

}  // namespace flynn::experiments
