#!/usr/bin/env python3
"""Convert the Microsoft Philly GPU trace (CSV) into a lahar-sim scenario file (spec 6.1).

Input columns: timestamp,duration,num_gpus,gpu_time,cluster
  (submit time "YYYY-MM-DD HH:MM:SS", run time in seconds, GPUs, GPU-seconds, virtual cluster).

Mapping (see hack/traces/README.md):
  - one trace row = one job (PodGroup) named philly-NNNNNN, NNNNNN = the row's 0-based index
    among the CSV's data rows (so a job can be traced back to its row);
  - a G-GPU job = ceil(G/8) pods of 8 GPUs, the last one taking the remainder (task "worker"
    for the full pods, task "tail" for a partial last pod), minAvailable = the pod count;
    each pod requests cpu 6 x GPUs, memory 48Gi x GPUs, nvidia.com/gpu GPUs;
  - `cluster` is the queue (weight 1; only the queues used are emitted; empty -> default);
  - submit = timestamp - first selected timestamp, duration = trace duration, both divided by
    --time-scale and rounded to whole seconds (duration at least 1s), duration then capped at
    --max-duration;
  - with --elastic-fraction F, that fraction of the selected jobs with G >= 2 (chosen with
    random.Random(--seed)) becomes elastic: task master (1 pod, 1 GPU) + task worker (2G-1 pods of
    1 GPU), minAvailable = G (so min = G GPUs as in the trace, max = 2G), duration = trace duration
    at min size, scaling {amdahl: 0.05}, restartCost --restart-cost (60s).
Nodes: --nodes N identical nodes gpu-0..gpu-(N-1), each cpu 64, memory 512Gi, 8 GPUs, 110 pods.
"""

import argparse
import csv
import datetime
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib as tl  # noqa: E402

from tracelib import GPUS_PER_NODE, NODE_ALLOCATABLE, pod_resources  # noqa: E402
AMDAHL_SERIAL = 0.05


class TraceError(Exception):
    pass


