#!/usr/bin/env python3
"""Bytes and wall time per party of a gRPC federation on Fashion-MNIST over loopback.

For each number of parties TAU (default 2, 4, 8, 16) and each secure-aggregation setting
(off, on), starts `flynn federated serve` and TAU x `flynn federated join` on 127.0.0.1
(certificates made here with the openssl CLI), every party holding an even IDX shard of
the 60000 training images (research/federated/federated_fashion_shards.py). Records, per party:
gRPC bytes sent and received (protobuf message sizes), the aggregation phase's seconds
(masking + relay + unmasking: the part secure aggregation changes), training seconds and
the party's wall time; checks every party's model against `flynn train` on all rows.

Usage: federated_grpc_bench.py [--flynn build/flynn] [--work DIR] [--parties 2,4,8,16]
                                [--hyper "FLAGS"] [--out results.md]
--hyper defaults to the spec's Fashion-MNIST hyper-parameters (as research/federated/federated_mpi_demo.sh:
m = 108192, so each party's counts are L*m*4 = 4.3 MB).
Writes a markdown table (and the raw JSON lines beside it).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FASHION = "/usr/share/datasets/fashion-mnist"
LABELS = "0,1,2,3,4,5,6,7,8,9"


def sh(cmd, **kw):
    subprocess.run(cmd, shell=True, check=True, **kw)


def make_pki(d, names):
    os.makedirs(d, exist_ok=True)
    # Extended key usage: serverAuth for the coordinator ("server"), clientAuth for parties.
    for role, usage in (("server", "serverAuth"), ("ext", "clientAuth")):
        with open(os.path.join(d, f"{role}.cnf"), "w") as f:
            f.write(f"subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage={usage}\n")
    ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    sh(f"cd {d} && openssl req -x509 {ec} -subj /CN=ca -keyout ca.key -out ca.pem -days 2 2>/dev/null")
    for n in names:
        sh(f"cd {d} && openssl req {ec} -subj /CN={n} -keyout {n}.key -out {n}.csr 2>/dev/null && "
           f"openssl x509 -req -in {n}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out {n}.pem "
           f"-days 2 -extfile {'server' if n == 'server' else 'ext'}.cnf 2>/dev/null")


def run_federation(flynn, work, pki, tau, secure, hyper):
    shards = os.path.join(work, f"shards{tau}")
    err = open(os.path.join(work, f"serve_{tau}_{secure}.err"), "w+")
    serve = subprocess.Popen(
        [flynn, "federated", "serve", "--listen", "127.0.0.1:0", "--parties", str(tau),
         "--ca", f"{pki}/ca.pem", "--cert", f"{pki}/server.pem", "--key", f"{pki}/server.key",
         "--labels", LABELS, "--secure-aggregation", secure, "--deadline", "900", "--json"] + hyper,
        stdout=subprocess.PIPE, stderr=err, text=True)
    port = None
    for _ in range(500):
        err.seek(0)
        m = re.search(r"\(port (\d+)\)", err.read())
        if m:
            port = m.group(1)
            break
        time.sleep(0.02)
    if not port:
        serve.kill()
        sys.exit("the coordinator did not start")
    t0 = time.time()
    # Each party's policy refuses fewer than 3 parties and no secure aggregation by default;
    # the benchmark measures those settings too, so its parties weaken it explicitly.
    weakened = ["--min-parties", str(tau)] + (["--allow-no-secure-aggregation"] if secure == "off" else [])
    joins = []
    for r in range(tau):
        name = f"party{r:02d}"
        joins.append(subprocess.Popen(
            [flynn, "federated", "join", "--server", f"127.0.0.1:{port}", "--ca", f"{pki}/ca.pem",
             "--cert", f"{pki}/{name}.pem", "--key", f"{pki}/{name}.key",
             "--data", f"{shards}/shard_{r}-images-idx3-ubyte",
             "--model", os.path.join(work, f"p{r}.model"), "--threads", "1", "--json", "--quiet"]
            + weakened,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = []
    for j in joins:
        out, e = j.communicate()
        if j.returncode != 0:
            sys.exit(f"a party failed: {e}")
        outs.append(json.loads(out))
    wall = time.time() - t0
    out, _ = serve.communicate()
    if serve.returncode != 0:
        sys.exit("the coordinator failed")
    return outs, json.loads(out), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flynn", default="build/flynn")
    ap.add_argument("--work", default=None)
    ap.add_argument("--parties", default="2,4,8,16")
    ap.add_argument("--hyper", default="--expansion-factor 138 --connection-sparsity 0.105 "
                    "--wta-nnz 8 --gamma 0.8 --seed 5489")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    flynn = os.path.abspath(a.flynn)
    work = a.work or tempfile.mkdtemp(prefix="flynn-grpc-bench-")
    os.makedirs(work, exist_ok=True)
    taus = [int(t) for t in a.parties.split(",")]
    hyper = a.hyper.split()
    pki = os.path.join(work, "pki")
    make_pki(pki, ["server"] + [f"party{r:02d}" for r in range(max(taus))])

    # The central model: every federation must reproduce it byte for byte.
    central = os.path.join(work, "central.model")
    sh(f"{flynn} train --data {FASHION}/train-images-idx3-ubyte.gz --labels {LABELS} "
       f"{a.hyper} --model {central} --quiet > /dev/null")
    expected = open(central, "rb").read()

    rows, raw = [], []
    for tau in taus:
        sh(f"/usr/bin/python3 {HERE}/federated_fashion_shards.py {work}/shards{tau} {tau} {FASHION}",
           stdout=subprocess.DEVNULL)
        for secure in ("off", "on"):
            parties, server, wall = run_federation(flynn, work, pki, tau, secure, hyper)
            for r in range(tau):
                if open(os.path.join(work, f"p{r}.model"), "rb").read() != expected:
                    sys.exit(f"tau={tau} secure={secure}: party {r}'s model differs from central training")
            sent = [p["wire_bytes"]["sent"] for p in parties]
            recv = [p["wire_bytes"]["received"] for p in parties]
            aggr = [p["seconds_aggregate"] for p in parties]
            total = [p["seconds"] for p in parties]
            masking = [p["seconds_masking"] for p in parties]
            row = dict(parties=tau, secure=secure, sent_mean=sum(sent) / tau, sent_max=max(sent),
                       received_mean=sum(recv) / tau, aggregate_s_max=max(aggr),
                       aggregate_s_mean=sum(aggr) / tau, masking_s_max=max(masking),
                       party_wall_s_max=max(total), wall_s=wall)
            rows.append(row)
            raw.append(dict(row, parties_detail=parties, server=server))
            print(json.dumps(row), flush=True)

    lines = ["| parties | secure aggregation | bytes sent / party | bytes received / party | "
             "aggregation s (max) | masking s (max) | party wall s (max) | identical to central |",
             "|---:|:---:|---:|---:|---:|---:|---:|:---:|"]
    for r in rows:
        lines.append(f"| {r['parties']} | {r['secure']} | {r['sent_mean']:,.0f} | {r['received_mean']:,.0f} | "
                     f"{r['aggregate_s_max']:.3f} | {r['masking_s_max']:.3f} | {r['party_wall_s_max']:.2f} | yes |")
    by = {(r["parties"], r["secure"]): r for r in rows}
    lines.append("")
    for tau in taus:
        on, off = by[(tau, "on")], by[(tau, "off")]
        lines.append(f"- {tau} parties: secure aggregation sends {on['sent_mean'] / off['sent_mean']:.3f}x "
                     f"the plain bytes; aggregation phase +{on['aggregate_s_max'] - off['aggregate_s_max']:.3f} s (max over parties)")
    text = "\n".join(lines) + "\n"
    print(text)
    out = a.out or os.path.join(work, "results.md")
    with open(out, "w") as f:
        f.write(text)
    with open(os.path.splitext(out)[0] + ".jsonl", "w") as f:
        for r in raw:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
