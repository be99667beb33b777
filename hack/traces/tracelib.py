"""Shared helpers for Lahar's trace converters and generators (standard library only).

Imported by philly_to_scenario.py, alibaba_to_snapshot.py and synthetic.py, which live in the
same directory (Python puts a script's own directory on sys.path, so `import tracelib` works
from any working directory).

Contents:
  - Go / Kubernetes duration parsing and formatting (the formats of spec section 6),
  - a small deterministic YAML emitter (block style, with `Flow` for short one-line maps),
  - DNS-1123 name helpers,
  - locating the shared trace files from the repository root,
  - the attribution text that must accompany the real traces.
"""

import argparse
import math
import os
import re

# --------------------------------------------------------------------------------------------
# Attribution (copied from /work/shared/traces/README.md). Keep it wherever the traces are used.

PHILLY_ATTRIBUTION = [
    "Microsoft Philly GPU cluster trace, Sep-Dec 2017, as prepared for the Pollux (OSDI'21)",
    "simulator. Source: msr-fiddle/philly-traces (CC BY 4.0); derived file from",
    "petuum/adaptdl branch osdi21-artifact simulator/traces/philly.csv (Apache-2.0).",
]

ALIBABA_ATTRIBUTION = [
    "Alibaba PAI heterogeneous GPU cluster trace (2023): openb nodes and pods. Source:",
    "alibaba/clusterdata cluster-trace-gpu-v2023. Cite: Weng et al., \"Beware of",
    "Fragmentation\", USENIX ATC'23.",
]

# --------------------------------------------------------------------------------------------
# Durations

_DURATION_UNITS_MS = {"ns": 1e-6, "us": 1e-3, "\u00b5s": 1e-3, "ms": 1.0, "s": 1000.0,
                      "m": 60_000.0, "h": 3_600_000.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|ms|s|m|h)")


def parse_duration_ms(text):
    """Parses a Go duration ("90s", "1h30m", "250ms") or bare seconds ("90", "1.5") to int ms.

    Sub-millisecond parts round up, as lahar's own parser does. Raises ValueError.
    """
    text = str(text).strip()
    if not text:
        raise ValueError("empty duration")
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is not None:
        if seconds < 0 or not math.isfinite(seconds):
            raise ValueError(f"invalid duration {text!r}")
        return int(math.ceil(seconds * 1000.0 - 1e-9))
    pos, total = 0, 0.0
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if not m:
            raise ValueError(f"invalid duration {text!r}: want e.g. 90s, 10m, 1h30m or seconds")
        total += float(m.group(1)) * _DURATION_UNITS_MS[m.group(2)]
        pos = m.end()
    return int(math.ceil(total - 1e-9))


def format_duration(ms):
    """Formats integer milliseconds as a compact Go duration, like lahar's FormatDuration.

    0 -> "0s", 90000 -> "1m30s", 7200000 -> "2h", 250 -> "250ms", 1500 -> "1.500s".
    """
    ms = int(ms)
    if ms == 0:
        return "0s"
    out = "-" if ms < 0 else ""
    ms = abs(ms)
    hours, minutes, rest = ms // 3_600_000, ms // 60_000 % 60, ms % 60_000
    if hours:
        out += f"{hours}h"
    if minutes:
        out += f"{minutes}m"
    if rest:
        if rest % 1000 == 0:
            out += f"{rest // 1000}s"
        elif hours == 0 and minutes == 0 and rest < 1000:
            out += f"{rest}ms"
        else:
            out += f"{rest / 1000.0:.3f}s"
    return out


def duration_arg(text):
    """argparse type: a Go duration or bare seconds, returned as integer milliseconds."""
    try:
        return parse_duration_ms(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_float(text):
    """argparse type: a float > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return v


def fraction(text):
    """argparse type: a float in [0, 1]."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1: {text!r}")
    return v


