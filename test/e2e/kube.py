#!/usr/bin/env python3
"""JSON helpers for the e2e tests (standard library only); test/e2e/lib.sh calls them.

  kube.py q EXPR [ARG...]       evaluate a Python expression on the JSON read from stdin (`o`);
                                ARGs are in `a`; helpers below (get, cond, qty, bound, group,
                                ...) and the module collections are in scope. Prints the result (lists one item a line, True/False
                                as true/false, None as nothing).
  kube.py post-many [--dry-run] POST JSON objects (one a line on stdin) over one connection;
                                the collection comes from each object's kind and namespace.
                                --dry-run: a server-side dry run with strict field validation
                                (nothing is stored; the apiserver's admission and schema apply).
  kube.py metric SERIES         sum of the Prometheus samples on stdin that match SERIES
                                (`name` or `name{label="v",...}`, labels a subset); nothing if none.
  kube.py overcommit NODES PODS files with a NodeList and a PodList: prints every node whose
                                non-terminated pods request more than its allocatable (cpu,
                                memory, nvidia.com/gpu, pod count); exit 1 if any.
  kube.py dump KIND             a short table of a List (pods, podgroups, queues, nodes, events).
"""
import collections
import http.client
import json
import os
import re
import ssl
import sys
from fractions import Fraction
from urllib.parse import urlparse

# ---------------------------------------------------------------------------------------------
# Quantities and objects

_SUFFIX = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}
_QTY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$")


def qty(s):
    """A Kubernetes quantity (string or number) as an exact Fraction; 0 for None/''."""
    if s is None or s == "":
        return Fraction(0)
    if isinstance(s, (int, float)):
        return Fraction(s)
    m = _QTY.match(str(s).strip())
    if not m:
        raise ValueError(f"not a quantity: {s!r}")
    num, suf = m.group(1), m.group(2) or ""
    if suf[:1] in ("e", "E"):
        return Fraction(num + suf)
    return Fraction(num) * _SUFFIX[suf]


def get(o, path, default=""):
    """o['a']['b'][0]... for path 'a.b.0'; default when anything is missing."""
    for key in path.split("."):
        if isinstance(o, list):
            try:
                o = o[int(key)]
            except (ValueError, IndexError):
                return default
        elif isinstance(o, dict) and key in o:
            o = o[key]
        else:
            return default
    return default if o is None else o


def cond(o, ctype):
    """The status condition of this type ({} if none)."""
    for c in get(o, "status.conditions", []) or []:
        if c.get("type") == ctype:
            return c
    return {}


def name(o):
    return get(o, "metadata.name")


def bound(p):
    return bool(get(p, "spec.nodeName"))


def group(p):
    """The PodGroup a pod names (annotation scheduling.k8s.io/group-name), or ''."""
    return (get(p, "metadata.annotations", {}) or {}).get("scheduling.k8s.io/group-name", "")


def terminated(p):
    return get(p, "status.phase") in ("Succeeded", "Failed")


def requests(p):
    """Sum of the containers' requests, {resource: Fraction}."""
    out = {}
    for c in get(p, "spec.containers", []):
        for r, v in (get(c, "resources.requests", {}) or {}).items():
            out[r] = out.get(r, 0) + qty(v)
    return out


def items(o):
    return o.get("items", []) if isinstance(o, dict) else []


# ---------------------------------------------------------------------------------------------
# Commands


def cmd_q(expr, args):
    o = json.load(sys.stdin)
    env = dict(globals())
    env.update(o=o, a=args)
    r = eval(expr, env)
    if isinstance(r, (list, tuple, set)):
        for x in r:
            print(_fmt(x))
    elif r is not None:
        print(_fmt(r))


def _fmt(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, Fraction):
        return str(x.numerator) if x.denominator == 1 else str(float(x))
    if isinstance(x, (dict, list)):
        return json.dumps(x)
    return str(x)


_COLLECTIONS = {
    "Node": "/api/v1/nodes",
    "Namespace": "/api/v1/namespaces",
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "PodGroup": "/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups",
    "Queue": "/apis/scheduling.volcano.sh/v1beta1/queues",
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Service": "/api/v1/namespaces/{ns}/services",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "PyTorchJob": "/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs",
}


def collection(kind, ns):
    if kind not in _COLLECTIONS:
        raise SystemExit(f"kube.py: no collection known for kind {kind}")
    return _COLLECTIONS[kind].format(ns=ns)


def cmd_post_many(dry_run=False):
    url = urlparse(os.environ["LAHAR_API_URL"])
    ctx = ssl.create_default_context(cafile=os.environ["LAHAR_API_CA"])
    headers = {"Authorization": "Bearer " + os.environ["LAHAR_API_TOKEN"],
               "Content-Type": "application/json", "Accept": "application/json"}
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=30)
    n = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        obj = json.loads(line)
        ns = get(obj, "metadata.namespace") or os.environ.get("NS", "default")
        path = collection(obj["kind"], ns)
        if dry_run:
            path += "?dryRun=All&fieldValidation=Strict"
        for attempt in range(5):
            try:
                conn.request("POST", path, body=json.dumps(obj), headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=30)
                if attempt == 4:
                    raise
        if resp.status >= 400:
            msg = body.decode(errors="replace")
            try:
                msg = json.loads(msg).get("message", msg)
            except ValueError:
                pass
            raise SystemExit(f"kube.py: POST {path} {obj['kind']} {name(obj)}: HTTP {resp.status}: {msg}")
        n += 1
    print(n)


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


