#!/usr/bin/env python3
"""Convert the Alibaba PAI openb GPU trace (nodes + pods CSVs) into a lahar-sim snapshot (spec 6.2).

Inputs in --input-dir:
  alibaba-openb-gpu-nodes.csv  sn,cpu_milli,memory_mib,gpu,model
  alibaba-openb-pods.csv       name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
                               pod_phase,creation_time,deletion_time,scheduled_time

Snapshot output (default): a `kind: List` of Kubernetes objects, as kubectl prints them:
  - one Node per selected row: allocatable (and capacity) cpu "<cpu_milli>m",
    memory "<memory_mib>Mi", nvidia.com/gpu "<gpu>" (omitted when 0), pods "110"; labels
    kubernetes.io/hostname: <name> and lahar.sh/gpu-model: <model>; condition Ready=True;
  - one pending Pod per selected row (namespace --namespace, schedulerName --scheduler-name):
    requests cpu/memory/nvidia.com/gpu (GPU limits = requests, as Kubernetes requires for
    extended resources), annotation lahar.sh/sim-duration: "<deletion-creation>s" (at least 1s;
    divided by --time-scale, capped at --max-duration),
    and when gpu_spec is set ("V100M16|V100M32") a required node affinity
    lahar.sh/gpu-model In [V100M16, V100M32].
  Pods with a fractional GPU share (0 < gpu_milli < 1000) are out of scope until GPU sharing
  exists: they are skipped, or with --include-fractional rounded up to 1 whole GPU.
  Pods with num_gpu 0 are kept as CPU-only pods.

Scenario output (--scenario): a scenario file (spec 6.1) with the same nodes listed one by one and
each pod as a single-pod job (task "main", minAvailable 1, queue default), submitted at its
creation_time relative to the first selected pod, running for its lifetime. A single-model
gpu_spec becomes the task's nodeSelector; a multi-model one a task `affinity` in Kubernetes form.

Selection: pods are taken in creation_time order (ties: file order) after filtering, the first
--max-pods of them. --max-nodes takes that many nodes, spread evenly over the file
(--node-sample spread, keeps the GPU-model mix) or the first ones (--node-sample first).
"""

import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib as tl  # noqa: E402

NODES_FILE = "alibaba-openb-gpu-nodes.csv"
PODS_FILE = "alibaba-openb-pods.csv"
MODEL_LABEL = "lahar.sh/gpu-model"
HOSTNAME_LABEL = "kubernetes.io/hostname"
DURATION_ANNOTATION = "lahar.sh/sim-duration"
PAUSE_IMAGE = "registry.k8s.io/pause:3.9"


class TraceError(Exception):
    pass


def _read_csv(path, need):
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror}") from None
    with f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            raise TraceError(f"{path}: empty file")
        fields = [h.strip() for h in reader.fieldnames]
        reader.fieldnames = fields
        missing = [c for c in need if c not in fields]
        if missing:
            raise TraceError(f"{path}: missing column(s) {', '.join(missing)}")
        rows = []
        for rec in reader:
            if all(not (v or "").strip() for v in rec.values() if isinstance(v, str)):
                continue
            rows.append({k: (v or "").strip() for k, v in rec.items() if isinstance(k, str)})
        return rows


def _int(text, default=None):
    if text == "" and default is not None:
        return default
    return int(float(text))


def read_nodes(path):
    """Returns (nodes, skipped): dicts name, cpu_milli, memory_mib, gpus, model in file order."""
    out, skipped = [], 0
    for r in _read_csv(path, ["sn", "cpu_milli", "memory_mib", "gpu", "model"]):
        try:
            node = {"name": tl.dns_label(r["sn"], "node"), "cpu_milli": _int(r["cpu_milli"]),
                    "memory_mib": _int(r["memory_mib"]), "gpus": _int(r["gpu"], 0),
                    "model": r["model"]}
        except ValueError:
            skipped += 1
            continue
        if node["cpu_milli"] < 0 or node["memory_mib"] < 0 or node["gpus"] < 0:
            skipped += 1
            continue
        out.append(node)
    return out, skipped


def read_pods(path):
    """Returns (pods, skipped): dicts index, name, cpu_milli, memory_mib, num_gpu, gpu_milli,
    models (list), creation, deletion (seconds), in file order."""
    need = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
            "creation_time", "deletion_time"]
    out, skipped = [], 0
    for i, r in enumerate(_read_csv(path, need)):
        try:
            pod = {"index": i, "name": tl.dns_label(r["name"], f"pod-{i}"),
                   "cpu_milli": _int(r["cpu_milli"], 0), "memory_mib": _int(r["memory_mib"], 0),
                   "num_gpu": _int(r["num_gpu"], 0), "gpu_milli": _int(r["gpu_milli"], 0),
                   "creation": _int(r["creation_time"]), "deletion": _int(r["deletion_time"])}
        except ValueError:
            skipped += 1
            continue
        if min(pod["cpu_milli"], pod["memory_mib"], pod["num_gpu"], pod["gpu_milli"]) < 0:
            skipped += 1
            continue
        models = []
        for m in r["gpu_spec"].split("|"):
            m = m.strip()
            if m and m not in models:
                models.append(m)
        pod["models"] = models
        out.append(pod)
    return out, skipped


