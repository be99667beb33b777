#!/usr/bin/env python3
"""Deterministic synthetic workloads for lahar-sim, written as scenario files (spec 6.1).

Generators:
  bench-week  a week of work for a 1,000-node GPU cluster: 10,000 jobs over 4 queues, gang
              sizes 1..32 GPUs, 30% elastic jobs, Poisson arrivals, truncated-lognormal run times
              in [5m, 24h] tuned so that the GPU demand (GPU-seconds at min size) is --load of
              the cluster's GPU capacity over the arrival window.

The same generator, options and --seed always give a byte-identical file (one random.Random(seed)
drawn in a fixed order; no clock, no hashing).

bench-week details:
  - nodes gpu-0..gpu-(N-1): cpu 64, memory 512Gi, nvidia.com/gpu 8, pods 110 (as the Philly
    converter's nodes);
  - queues team-a..team-d with weights 1, 2, 3, 4; arrivals are split 40/30/20/10% among them,
    so the lightest queue asks the most and fair sharing has work to do;
  - gang sizes (GPUs at min): 1 (15%), 2 (8%), 3 (1%), 4 (12%), 6 (1%), 8 (25%), 12 (2%),
    16 (22%), 24 (2%), 32 (12%);
  - rigid jobs: ceil(G/8) pods of 8 GPUs, the last taking the remainder, minAvailable = pods;
  - elastic jobs (exactly round(fraction x jobs), sampled): task master (1 pod, 1 GPU) + task
    worker (1-GPU pods), minAvailable = G, max = G + U{1..G} pods (so min < max <= 2G),
    scaling {amdahl: p} with p in [0.01, 0.10], restartCost 30s / 60s / 120s;
  - every pod requests cpu 6 and memory 48Gi per GPU;
  - arrivals: exponential inter-arrival gaps, rescaled so the N arrivals fill --days (a Poisson
    process conditioned on N arrivals), rounded to whole seconds;
  - run times (at min size): lognormal with sigma --sigma truncated to [5m, 24h] by inverse-CDF
    sampling; its median is found by bisection so that sum(G x duration) = load x GPUs x window.
"""

import argparse
import math
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib as tl  # noqa: E402

from tracelib import GPUS_PER_NODE, NODE_ALLOCATABLE, pod_resources  # noqa: E402
QUEUES = [("team-a", 1, 0.40), ("team-b", 2, 0.30), ("team-c", 3, 0.20), ("team-d", 4, 0.10)]
GANG_SIZES = [(1, 15), (2, 8), (3, 1), (4, 12), (6, 1), (8, 25), (12, 2), (16, 22), (24, 2),
              (32, 12)]
MIN_DURATION_S, MAX_DURATION_S = 300, 86400
RESTART_COSTS_S = [30, 60, 120]

_NORMAL = statistics.NormalDist()


def truncated_lognormal(us, median, sigma, lo, hi):
    """Maps uniforms us in (0,1) to a lognormal(median, sigma) truncated to [lo, hi] (inverse
    CDF), rounded to whole seconds."""
    mu = math.log(median)
    a = _NORMAL.cdf((math.log(lo) - mu) / sigma)
    b = _NORMAL.cdf((math.log(hi) - mu) / sigma)
    out = []
    for u in us:
        p = a + u * (b - a)
        p = min(max(p, 1e-12), 1 - 1e-12)
        d = math.exp(mu + sigma * _NORMAL.inv_cdf(p))
        out.append(min(hi, max(lo, int(round(d)))))
    return out


def tune_durations(us, gpus, sigma, target_gpu_seconds):
    """Finds the median (by bisection on its log, a fixed 30 steps: deterministic) whose truncated
    lognormal durations give sum(gpus x duration) closest to the target. Returns
    (durations, median)."""
    lo, hi = math.log(MIN_DURATION_S) - 3 * sigma, math.log(MAX_DURATION_S) + 3 * sigma
    for _ in range(30):
        mid = (lo + hi) / 2
        ds = truncated_lognormal(us, math.exp(mid), sigma, MIN_DURATION_S, MAX_DURATION_S)
        if sum(g * d for g, d in zip(gpus, ds)) < target_gpu_seconds:
            lo = mid
        else:
            hi = mid
    median = math.exp((lo + hi) / 2)
    return truncated_lognormal(us, median, sigma, MIN_DURATION_S, MAX_DURATION_S), median