def read_philly(path):
    """Returns (rows, skipped): rows are dicts with index, t (epoch s), duration (s), gpus, cluster,
    in file order. Blank and malformed rows are skipped and counted."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror}") from None
    rows, skipped = [], 0
    with f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise TraceError(f"{path}: empty file")
        header = [h.strip() for h in header]
        need = ["timestamp", "duration", "num_gpus", "cluster"]
        missing = [c for c in need if c not in header]
        if missing:
            raise TraceError(f"{path}: missing column(s) {', '.join(missing)}")
        col = {name: header.index(name) for name in need}
        index = -1
        for rec in reader:
            if not rec or all(not x.strip() for x in rec):
                continue  # blank line (the file ends with one)
            index += 1
            try:
                ts = rec[col["timestamp"]].strip()
                t = datetime.datetime.strptime(ts, "%Y-%m-%d %H:%M:%S").replace(
                    tzinfo=datetime.timezone.utc).timestamp()
                duration = float(rec[col["duration"]])
                gpus = int(float(rec[col["num_gpus"]]))
                cluster = rec[col["cluster"]].strip()
            except (ValueError, IndexError):
                skipped += 1
                continue
            if gpus <= 0 or not math.isfinite(duration) or duration < 0:
                skipped += 1
                continue
            rows.append({"index": index, "t": t, "duration": duration, "gpus": gpus,
                         "cluster": cluster})
    return rows, skipped


def select_jobs(rows, start_offset_ms, jobs):
    """The first `jobs` rows (all if None) by submit time, at or after trace start + offset.
    Ties keep file order."""
    if not rows:
        return []
    t_first = min(r["t"] for r in rows)
    cutoff = t_first + start_offset_ms / 1000.0
    chosen = sorted((r for r in rows if r["t"] >= cutoff), key=lambda r: (r["t"], r["index"]))
    return chosen if jobs is None else chosen[:jobs]


def scaled_seconds(seconds, scale):
    return int(round(seconds / scale))


def build_job(row, t0, args, elastic):
    g = row["gpus"]
    submit_s = scaled_seconds(row["t"] - t0, args.time_scale)
    dur_ms = max(1, scaled_seconds(row["duration"], args.time_scale)) * 1000
    if args.max_duration is not None:
        dur_ms = min(dur_ms, args.max_duration)
    queue = tl.dns_label(row["cluster"], "default") if args.queues == "cluster" else "default"
    job = {"name": f"philly-{row['index']:06d}", "queue": queue,
           "submit": tl.format_duration(submit_s * 1000)}
    if elastic:
        job["minAvailable"] = g
        job["duration"] = tl.format_duration(dur_ms)
        job["scaling"] = tl.Flow([("amdahl", AMDAHL_SERIAL)])
        job["restartCost"] = tl.format_duration(args.restart_cost)
        job["tasks"] = [
            {"name": "master", "replicas": 1, "minAvailable": 1, "resources": pod_resources(1)},
            {"name": "worker", "replicas": 2 * g - 1, "resources": pod_resources(1)},
        ]
    else:
        tasks, job["minAvailable"] = tl.rigid_gang_tasks(g)
        job["duration"] = tl.format_duration(dur_ms)
        job["tasks"] = tasks
    return job


def choose_elastic(selected, fraction, seed):
    """Indices (into `selected`) of the jobs made elastic: round(fraction x eligible) of those with
    >= 2 GPUs, sampled with random.Random(seed)."""
    eligible = [i for i, r in enumerate(selected) if r["gpus"] >= 2]
    k = int(round(fraction * len(eligible)))
    return set(random.Random(seed).sample(eligible, k)) if k else set()


def build(args):
    """Returns (doc, header_lines) for the parsed arguments; raises TraceError."""
    shown_input = None if args.input is None else args.input  # for the header's command
    if args.input is None:
        args.input = tl.find_trace_file("philly.csv")
    rows, skipped = read_philly(args.input)
    if skipped:
        print(f"philly_to_scenario: skipped {skipped} malformed row(s)", file=sys.stderr)
    selected = select_jobs(rows, args.start_offset, args.jobs)
    if not selected:
        raise TraceError("no jobs selected (check --start-offset / --jobs)")
    elastic = choose_elastic(selected, args.elastic_fraction, args.seed)
    t0 = selected[0]["t"]
    jobs = [build_job(r, t0, args, i in elastic) for i, r in enumerate(selected)]

    cluster_gpus = args.nodes * GPUS_PER_NODE
    too_big = [r for i, r in enumerate(selected) if r["gpus"] > cluster_gpus]
    if too_big:
        print(f"philly_to_scenario: warning: {len(too_big)} job(s) need more than the cluster's "
              f"{cluster_gpus} GPUs and can never run (largest: {max(r['gpus'] for r in too_big)})",
              file=sys.stderr)

    doc = {"name": args.name or f"philly-{len(jobs)}",
           "nodes": [{"namePrefix": "gpu-", "count": args.nodes, "allocatable": NODE_ALLOCATABLE}]}
    used = sorted({j["queue"] for j in jobs} - {"default"})
    if used:
        doc["queues"] = [{"name": q, "weight": 1} for q in used]
    doc["jobs"] = jobs

    span = jobs[-1]["submit"]
    total_gpus = sum(r["gpus"] for r in selected)
    cmd = tl.fmt_args([
        ("--input", shown_input),
        ("--start-offset", tl.format_duration(args.start_offset) if args.start_offset else None),
        ("--jobs", args.jobs), ("--nodes", args.nodes),
        ("--max-duration", tl.format_duration(args.max_duration) if args.max_duration else None),
        ("--time-scale", tl.fmt_float(args.time_scale) if args.time_scale != 1 else None),
        ("--queues", args.queues if args.queues != "cluster" else None),
        ("--elastic-fraction", tl.fmt_float(args.elastic_fraction) if elastic else None),
        ("--seed", args.seed if elastic else None),
        ("--restart-cost", tl.format_duration(args.restart_cost)
         if elastic and args.restart_cost != 60000 else None),
        ("--name", args.name),
    ])
    header = [
        "Lahar scenario (spec 6.1) converted from the Microsoft Philly trace.",
        f"Generated by: python3 hack/traces/philly_to_scenario.py {cmd}",
        f"{len(jobs)} jobs ({len(elastic)} elastic), {total_gpus} GPUs requested at min size, "
        f"submits over {span}, {args.nodes} nodes x {GPUS_PER_NODE} GPUs.",
        "",
        "Trace attribution:",
    ] + ["  " + line for line in tl.PHILLY_ATTRIBUTION] + [""]
    return doc, header


def convert(args):
    """Returns the YAML text for the parsed arguments; raises TraceError."""
    doc, header = build(args)
    return tl.to_json(doc, header) if args.format == "json" else tl.to_yaml(doc, header)


def build_parser():
    p = argparse.ArgumentParser(
        prog="philly_to_scenario.py",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", default=None,
                   help="Philly CSV (default: <repo>/../shared/traces/philly.csv, else "
                        "$LAHAR_TRACES_DIR/philly.csv, else /work/shared/traces/philly.csv)")
    p.add_argument("--output", "-o", default="-", help="scenario file to write (default: stdout)")
    p.add_argument("--start-offset", type=tl.duration_arg, default=0,
                   help="skip jobs submitted earlier than trace start + this (Go duration)")
    p.add_argument("--jobs", type=tl.positive_int, default=None,
                   help="take the first N jobs by submit time (default: all)")
    p.add_argument("--nodes", type=tl.positive_int, default=32,
                   help="number of 8-GPU nodes gpu-0.. (default 32)")
    p.add_argument("--max-duration", type=tl.duration_arg, default=None,
                   help="cap each job's run time (Go duration; applied after --time-scale)")
    p.add_argument("--time-scale", type=tl.positive_float, default=1.0,
                   help="divide submit times and durations by this (default 1)")
    p.add_argument("--queues", choices=["cluster", "default"], default="cluster",
                   help="cluster: each distinct `cluster` value is a queue of weight 1 (default); "
                        "default: every job in queue default")
    p.add_argument("--elastic-fraction", type=tl.fraction, default=0.0,
                   help="fraction of jobs with >= 2 GPUs made elastic (default 0)")
    p.add_argument("--seed", type=int, default=1, help="random seed for --elastic-fraction (1)")
    p.add_argument("--restart-cost", type=tl.duration_arg, default=60000,
                   help="restartCost of elastic jobs (default 60s, not time-scaled)")
    p.add_argument("--name", default=None, help="scenario name (default philly-<jobs>)")
    p.add_argument("--format", choices=["yaml", "json"], default="yaml",
                   help="yaml (default), or json: the same scenario, loaded by lahar-sim in a "
                        "fraction of the time and memory (use it for the whole trace)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        text = convert(args)
        tl.write_output(text, args.output)
    except TraceError as e:
        print(f"philly_to_scenario: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"philly_to_scenario: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