def _labels(s):
    return {m.group(1): m.group(2) for m in _LABEL.finditer(s or "")}


def cmd_metric(series):
    m = _SAMPLE.match(series.strip() + " 0")
    if not m:
        raise SystemExit(f"kube.py: bad series {series!r}")
    want_name, want_labels = m.group(1), _labels(m.group(2))
    total, found = 0.0, False
    for line in sys.stdin:
        if line.startswith("#"):
            continue
        s = _SAMPLE.match(line)
        if not s or s.group(1) != want_name:
            continue
        labels = _labels(s.group(2))
        if all(labels.get(k) == v for k, v in want_labels.items()):
            total += float(s.group(3))
            found = True
    if found:
        print(int(total) if total == int(total) else total)


RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


def cmd_overcommit(nodes_file, pods_file):
    nodes = items(json.load(open(nodes_file)))
    pods = items(json.load(open(pods_file)))
    used = {}
    for p in pods:
        if not bound(p) or terminated(p):
            continue
        u = used.setdefault(get(p, "spec.nodeName"), {"pods": 0})
        u["pods"] += 1
        for r, v in requests(p).items():
            u[r] = u.get(r, 0) + v
    bad = 0
    for n in nodes:
        alloc = get(n, "status.allocatable", {}) or {}
        u = used.get(name(n), {})
        for r in RESOURCES + ("pods",):
            if r in alloc or u.get(r):
                if u.get(r, 0) > qty(alloc.get(r)):
                    print(f"node {name(n)}: {r} requested {_fmt(u.get(r, 0))} > allocatable {alloc.get(r, 0)}")
                    bad += 1
    sys.exit(1 if bad else 0)


def _cond_text(c, width=90):
    if not c:
        return "-"
    s = f"{c.get('status', '')}/{c.get('reason', '')}"
    if c.get("message"):
        s += ": " + c["message"]
    return s[:width]


def cmd_dump(kind):
    text = sys.stdin.read()
    try:
        lst = items(json.loads(text))
    except ValueError:
        print("  " + text.strip()[:300])
        return
    if kind == "pods":
        for p in lst:
            dele = " DELETING" if get(p, "metadata.deletionTimestamp") else ""
            print(f"  {name(p):24} node={get(p, 'spec.nodeName') or '-':16} phase={get(p, 'status.phase'):9}"
                  f" sched={get(p, 'spec.schedulerName')} PodScheduled={_cond_text(cond(p, 'PodScheduled'))}{dele}")
    elif kind == "podgroups":
        for g in lst:
            conds = "; ".join(f"{c.get('type')}={_cond_text(c, 140)}" for c in get(g, "status.conditions", []) or [])
            print(f"  {name(g):20} min={get(g, 'spec.minMember')} queue={get(g, 'spec.queue') or '-'}"
                  f" phase={get(g, 'status.phase') or '-'} running={get(g, 'status.running', 0)}"
                  f" conditions=[{conds}]")
    elif kind == "queues":
        for q in lst:
            print(f"  {name(q):32} weight={get(q, 'spec.weight')} capability={json.dumps(get(q, 'spec.capability', {}))}"
                  f" state={get(q, 'status.state') or '-'} allocated={json.dumps(get(q, 'status.allocated', {}))}")
    elif kind == "nodes":
        for n in lst:
            a = get(n, "status.allocatable", {}) or {}
            print(f"  {name(n):24} ready={cond(n, 'Ready').get('status', '-')} unschedulable={get(n, 'spec.unschedulable', False)}"
                  f" allocatable={json.dumps(a)}")
    elif kind == "hypernodes":
        for h in lst:
            members = [f"{m.get('type')}:{json.dumps(m.get('selector', {}), separators=(',', ':'))}"
                       for m in get(h, "spec.members", []) or []]
            print(f"  {name(h):20} tier={get(h, 'spec.tier')} members={' '.join(members)[:300]}")
    elif kind == "events":
        lst.sort(key=lambda e: get(e, "lastTimestamp") or get(e, "eventTime") or get(e, "metadata.creationTimestamp"))
        for e in lst[-25:]:
            io = get(e, "involvedObject", {})
            print(f"  {get(e, 'type'):7} {get(e, 'reason'):20} {io.get('kind', '')}/{io.get('name', '')}"
                  f" x{get(e, 'count', 1)}: {get(e, 'message')[:200]}")
    else:
        raise SystemExit(f"kube.py: dump of {kind}?")


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "q":
        cmd_q(args[0], args[1:])
    elif cmd == "post-many":
        cmd_post_many(dry_run=args[:1] == ["--dry-run"])
    elif cmd == "metric":
        cmd_metric(args[0])
    elif cmd == "overcommit":
        cmd_overcommit(args[0], args[1])
    elif cmd == "dump":
        cmd_dump(args[0])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