def bench_week(args):
    """Returns (doc, header_lines) of the bench-week scenario."""
    rng = random.Random(args.seed)
    n, window_s = args.jobs, int(round(args.days * 86400))
    cluster_gpus = args.nodes * GPUS_PER_NODE

    # Arrivals: N exponential gaps normalised so that the (N+1)-th would land at the window end.
    gaps = [rng.expovariate(1.0) for _ in range(n + 1)]
    total = sum(gaps)
    submits, acc = [], 0.0
    for g in gaps[:n]:
        acc += g
        submits.append(int(acc / total * window_s))

    sizes, weights = zip(*GANG_SIZES)
    gpus = [min(s, cluster_gpus) for s in rng.choices(sizes, weights=weights, k=n)]
    queue_names = [q for q, _, _ in QUEUES]
    queues = rng.choices(queue_names, weights=[w for _, _, w in QUEUES], k=n)
    us = [rng.random() for _ in range(n)]
    elastic = set(rng.sample(range(n), int(round(args.elastic_fraction * n))))
    extra = [rng.randint(1, g) for g in gpus]          # elastic workers beyond min
    amdahl = [rng.randint(1, 10) / 100 for _ in range(n)]
    restart = [rng.choice(RESTART_COSTS_S) for _ in range(n)]

    target = args.load * cluster_gpus * window_s
    durations, median = tune_durations(us, gpus, args.sigma, target)
    demand = sum(g * d for g, d in zip(gpus, durations)) / (cluster_gpus * window_s)
    if abs(demand - args.load) > 0.02:
        print(f"synthetic: warning: GPU demand {demand:.3f} misses --load {args.load:g} "
              "(run times are bounded to [5m, 24h])", file=sys.stderr)

    jobs = []
    width = max(5, len(str(n - 1)))
    for i in range(n):
        g, dur = gpus[i], durations[i]
        job = {"name": f"job-{i:0{width}d}", "queue": queues[i],
               "submit": tl.format_duration(submits[i] * 1000), "minAvailable": 0,
               "duration": tl.format_duration(dur * 1000)}
        if i in elastic:
            job["minAvailable"] = g
            job["scaling"] = tl.Flow([("amdahl", amdahl[i])])
            job["restartCost"] = tl.format_duration(restart[i] * 1000)
            job["tasks"] = [
                {"name": "master", "replicas": 1, "minAvailable": 1,
                 "resources": pod_resources(1)},
                {"name": "worker", "replicas": g - 1 + extra[i], "resources": pod_resources(1)},
            ]
        else:
            tasks, job["minAvailable"] = tl.rigid_gang_tasks(g)
            job["tasks"] = tasks
        jobs.append(job)

    doc = {"name": args.name or "bench-week",
           "nodes": [{"namePrefix": "gpu-", "count": args.nodes, "allocatable": NODE_ALLOCATABLE}],
           "queues": [{"name": q, "weight": w} for q, w, _ in QUEUES],
           "jobs": jobs}
    cmd = tl.fmt_args([
        ("--seed", args.seed), ("--nodes", args.nodes), ("--jobs", args.jobs),
        ("--days", tl.fmt_float(args.days)), ("--load", tl.fmt_float(args.load)),
        ("--elastic-fraction", tl.fmt_float(args.elastic_fraction)),
        ("--sigma", tl.fmt_float(args.sigma)), ("--name", args.name)])
    sd = sorted(durations)
    header = [
        "Lahar scenario (spec 6.1): synthetic bench-week workload (no real trace data).",
        f"Generated by: python3 hack/traces/synthetic.py bench-week {cmd}",
        f"{n} jobs ({len(elastic)} elastic), {args.nodes} nodes x {GPUS_PER_NODE} GPUs, "
        f"arrivals over {tl.format_duration(window_s * 1000)}, GPU demand at min size "
        f"{demand:.3f} of capacity,",
        f"mean gang {sum(gpus) / max(1, n):.2f} GPUs, run time median {tl.format_duration(sd[n // 2] * 1000) if n else '0s'}"
        f" (lognormal median parameter {median / 3600:.2f}h, sigma {args.sigma:g}).",
        "",
    ]
    return doc, header


GENERATORS = {"bench-week": bench_week}


def build_parser():
    p = argparse.ArgumentParser(
        prog="synthetic.py",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("generator", choices=sorted(GENERATORS), help="which workload to generate")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--output", "-o", default="-", help="scenario file to write (default: stdout)")
    p.add_argument("--nodes", type=tl.positive_int, default=1000, help="8-GPU nodes (1000)")
    p.add_argument("--jobs", type=tl.positive_int, default=10000, help="jobs (10000)")
    p.add_argument("--days", type=tl.positive_float, default=7.0, help="arrival window (7 days)")
    p.add_argument("--load", type=tl.positive_float, default=0.8,
                   help="GPU demand at min size / GPU capacity over the window (0.8)")
    p.add_argument("--elastic-fraction", type=tl.fraction, default=0.3,
                   help="fraction of jobs that are elastic (0.3)")
    p.add_argument("--sigma", type=tl.positive_float, default=1.0,
                   help="sigma of the lognormal run times (1.0)")
    p.add_argument("--name", default=None, help="scenario name (default: the generator's)")
    p.add_argument("--format", choices=["yaml", "json"], default="yaml",
                   help="yaml (default), or json: the same scenario, which lahar-sim loads in a "
                        "fraction of the time")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        doc, header = GENERATORS[args.generator](args)
        text = tl.to_json(doc, header) if args.format == "json" else tl.to_yaml(doc, header)
        tl.write_output(text, args.output)
    except OSError as e:
        print(f"synthetic: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