def non_negative_int(text):
    """argparse type: an int >= 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return v


def positive_int(text):
    """argparse type: an int >= 1."""
    v = non_negative_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return v


# --------------------------------------------------------------------------------------------
# Names

_DNS_BAD = re.compile(r"[^a-z0-9-]+")


def dns_label(text, fallback="x"):
    """Turns any text into a DNS-1123 label: lower case, [a-z0-9-], alphanumeric at both ends,
    at most 63 characters."""
    s = _DNS_BAD.sub("-", str(text).lower()).strip("-")
    s = re.sub(r"-{2,}", "-", s)[:63].strip("-")
    return s or fallback


DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

# --------------------------------------------------------------------------------------------
# YAML emitter
#
# Deterministic and deliberately small: dicts keep insertion order, strings are always written
# as double-quoted JSON strings (valid YAML, no surprises with "6e1234" or "yes"), integers and
# booleans bare. Keys are written bare when they are simple (letters, digits, . / _ -).


class Flow(dict):
    """A mapping written on one line: `{cpu: "6", memory: "48Gi", nvidia.com/gpu: 1}`."""


_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def _key(k):
    k = str(k)
    if _SIMPLE_KEY.match(k) and k.lower() not in _YAML_WORDS:
        return k
    return _quote(k)


def _quote(s):
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("non-finite float in YAML output")
        return repr(v)
    return _quote(str(v))


def _flow(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    return _scalar(v)


def _inline(v):
    """True when v is written on the same line as its key or dash."""
    if isinstance(v, (list, tuple)):  # lists of scalars go on one line: [a, b]
        return all(not isinstance(x, (dict, list, tuple)) for x in v)
    return isinstance(v, Flow) or not isinstance(v, dict) or len(v) == 0


def _emit(v, indent, out):
    pad = " " * indent
    if isinstance(v, dict) and not isinstance(v, Flow):
        for k, x in v.items():
            if _inline(x):
                out.append(f"{pad}{_key(k)}: {_flow(x)}\n")
            elif isinstance(x, dict):
                out.append(f"{pad}{_key(k)}:\n")
                _emit(x, indent + 2, out)
            else:  # a list, indented under its key as kubectl does
                out.append(f"{pad}{_key(k)}:\n")
                _emit(x, indent, out)
    elif isinstance(v, (list, tuple)):
        for x in v:
            if _inline(x):
                out.append(f"{pad}- {_flow(x)}\n")
            elif isinstance(x, dict):
                sub = []
                _emit(x, indent + 2, sub)
                first = sub[0]
                sub[0] = f"{pad}- {first[indent + 2:]}"
                out.extend(sub)
            else:
                out.append(f"{pad}-\n")
                _emit(x, indent + 2, out)
    else:
        out.append(f"{pad}{_flow(v)}\n")


def to_yaml(doc, header_lines=()):
    """Returns the YAML text of `doc` (a dict), preceded by `# ` comment lines."""
    out = []
    for line in header_lines:
        out.append(f"# {line}".rstrip() + "\n")
    _emit(doc, 0, out)
    return "".join(out)


def to_json(doc, header_lines=()):
    """Returns `doc` as one line of JSON, the header lines first under "description": the same
    scenario, which lahar-sim reads far faster than YAML (whole traces)."""
    import json
    out = {"description": list(header_lines)}
    out.update(doc)
    return json.dumps(out, separators=(",", ":"), allow_nan=False) + "\n"


def write_output(text, path):
    """Writes text to path ('-' or None: stdout). Creates the parent directory if needed."""
    import sys
    if path in (None, "-"):
        sys.stdout.write(text)
        return
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


# --------------------------------------------------------------------------------------------
# Locating the shared traces

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))  # hack/traces -> hack -> repo root


def trace_dir_candidates():
    """Where the shared traces may be, most specific first: $LAHAR_TRACES_DIR, then
    <repo>/../shared/traces, then the parents of the current directory, then /work/shared."""
    cands = []
    env = os.environ.get("LAHAR_TRACES_DIR")
    if env:
        cands.append(env)
    cands.append(os.path.join(REPO_ROOT, "..", "shared", "traces"))
    d = os.getcwd()
    for _ in range(4):
        cands.append(os.path.join(d, "shared", "traces"))
        cands.append(os.path.join(d, "..", "shared", "traces"))
        d = os.path.dirname(d)
    cands.append("/work/shared/traces")
    seen, out = set(), []
    for c in cands:
        c = os.path.normpath(c)
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def find_trace_file(name):
    """Returns the first existing <candidate>/name, or the preferred path if none exists (so the
    error message names a sensible place)."""
    cands = trace_dir_candidates()
    for d in cands:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "traces", name))


def fmt_args(pairs):
    """Renders [(flag, value)] as a command-line fragment; value True = bare flag, None = skip."""
    parts = []
    for flag, value in pairs:
        if value is None or value is False:
            continue
        parts.append(flag if value is True else f"{flag} {value}")
    return " ".join(parts)


def fmt_float(x):
    """A float as short text: 10.0 -> '10', 0.3 -> '0.3'."""
    return f"{x:g}"


# The GPU node both the Philly conversion and the synthetic benchmark trace use: 8 GPUs, with
# 6 cores and 48Gi of memory asked per GPU (an 8-GPU pod takes 48 of 64 cores, 384Gi of 512Gi).
GPUS_PER_NODE = 8
CPU_PER_GPU = 6
MEM_GI_PER_GPU = 48
NODE_ALLOCATABLE = Flow([("cpu", "64"), ("memory", "512Gi"), ("nvidia.com/gpu", 8), ("pods", "110")])


def pod_resources(gpus):
    return Flow([("cpu", str(CPU_PER_GPU * gpus)), ("memory", f"{MEM_GI_PER_GPU * gpus}Gi"),
                 ("nvidia.com/gpu", gpus)])


def rigid_gang_tasks(gpus):
    """A rigid G-GPU job as the traces README maps it: ceil(G/8) pods, full 8-GPU pods in task
    `worker` and the remainder in one pod (task `tail`, or `worker` when it is the only pod).
    Returns (tasks, minAvailable = pod count)."""
    full, rest = divmod(gpus, GPUS_PER_NODE)
    tasks = []
    if full:
        tasks.append({"name": "worker", "replicas": full, "resources": pod_resources(GPUS_PER_NODE)})
    if rest:
        tasks.append({"name": "tail" if full else "worker", "replicas": 1, "resources": pod_resources(rest)})
    return tasks, full + (1 if rest else 0)
