#!/usr/bin/env python3
"""flynn.dask at scale: a synthetic table (default 1,000,000 × 20 float32, 5 classes)
generated on a distributed.LocalCluster's workers, trained there with flynn.dask.fit and
centrally with FlyNNClassifier.fit on the same rows; reports whether the model files are
byte-identical, the wall times and each worker's peak memory (docs/guide/python.md, "Scale-out
with Dask").

    build-python/venv/bin/python research/performance/dask_scaleout.py [--rows N] [--workers W] ...

Run it with the interpreter that has flynn installed (the workers import it). It needs the
cluster under `if __name__ == "__main__"`: workers are spawned processes.
"""
import argparse
import json
import os
import resource
import time

import numpy as np


def peak_rss_mib():
    """This process's peak resident memory (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds():
    """CPU time this process has used (all threads, user + system): on a shared machine
    less disturbed than wall time."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def blobs(labels, noise, centres):
    """Rows of the classes in `labels` (a column) around their centres: centre + unit
    noise, float32."""
    return (centres[labels[:, 0]] + noise).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--threads-per-worker", type=int, default=1)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--variant", default=None, help="FlyNN variant (default: flynn's default)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()

    import dask.array as da
    import distributed

    import flynn
    import flynn.dask

    params = dict(seed=args.seed, variant=args.variant)
    out = dict(rows=args.rows, features=args.features, classes=args.classes,
               workers=args.workers, threads_per_worker=args.threads_per_worker,
               partitions=args.partitions, variant=args.variant or "default",
               cpu_count=os.cpu_count())
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads_per_worker,
                                  host="127.0.0.1", dashboard_address=None,
                                  processes=True) as cluster, distributed.Client(cluster) as client:
        idle = client.run(peak_rss_mib)
        # The table is generated on the workers and persisted there, as a table read from
        # storage would be; the driver never holds it for the Dask fit.
        rs = da.random.RandomState(args.seed)
        chunk = -(-args.rows // args.partitions)
        centres = np.random.default_rng(args.seed).normal(0, 1.5, (args.classes, args.features))
        y = rs.randint(0, args.classes, size=args.rows, chunks=chunk)
        noise = rs.standard_normal((args.rows, args.features), chunks=(chunk, args.features))
        X = da.map_blocks(blobs, y[:, None], noise, centres, dtype=np.float32,
                          chunks=noise.chunks)
        X, y = client.persist([X, y])
        distributed.wait([X, y])
        before = client.run(peak_rss_mib)
        cpu_before = client.run(cpu_seconds)

        t, cpu = time.perf_counter(), time.process_time()
        clf = flynn.dask.fit(X, y, **params)
        out["dask_fit_s"] = time.perf_counter() - t
        cpu_after = client.run(cpu_seconds)
        out["dask_fit_cpu_s"] = (sum(cpu_after.values()) - sum(cpu_before.values()) +
                                 time.process_time() - cpu)  # workers + driver
        after = client.run(peak_rss_mib)
        out["worker_peak_rss_mib_idle"] = sorted(round(v) for v in idle.values())
        out["worker_peak_rss_mib_before_fit"] = sorted(round(v) for v in before.values())
        out["worker_peak_rss_mib_after_fit"] = sorted(round(v) for v in after.values())

        t = time.perf_counter()
        pred = flynn.dask.predict(clf, X).compute()
        out["dask_predict_s"] = time.perf_counter() - t

        t = time.perf_counter()
        Xc, yc = X.compute(), y.compute()
        out["gather_to_driver_s"] = time.perf_counter() - t

    # Central: the same rows on the driver, all its cores (the cluster is shut down).
    t, cpu = time.perf_counter(), time.process_time()
    ref = flynn.FlyNNClassifier(**params).fit(Xc, yc)
    out["central_fit_s"] = time.perf_counter() - t
    out["central_fit_cpu_s"] = time.process_time() - cpu
    t = time.perf_counter()
    ref_pred = ref.predict(Xc)
    out["central_predict_s"] = time.perf_counter() - t
    out["driver_peak_rss_mib"] = round(peak_rss_mib())
    out["model_bytes"] = len(ref.to_bytes())
    out["byte_identical"] = clf.to_bytes() == ref.to_bytes()
    out["predictions_equal"] = bool(np.array_equal(pred, ref_pred))
    out["train_accuracy"] = float(np.mean(ref_pred == yc))
    out["load_average_1min"] = os.getloadavg()[0]
    for key in ("dask_fit_s", "dask_fit_cpu_s", "dask_predict_s", "gather_to_driver_s",
                "central_fit_s", "central_fit_cpu_s", "central_predict_s"):
        out[key] = round(out[key], 2)
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if not (out["byte_identical"] and out["predictions_equal"]):
        raise SystemExit("flynn.dask's model or predictions differ from the central ones")


if __name__ == "__main__":
    main()
