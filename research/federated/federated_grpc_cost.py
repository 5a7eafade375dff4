#!/usr/bin/env python3
"""What the gRPC federation's protocol itself costs each party: bytes and seconds for tau
parties on 127.0.0.1, with data small enough that the protocol, not the counting, dominates.

Each party holds 200 rows of 5 features (3 Gaussian classes, the same for every build; seed 1),
m = 256, L = 3, P-256 certificates, one thread per party, secure aggregation on and the
parties' default policy (at least 3 parties). For each tau in --parties and each flynn binary
given (--flynn, and optionally --baseline, e.g. a build of the previous release), the
federation runs --repeat times, the builds taking turns run by run; every party's model is
checked byte-identical to `flynn train` on the pooled rows. Reported per (tau, build): bytes sent and received per party (the largest
over parties; gRPC message sizes), the slowest party's `seconds` and the federation's wall
time, medians over the runs.

Usage: federated_grpc_cost.py [--flynn build/flynn] [--baseline OTHER_FLYNN] [--parties 3,8,16]
                              [--repeat 3] [--work DIR]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from federated_grpc_bench import make_pki, sh  # noqa: E402

LABELS = "c0,c1,c2"
HYPER = ["--m", "256", "--rho", "8", "--seed", "7"]


def write_shards(work, tau):
    rng = random.Random(1)
    pooled = []
    for p in range(tau):
        rows = []
        for i in range(200):
            c = i % 3
            rows.append(",".join(f"{rng.gauss(2.0 * c, 1.0):.5f}" for _ in range(5)) + f",c{c}\n")
        with open(os.path.join(work, f"shard{tau}_{p}.csv"), "w") as f:
            f.writelines(rows)
        pooled += rows
    with open(os.path.join(work, f"pooled{tau}.csv"), "w") as f:
        f.writelines(pooled)


def federation(flynn, work, pki, tau):
    err = open(os.path.join(work, "serve.err"), "w+")
    serve = subprocess.Popen(
        [flynn, "federated", "serve", "--listen", "127.0.0.1:0", "--parties", str(tau), "--ca", f"{pki}/ca.pem",
         "--cert", f"{pki}/server.pem", "--key", f"{pki}/server.key", "--labels", LABELS, "--deadline", "120",
         "--json"] + HYPER, stdout=subprocess.PIPE, stderr=err, text=True)
    port = None
    for _ in range(1000):
        err.seek(0)
        text = err.read()
        if "(port " in text:
            port = text.split("(port ")[1].split(")")[0]
            break
        time.sleep(0.02)
    if not port:
        serve.kill()
        sys.exit("the coordinator did not start")
    t0 = time.time()
    joins = [subprocess.Popen(
        [flynn, "federated", "join", "--server", f"127.0.0.1:{port}", "--ca", f"{pki}/ca.pem",
         "--cert", f"{pki}/party{r:02d}.pem", "--key", f"{pki}/party{r:02d}.key",
         "--data", os.path.join(work, f"shard{tau}_{r}.csv"), "--model", os.path.join(work, f"p{r}.model"),
         "--threads", "1", "--deadline", "120", "--json", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(tau)]
    parties = []
    for j in joins:
        out, e = j.communicate()
        if j.returncode != 0:
            sys.exit(f"a party failed: {e}")
        parties.append(json.loads(out))
    wall = time.time() - t0
    serve.communicate()
    if serve.returncode != 0:
        sys.exit("the coordinator failed")
    return parties, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flynn", default="build/flynn")
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--parties", default="3,8,16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="flynn-grpc-cost-")
    taus = [int(t) for t in a.parties.split(",")]
    pki = os.path.join(work, "pki")
    make_pki(pki, ["server"] + [f"party{r:02d}" for r in range(max(taus))])
    builds = [("this build", os.path.abspath(a.flynn))]
    if a.baseline:
        builds.insert(0, ("baseline", os.path.abspath(a.baseline)))
    lines = ["| τ | build | bytes sent / party (max) | bytes received / party (max) | party seconds (max) | "
             "federation wall s |", "|---:|---|---:|---:|---:|---:|"]
    for tau in taus:
        write_shards(work, tau)
        runs = {label: dict(sent=[], received=[], seconds=[], wall=[]) for label, _ in builds}
        # The builds take turns run by run, so that a change in the machine's load falls on both.
        for _ in range(a.repeat):
            for label, flynn in builds:
                central = os.path.join(work, "central.model")
                sh(f"{flynn} train --data {work}/pooled{tau}.csv --labels {LABELS} {' '.join(HYPER)} "
                   f"--model {central} --quiet > /dev/null")
                parties, wall = federation(flynn, work, pki, tau)
                for r in range(tau):
                    if open(os.path.join(work, f"p{r}.model"), "rb").read() != open(central, "rb").read():
                        sys.exit(f"{label}, tau={tau}: party {r}'s model differs from central training")
                run = runs[label]
                run["sent"].append(max(p["wire_bytes"]["sent"] for p in parties))
                run["received"].append(max(p["wire_bytes"]["received"] for p in parties))
                run["seconds"].append(max(p["seconds"] for p in parties))
                run["wall"].append(wall)
        for label, _ in builds:
            row = {k: statistics.median(v) for k, v in runs[label].items()}
            row.update(parties=tau, build=label, runs=a.repeat, load=os.getloadavg()[0])
            print(json.dumps(row), flush=True)
            lines.append(f"| {tau} | {label} | {row['sent']:,.0f} | {row['received']:,.0f} | {row['seconds']:.3f} | "
                         f"{row['wall']:.2f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
