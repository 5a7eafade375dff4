"""Python vs C++ on Fashion-MNIST: batch prediction, one-row latency, and fit's peak memory.

    /usr/bin/python3 python/bench/bench_python.py --timing-tool build-python/cmake-*/python/flynn_python_predict_timing
    ... --setting default       flynn's defaults (zsign-q+paper, m = 131072, s = 64, rho = 64)

(the package installed, e.g. in build-python/venv; the timing tool built with
`cmake --build <that build dir> --target flynn_python_predict_timing`). Prints a JSON
report. Both sides time the same thing: in-process calls on uint8 rows already in memory,
the model trained here in the paper's setting (m = 108192, s = 82, rho = 8, gamma = 0.8;
or flynn's defaults) and saved for the C++ side, the same thread count. Rounds alternate
C++ and Python so that load on a shared machine hits both alike; each measure is the
median over rounds of per-round medians, in wall time and in process CPU time (all
threads). one_row_predict also holds the one-row latency against a row of the batch
(the bound: at most 1.5x) and Python's one row against C++'s (at most 20 microseconds more).
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist"
PAPER = dict(m=108192, s=82, rho=8, gamma=0.8)
SETTINGS = {"paper": PAPER, "default": {}}


def read_idx(path):
    """An IDX file (gzip) as a numpy array: images n × 784 uint8, labels n uint8."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    return arr.reshape(shape[0], -1) if ndim > 1 else arr


def measure(fn, repeats):
    """Median wall and process-CPU seconds of `repeats` calls of fn."""
    wall, cpu = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall)), float(np.median(cpu))


def fit_memory(dtype, order, rows, setting):
    """Peak RSS growth of fit on a (rows × 784) array of `dtype` in `order`, measured in a
    fresh process: VmHWM is reset after the array exists (/proc/self/clear_refs), so only
    what fit allocates counts."""
    code = f"""
import json, numpy as np, flynn, sys
sys.path.insert(0, {os.path.dirname(__file__)!r})
from bench_python import read_idx, FASHION, SETTINGS
X = np.asarray(read_idx(FASHION + "/train-images-idx3-ubyte.gz")[:{rows}], dtype=np.{dtype}, order="{order}")
y = read_idx(FASHION + "/train-labels-idx1-ubyte.gz")[:{rows}]
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
clf = flynn.FlyNNClassifier(**SETTINGS[{setting!r}])
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS:")
clf.fit(X, y)
print(json.dumps({{"array_bytes": X.nbytes, "peak_growth_bytes": status("VmHWM:") - before,
                  "model_file_bytes": len(clf.to_bytes())}}))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    import flynn
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timing-tool", required=True, help="flynn_python_predict_timing")
    p.add_argument("--threads", type=int, default=1, help="n_jobs on both sides (default 1)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--one-row-calls", type=int, default=100)
    p.add_argument("--no-memory", action="store_true", help="skip the fit memory measures")
    p.add_argument("--setting", choices=sorted(SETTINGS), default="paper",
                   help="the model: the paper's setting (default) or flynn's defaults")
    a = p.parse_args()
    params = SETTINGS[a.setting]

    Xtr = read_idx(f"{FASHION}/train-images-idx3-ubyte.gz")
    ytr = read_idx(f"{FASHION}/train-labels-idx1-ubyte.gz")
    Xte = read_idx(f"{FASHION}/t10k-images-idx3-ubyte.gz")
    yte = read_idx(f"{FASHION}/t10k-labels-idx1-ubyte.gz")
    n_jobs = a.threads if a.threads > 0 else None
    clf = flynn.FlyNNClassifier(**params, n_jobs=n_jobs)
    fit_wall, fit_cpu = measure(lambda: clf.fit(Xtr, ytr), 1)
    report = {"setting": a.setting, "threads": a.threads, "rounds": a.rounds, "fit_wall": fit_wall,
              "fit_cpu": fit_cpu, "accuracy": float(clf.score(Xte, yte))}
    rows = [Xte[i: i + 1] for i in range(a.one_row_calls)]
    cpp_rounds, py_rounds = [], []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "fmnist.flynn")
        clf.save(model)
        for _ in range(a.rounds):
            cpp_rounds.append(json.loads(subprocess.run(
                [a.timing_tool, model, f"{FASHION}/t10k-images-idx3-ubyte.gz",
                 str(max(a.threads, 0)), "1", str(a.one_row_calls)],
                check=True, capture_output=True, text=True).stdout))
            batch = measure(lambda: clf.predict(Xte), 1)
            it = iter(rows)
            one = measure(lambda: clf.predict(next(it)), a.one_row_calls)
            py_rounds.append({"batch_wall": batch[0], "batch_cpu": batch[1],
                              "one_row_wall": one[0], "one_row_cpu": one[1]})

    def med(rounds, key):
        return float(np.median([r[key] for r in rounds]))

    for what in ("batch", "one_row"):
        entry = {}
        for clock in ("wall", "cpu"):
            key = f"{what}_{clock}"
            entry[f"python_{clock}"] = med(py_rounds, key)
            entry[f"cpp_{clock}"] = med(cpp_rounds, key)
            entry[f"ratio_{clock}"] = entry[f"python_{clock}"] / entry[f"cpp_{clock}"]
        if what == "one_row":
            for clock in ("wall", "cpu"):
                bound = entry[f"cpp_{clock}"] + 20e-6
                entry[f"bound_{clock}"] = bound
                entry[f"within_bound_{clock}"] = entry[f"python_{clock}"] <= bound
                # One row against a row of the batch (len(Xte) rows), each side.
                for side in ("python", "cpp"):
                    per_row = report["batch_predict"][f"{side}_{clock}"] / len(Xte)
                    entry[f"{side}_per_batch_row_{clock}"] = per_row
                    entry[f"{side}_one_row_over_batch_row_{clock}"] = (
                        entry[f"{side}_{clock}"] / per_row)
        report[what + "_predict"] = entry
    if not a.no_memory:
        report["fit_memory"] = {
            "float32 C (read in place)": fit_memory("float32", "C", 60000, a.setting),
            "float64 C (converted in blocks)": fit_memory("float64", "C", 60000, a.setting),
            "uint8 C (read in place)": fit_memory("uint8", "C", 60000, a.setting),
            "float32 F (converted in blocks)": fit_memory("float32", "F", 60000, a.setting),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