def is_fractional(pod):
    return 0 < pod["gpu_milli"] < 1000


def select_pods(pods, include_fractional, max_pods):
    """Filters fractional-GPU pods (or rounds them up to 1 GPU), then the first max_pods by
    creation time (ties: file order). Returns (selected, n_fractional)."""
    chosen, n_frac = [], 0
    for p in pods:
        if is_fractional(p):
            n_frac += 1
            if not include_fractional:
                continue
            p = dict(p, num_gpu=max(1, p["num_gpu"]))
        chosen.append(p)
    chosen.sort(key=lambda p: (p["creation"], p["index"]))
    return (chosen if max_pods is None else chosen[:max_pods]), n_frac


def select_nodes(nodes, max_nodes, how):
    if max_nodes is None or max_nodes >= len(nodes):
        return list(nodes)
    if how == "first":
        return nodes[:max_nodes]
    n = len(nodes)
    return [nodes[i * n // max_nodes] for i in range(max_nodes)]


def node_resources(n, gpu_as_int=False):
    res = [("cpu", f"{n['cpu_milli']}m"), ("memory", f"{n['memory_mib']}Mi")]
    if n["gpus"] > 0:
        res.append(("nvidia.com/gpu", n["gpus"] if gpu_as_int else str(n["gpus"])))
    res.append(("pods", "110"))
    return tl.Flow(res)


def pod_requests(p, gpu_as_int=False):
    res = [("cpu", f"{p['cpu_milli']}m"), ("memory", f"{p['memory_mib']}Mi")]
    if p["num_gpu"] > 0:
        res.append(("nvidia.com/gpu", p["num_gpu"] if gpu_as_int else str(p["num_gpu"])))
    return tl.Flow(res)


def node_labels(n):
    labels = [(HOSTNAME_LABEL, n["name"])]
    if n["model"]:
        labels.append((MODEL_LABEL, n["model"]))
    return dict(labels)


def model_affinity(models):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": MODEL_LABEL, "operator": "In", "values": list(models)}]}]}}}


def lifetime_seconds(p, args):
    """deletion - creation, divided by --time-scale, at least 1s, at most --max-duration."""
    s = max(1, int(round((p["deletion"] - p["creation"]) / args.time_scale)))
    if args.max_duration is not None:
        s = min(s, max(1, args.max_duration // 1000))
    return s


def snapshot_doc(nodes, pods, args):
    items = []
    for n in nodes:
        res = node_resources(n)
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": n["name"], "labels": node_labels(n)},
                      "status": {"capacity": res, "allocatable": res,
                                 "conditions": [tl.Flow([("type", "Ready"), ("status", "True")])]}})
    for p in pods:
        req = pod_requests(p)
        container = {"name": "main", "image": PAUSE_IMAGE,
                     "resources": {"requests": req}}
        if p["num_gpu"] > 0:
            container["resources"]["limits"] = tl.Flow([("nvidia.com/gpu", str(p["num_gpu"]))])
        spec = {"schedulerName": args.scheduler_name, "containers": [container]}
        if p["num_gpu"] > 0 and p["models"]:
            spec["affinity"] = model_affinity(p["models"])
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": p["name"], "namespace": args.namespace,
                                   "annotations": {DURATION_ANNOTATION:
                                                   f"{lifetime_seconds(p, args)}s"}},
                      "spec": spec, "status": {"phase": "Pending"}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def scenario_doc(nodes, pods, args):
    t0 = pods[0]["creation"] if pods else 0
    doc = {"name": args.name or f"alibaba-{len(pods)}",
           "nodes": [{"name": n["name"], "allocatable": node_resources(n, gpu_as_int=True),
                      "labels": tl.Flow(node_labels(n))} for n in nodes]}
    jobs = []
    for p in pods:
        task = {"name": "main", "replicas": 1, "resources": pod_requests(p, gpu_as_int=True)}
        if p["num_gpu"] > 0 and len(p["models"]) == 1:
            task["nodeSelector"] = tl.Flow([(MODEL_LABEL, p["models"][0])])
        elif p["num_gpu"] > 0 and p["models"]:
            task["affinity"] = model_affinity(p["models"])
        submit_s = int(round((p["creation"] - t0) / args.time_scale))
        jobs.append({"name": p["name"], "namespace": args.namespace,
                     "submit": tl.format_duration(submit_s * 1000), "minAvailable": 1,
                     "duration": tl.format_duration(lifetime_seconds(p, args) * 1000),
                     "tasks": [task]})
    doc["jobs"] = jobs
    return doc


def fits(p, n):
    return (p["cpu_milli"] <= n["cpu_milli"] and p["memory_mib"] <= n["memory_mib"]
            and p["num_gpu"] <= n["gpus"]
            and (not p["models"] or p["num_gpu"] == 0 or n["model"] in p["models"]))


def build(args):
    """Returns (doc, header_lines) for the parsed arguments; raises TraceError."""
    shown_input = args.input_dir  # for the header's command
    if args.input_dir is None:
        args.input_dir = os.path.dirname(tl.find_trace_file(PODS_FILE))
    nodes, skipped_n = read_nodes(os.path.join(args.input_dir, NODES_FILE))
    pods, skipped_p = read_pods(os.path.join(args.input_dir, PODS_FILE))
    if skipped_n or skipped_p:
        print(f"alibaba_to_snapshot: skipped {skipped_n} malformed node row(s), "
              f"{skipped_p} malformed pod row(s)", file=sys.stderr)
    nodes = select_nodes(nodes, args.max_nodes, args.node_sample)
    pods, n_frac = select_pods(pods, args.include_fractional, args.max_pods)
    if not nodes:
        raise TraceError("no nodes selected")
    names = set()
    for n in nodes:
        if n["name"] in names:
            raise TraceError(f"duplicate node name {n['name']}")
        names.add(n["name"])
    names = set()
    for p in pods:
        if p["name"] in names:
            raise TraceError(f"duplicate pod name {p['name']}")
        names.add(p["name"])
    unfit = sum(1 for p in pods if not any(fits(p, n) for n in nodes))
    if unfit:
        print(f"alibaba_to_snapshot: warning: {unfit} pod(s) fit no selected node",
              file=sys.stderr)

    doc = scenario_doc(nodes, pods, args) if args.scenario else snapshot_doc(nodes, pods, args)
    gpus = sum(n["gpus"] for n in nodes)
    pod_gpus = sum(p["num_gpu"] for p in pods)
    cmd = tl.fmt_args([
        ("--input-dir", shown_input),
        ("--scenario", args.scenario), ("--max-nodes", args.max_nodes),
        ("--node-sample", args.node_sample if args.max_nodes is not None
         and args.node_sample != "spread" else None),
        ("--max-pods", args.max_pods), ("--include-fractional", args.include_fractional),
        ("--time-scale", tl.fmt_float(args.time_scale) if args.time_scale != 1 else None),
        ("--max-duration", tl.format_duration(args.max_duration)
         if args.max_duration is not None else None),
        ("--namespace", args.namespace if args.namespace != "default" else None),
        ("--scheduler-name", args.scheduler_name if args.scheduler_name != "lahar" else None),
        ("--name", args.name),
    ])
    frac = (f"{n_frac} fractional-GPU pod(s) rounded up to 1 GPU" if args.include_fractional
            else f"{n_frac} fractional-GPU pod(s) of the trace skipped")
    header = [
        ("Lahar scenario (spec 6.1)" if args.scenario else "Lahar snapshot (spec 6.2)")
        + " converted from the Alibaba PAI openb GPU trace.",
        f"Generated by: python3 hack/traces/alibaba_to_snapshot.py {cmd}",
        f"{len(nodes)} nodes ({gpus} GPUs), {len(pods)} pods ({pod_gpus} GPUs requested); {frac}.",
        "",
        "Trace attribution:",
    ] + ["  " + line for line in tl.ALIBABA_ATTRIBUTION] + [""]
    return doc, header


def convert(args):
    """Returns the YAML text for the parsed arguments; raises TraceError."""
    doc, header = build(args)
    return tl.to_yaml(doc, header)


def build_parser():
    p = argparse.ArgumentParser(
        prog="alibaba_to_snapshot.py",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input-dir", default=None,
                   help=f"directory with {NODES_FILE} and {PODS_FILE} (default: "
                        "<repo>/../shared/traces, else $LAHAR_TRACES_DIR, else /work/shared/traces)")
    p.add_argument("--output", "-o", default="-", help="file to write (default: stdout)")
    p.add_argument("--max-pods", type=tl.non_negative_int, default=None,
                   help="keep the first N pods by creation time (default: all)")
    p.add_argument("--max-nodes", type=tl.positive_int, default=None,
                   help="keep N nodes (default: all)")
    p.add_argument("--node-sample", choices=["spread", "first"], default="spread",
                   help="how --max-nodes picks nodes: spread evenly over the file (default) or "
                        "the first N")
    p.add_argument("--include-fractional", action="store_true",
                   help="keep pods with 0 < gpu_milli < 1000, rounded up to 1 whole GPU "
                        "(default: skip them)")
    p.add_argument("--scenario", action="store_true",
                   help="write a scenario file (spec 6.1) instead of a snapshot")
    p.add_argument("--time-scale", type=tl.positive_float, default=1.0,
                   help="divide lifetimes (and scenario submit times) by this (default 1)")
    p.add_argument("--max-duration", type=tl.duration_arg, default=None,
                   help="cap each pod's lifetime (Go duration, whole seconds; applied after "
                        "--time-scale; default: no cap)")
    p.add_argument("--namespace", default="default", help="namespace of the pods (default)")
    p.add_argument("--scheduler-name", default="lahar", help="spec.schedulerName (lahar)")
    p.add_argument("--name", default=None, help="scenario name (--scenario; default alibaba-<pods>)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        tl.write_output(convert(args), args.output)
    except (TraceError, OSError) as e:
        print(f"alibaba_to_snapshot: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
