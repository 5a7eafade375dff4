#pragma once
// Plots are drawn by matplotlib (Debian python3-matplotlib) running the scripts in
// scripts/plots/ (installed to <prefix>/share/flynn/plots): each takes its input CSV/JSON
// files and output paths as arguments, so a figure can be redrawn by hand from a study's
// output folder.
#include <string>
#include <vector>
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// The Python interpreter used for plots: $FLYNN_PYTHON, else /usr/bin/python3 (Debian's,
/// which sees the Debian matplotlib), else python3 on PATH.
std::string plot_python();

/// Whether that interpreter can import matplotlib.
bool matplotlib_available();

/// The folder holding the plot scripts, the first of: $FLYNN_PLOT_DIR, the source tree's
/// scripts/plots (compiled in), the installed <datadir>/flynn/plots (as configured, then
/// relative to the running program's bin/), that has `script`.
/// Throws flynn::Error listing the places searched when none has it.
std::string plot_script_dir(const std::string& script);

/// Runs plot script `script` (a file name such as "scaling.py", found by plot_script_dir)
/// with `args` as sys.argv[1:]. Nothing goes through a shell and no temporary file is
/// written: the script's stderr comes back through a pipe. Throws flynn::Error with that
/// stderr when the script fails or cannot be started.
void run_plot_script(const std::string& script, const std::vector<std::string>& args);

}  // namespace flynn::harness
