"""Self-checks of the trace converters and generators (standard library only).

Run from the repository root:
    python3 -m unittest hack/traces/test_traces.py

Each converter runs on tiny CSVs written to a temporary directory; the checks look at the built
documents (pod counts, GPU split with remainder, minAvailable, durations, elastic min/max,
DNS-safe names, GPU-model affinity) and at the emitted text (determinism; valid YAML when PyYAML
happens to be installed).
"""

import contextlib
import io
import json
import math
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alibaba_to_snapshot as ali  # noqa: E402
import philly_to_scenario as philly  # noqa: E402
import synthetic  # noqa: E402
import tracelib as tl  # noqa: E402

try:
    import yaml  # optional: only to double-check that the output parses
except ImportError:  # pragma: no cover
    yaml = None

DNS = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

PHILLY_CSV = """timestamp,duration,num_gpus,gpu_time,cluster
2017-10-01 00:10:00,100.0,12,1200.0,6214e9
2017-10-01 00:00:00,3600.0,1,3600.0,11cb48
2017-10-01 00:05:00,7201.0,16,115216.0,6214e9
not-a-date,5.0,1,5.0,11cb48
2017-10-01 00:20:00,50.0,4,200.0,B436B2
2017-10-01 00:30:00,0.0,2,0.0,6214e9
2017-10-01 00:40:00,90000.0,8,720000.0,6e1234
2017-10-01 01:00:00,10.0,3,30.0,11cb48

"""
# Data-row indices (0-based, blank lines not counted): 0 = 12 GPUs @10m, 1 = 1 GPU @0, 2 = 16 @5m,
# 3 = malformed, 4 = 4 @20m, 5 = 2 @30m, 6 = 8 @40m, 7 = 3 @1h.

NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
openb-node-0000,64000,262144,2,P100
openb-node-0001,96000,786432,8,V100M32
openb-node-0002,96000,393216,8,V100M16
openb-node-0003,32000,131072,0,
"""

PODS_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0000,12000,16384,1,1000,,LS,Running,100,3700,100
openb-pod-0001,6000,12288,1,460,,LS,Running,50,150,50
openb-pod-0002,88000,327680,8,1000,V100M16|V100M32,LS,Running,200,7400,200
openb-pod-0003,4000,8192,0,0,,BE,Failed,10,10,
OpenB_Pod_0004,8000,16384,2,1000,P100,LS,Pending,300,900,
"""


def run_quiet(fn, *a):
    """Calls fn with stderr captured (warnings are expected on some inputs)."""
    with contextlib.redirect_stderr(io.StringIO()):
        return fn(*a)


def gpus_of(job):
    return sum(t["replicas"] * t["resources"].get("nvidia.com/gpu", 0) for t in job["tasks"])


class TracelibTest(unittest.TestCase):
    def test_durations(self):
        for text, ms in [("90s", 90000), ("1h30m", 5400000), ("250ms", 250), ("1.5", 1500),
                         ("2h", 7200000), ("0", 0), ("1m0.5s", 60500)]:
            self.assertEqual(tl.parse_duration_ms(text), ms, text)
        for ms, text in [(0, "0s"), (90000, "1m30s"), (7200000, "2h"), (250, "250ms"),
                         (3723000, "1h2m3s"), (1500, "1.500s")]:
            self.assertEqual(tl.format_duration(ms), text)
            self.assertEqual(tl.parse_duration_ms(text), ms)
        for bad in ["", "-1", "1x", "h"]:
            with self.assertRaises(ValueError):
                tl.parse_duration_ms(bad)

    def test_dns_label(self):
        self.assertEqual(tl.dns_label("OpenB_Pod_0004"), "openb-pod-0004")
        self.assertEqual(tl.dns_label("--"), "x")
        self.assertTrue(DNS.match(tl.dns_label("A" * 100)))

    def test_yaml_quoting(self):
        text = tl.to_yaml({"a": "6e1234", "b": "yes", "c": 3, "d": tl.Flow([("x.y/z", "1")]),
                           "e": [{"f": ["p", "q"]}], "g": "say \"hi\"\n"}, ["hdr"])
        self.assertTrue(text.startswith("# hdr\n"))
        self.assertIn('a: "6e1234"', text)
        if yaml:
            self.assertEqual(yaml.safe_load(text), {"a": "6e1234", "b": "yes", "c": 3,
                                                    "d": {"x.y/z": "1"}, "e": [{"f": ["p", "q"]}],
                                                    "g": "say \"hi\"\n"})


class PhillyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "philly.csv")
        with open(self.csv, "w") as f:
            f.write(PHILLY_CSV)

    def tearDown(self):
        self.tmp.cleanup()

    def build(self, *flags):
        args = philly.build_parser().parse_args(["--input", self.csv, *flags])
        return run_quiet(philly.build, args)[0]

    def text(self, *flags):
        args = philly.build_parser().parse_args(["--input", self.csv, *flags])
        return run_quiet(philly.convert, args)

    def jobs(self, *flags):
        return {j["name"]: j for j in self.build(*flags)["jobs"]}

    def test_rigid_mapping(self):
        doc = self.build("--nodes", "4")
        self.assertEqual(doc["nodes"], [{"namePrefix": "gpu-", "count": 4, "allocatable": {
            "cpu": "64", "memory": "512Gi", "nvidia.com/gpu": 8, "pods": "110"}}])
        jobs = {j["name"]: j for j in doc["jobs"]}
        # Malformed row 3 skipped; ordered by submit time.
        self.assertEqual([j["name"] for j in doc["jobs"]],
                         ["philly-000001", "philly-000002", "philly-000000", "philly-000004",
                          "philly-000005", "philly-000006", "philly-000007"])
        j12 = jobs["philly-000000"]  # 12 GPUs: one 8-GPU pod + a 4-GPU remainder
        self.assertEqual(j12["minAvailable"], 2)
        self.assertEqual([(t["name"], t["replicas"], t["resources"]["nvidia.com/gpu"])
                          for t in j12["tasks"]], [("worker", 1, 8), ("tail", 1, 4)])
        self.assertEqual(j12["tasks"][1]["resources"], {"cpu": "24", "memory": "192Gi",
                                                        "nvidia.com/gpu": 4})
        j16 = jobs["philly-000002"]
        self.assertEqual(j16["minAvailable"], 2)
        self.assertEqual([(t["replicas"], t["resources"]["nvidia.com/gpu"]) for t in j16["tasks"]],
                         [(2, 8)])
        self.assertEqual(j16["tasks"][0]["resources"]["cpu"], "48")
        j3 = jobs["philly-000007"]
        self.assertEqual((j3["minAvailable"], gpus_of(j3), len(j3["tasks"])), (1, 3, 1))
        for j in doc["jobs"]:
            self.assertEqual(j["minAvailable"], sum(t["replicas"] for t in j["tasks"]))
            self.assertTrue(DNS.match(j["name"]))
            for t in j["tasks"]:
                self.assertLessEqual(t["resources"]["nvidia.com/gpu"], 8)
                self.assertLessEqual(int(t["resources"]["cpu"]), 64)
                self.assertNotIn("scaling", j)

    def test_times_and_queues(self):
        jobs = self.jobs()
        self.assertEqual(jobs["philly-000001"]["submit"], "0s")
        self.assertEqual(jobs["philly-000002"]["submit"], "5m")
        self.assertEqual(jobs["philly-000007"]["submit"], "1h")
        self.assertEqual(jobs["philly-000001"]["duration"], "1h")
        self.assertEqual(jobs["philly-000002"]["duration"], "2h1s")
        self.assertEqual(jobs["philly-000005"]["duration"], "1s")  # zero run time -> 1s
        self.assertEqual(jobs["philly-000004"]["queue"], "b436b2")
        self.assertEqual(jobs["philly-000006"]["queue"], "6e1234")
        doc = self.build("--jobs", "2")
        self.assertEqual(doc["queues"], [{"name": "11cb48", "weight": 1},
                                         {"name": "6214e9", "weight": 1}])  # only used queues
        self.assertNotIn("queues", self.build("--queues", "default"))
        # Time scale divides both; max-duration caps after scaling.
        jobs = self.jobs("--time-scale", "2", "--max-duration", "10h")
        self.assertEqual(jobs["philly-000002"]["submit"], "2m30s")
        self.assertEqual(jobs["philly-000001"]["duration"], "30m")
        self.assertEqual(jobs["philly-000006"]["duration"], "10h")  # 25h scaled to 12h30m, capped
        # Start offset and --jobs select by submit time; submit is relative to the first selected.
        doc = self.build("--start-offset", "15m", "--jobs", "2")
        self.assertEqual([(j["name"], j["submit"]) for j in doc["jobs"]],
                         [("philly-000004", "0s"), ("philly-000005", "10m")])

    def test_elastic(self):
        jobs = self.jobs("--elastic-fraction", "1", "--seed", "7")
        for name, j in jobs.items():
            g = {"philly-000000": 12, "philly-000001": 1, "philly-000002": 16,
                 "philly-000004": 4, "philly-000005": 2, "philly-000006": 8,
                 "philly-000007": 3}[name]
            if g < 2:
                self.assertNotIn("scaling", j)
                continue
            self.assertEqual(j["minAvailable"], g)
            self.assertEqual(j["scaling"], {"amdahl": 0.05})
            self.assertEqual(j["restartCost"], "1m")
            master, worker = j["tasks"]
            self.assertEqual((master["name"], master["replicas"], master["minAvailable"]),
                             ("master", 1, 1))
            self.assertEqual(worker["name"], "worker")
            self.assertEqual(1 + worker["replicas"], 2 * g)  # max = 2 x the trace's GPUs
            for t in j["tasks"]:
                self.assertEqual(t["resources"]["nvidia.com/gpu"], 1)
        # A fraction elastic: round(0.5 x 6 eligible) = 3, deterministic per seed.
        a = self.text("--elastic-fraction", "0.5", "--seed", "3")
        self.assertEqual(a, self.text("--elastic-fraction", "0.5", "--seed", "3"))
        self.assertEqual(a.count("amdahl"), 3)
        others = {self.text("--elastic-fraction", "0.5", "--seed", str(s)) for s in range(1, 9)}
        self.assertGreater(len(others), 1)
        self.assertNotIn("amdahl", self.text())

    def test_yaml_and_errors(self):
        text = self.text("--elastic-fraction", "0.5")
        self.assertIn("CC BY 4.0", text)
        if yaml:
            doc = yaml.safe_load(text)
            self.assertEqual(len(doc["jobs"]), 7)
            self.assertEqual(doc["queues"][0]["name"], "11cb48")
        # --format json: the same document, the header (attribution included) under description.
        doc = json.loads(self.text("--elastic-fraction", "0.5", "--format", "json"))
        self.assertIn("CC BY 4.0", "\n".join(doc.pop("description")))
        self.assertEqual(doc, json.loads(json.dumps(self.build("--elastic-fraction", "0.5"))))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            rc = philly.main(["--input", os.path.join(self.tmp.name, "missing.csv")])
        self.assertEqual(rc, 1)
        self.assertIn("cannot read", err.getvalue())
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            philly.main(["--input", self.csv, "--max-duration", "soon"])


class AlibabaTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(self.tmp.name, ali.NODES_FILE), "w") as f:
            f.write(NODES_CSV)
        with open(os.path.join(self.tmp.name, ali.PODS_FILE), "w") as f:
            f.write(PODS_CSV)

    def tearDown(self):
        self.tmp.cleanup()

    def args(self, *flags):
        return ali.build_parser().parse_args(["--input-dir", self.tmp.name, *flags])

    def build(self, *flags):
        return run_quiet(ali.build, self.args(*flags))[0]

    def split(self, doc):
        nodes = [i for i in doc["items"] if i["kind"] == "Node"]
        pods = {i["metadata"]["name"]: i for i in doc["items"] if i["kind"] == "Pod"}
        return nodes, pods

    def test_snapshot(self):
        doc = self.build()
        self.assertEqual((doc["apiVersion"], doc["kind"]), ("v1", "List"))
        nodes, pods = self.split(doc)
        self.assertEqual(len(nodes), 4)
        n1 = nodes[1]
        self.assertEqual(n1["metadata"]["labels"], {"kubernetes.io/hostname": "openb-node-0001",
                                                    "lahar.sh/gpu-model": "V100M32"})
        self.assertEqual(n1["status"]["allocatable"], {"cpu": "96000m", "memory": "786432Mi",
                                                       "nvidia.com/gpu": "8", "pods": "110"})
        self.assertNotIn("nvidia.com/gpu", nodes[3]["status"]["allocatable"])
        self.assertNotIn("lahar.sh/gpu-model", nodes[3]["metadata"]["labels"])
        # Fractional pod 0001 skipped; order by creation time; names DNS-safe.
        self.assertEqual(list(pods), ["openb-pod-0003", "openb-pod-0000", "openb-pod-0002",
                                      "openb-pod-0004"])
        for name, p in pods.items():
            self.assertTrue(DNS.match(name))
            self.assertEqual(p["spec"]["schedulerName"], "lahar")
            self.assertEqual(p["status"]["phase"], "Pending")
        p0 = pods["openb-pod-0000"]
        c = p0["spec"]["containers"][0]
        self.assertEqual(c["resources"]["requests"], {"cpu": "12000m", "memory": "16384Mi",
                                                      "nvidia.com/gpu": "1"})
        self.assertEqual(c["resources"]["limits"], {"nvidia.com/gpu": "1"})
        self.assertEqual(p0["metadata"]["annotations"], {"lahar.sh/sim-duration": "3600s"})
        self.assertNotIn("affinity", p0["spec"])
        self.assertEqual(pods["openb-pod-0003"]["metadata"]["annotations"]
                         ["lahar.sh/sim-duration"], "1s")  # zero lifetime -> 1s
        self.assertNotIn("nvidia.com/gpu",
                         pods["openb-pod-0003"]["spec"]["containers"][0]["resources"]["requests"])
        terms = (pods["openb-pod-0002"]["spec"]["affinity"]["nodeAffinity"]
                 ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"])
        self.assertEqual(terms, [{"matchExpressions": [{
            "key": "lahar.sh/gpu-model", "operator": "In", "values": ["V100M16", "V100M32"]}]}])

    def test_fractional_and_limits(self):
        _, pods = self.split(self.build("--include-fractional"))
        p1 = pods["openb-pod-0001"]
        self.assertEqual(p1["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"],
                         "1")
        self.assertEqual(p1["metadata"]["annotations"]["lahar.sh/sim-duration"], "100s")
        _, pods = self.split(self.build("--max-duration", "30m"))
        self.assertEqual(pods["openb-pod-0000"]["metadata"]["annotations"]
                         ["lahar.sh/sim-duration"], "1800s")
        self.assertEqual(pods["openb-pod-0004"]["metadata"]["annotations"]
                         ["lahar.sh/sim-duration"], "600s")
        _, pods = self.split(self.build("--max-pods", "2"))
        self.assertEqual(list(pods), ["openb-pod-0003", "openb-pod-0000"])
        nodes, _ = self.split(self.build("--max-nodes", "2"))
        self.assertEqual([n["metadata"]["name"] for n in nodes],
                         ["openb-node-0000", "openb-node-0002"])  # spread
        nodes, _ = self.split(self.build("--max-nodes", "2", "--node-sample", "first"))
        self.assertEqual([n["metadata"]["name"] for n in nodes],
                         ["openb-node-0000", "openb-node-0001"])

    def test_scenario(self):
        doc = self.build("--scenario", "--include-fractional")
        self.assertEqual(len(doc["nodes"]), 4)
        self.assertEqual(doc["nodes"][1]["labels"]["lahar.sh/gpu-model"], "V100M32")
        self.assertEqual(doc["nodes"][1]["allocatable"]["nvidia.com/gpu"], 8)
        jobs = {j["name"]: j for j in doc["jobs"]}
        self.assertEqual(list(jobs)[0], "openb-pod-0003")
        for j in jobs.values():
            self.assertEqual(j["minAvailable"], 1)
            self.assertEqual(len(j["tasks"]), 1)
            self.assertEqual(j["tasks"][0]["replicas"], 1)
        self.assertEqual(jobs["openb-pod-0003"]["submit"], "0s")
        self.assertEqual(jobs["openb-pod-0000"]["submit"], "1m30s")  # 100 - 10
        self.assertEqual(jobs["openb-pod-0000"]["duration"], "1h")
        self.assertEqual(jobs["openb-pod-0004"]["tasks"][0]["nodeSelector"],
                         {"lahar.sh/gpu-model": "P100"})
        self.assertIn("affinity", jobs["openb-pod-0002"]["tasks"][0])

    def test_text(self):
        a = run_quiet(ali.convert, self.args())
        self.assertEqual(a, run_quiet(ali.convert, self.args()))
        self.assertIn("Beware of", a)
        if yaml:
            self.assertEqual(yaml.safe_load(a), self.build())
            s = run_quiet(ali.convert, self.args("--scenario"))
            self.assertEqual(len(yaml.safe_load(s)["jobs"]), 4)


class SyntheticTest(unittest.TestCase):
    def gen(self, *flags):
        args = synthetic.build_parser().parse_args(["bench-week", *flags])
        doc, header = run_quiet(synthetic.bench_week, args)
        return doc, tl.to_yaml(doc, header)

    def test_small(self):
        doc, text = self.gen("--jobs", "400", "--nodes", "40", "--seed", "5")
        self.assertEqual(text, self.gen("--jobs", "400", "--nodes", "40", "--seed", "5")[1])
        self.assertNotEqual(text, self.gen("--jobs", "400", "--nodes", "40", "--seed", "6")[1])
        jobs = doc["jobs"]
        self.assertEqual(len(jobs), 400)
        self.assertEqual(len({j["name"] for j in jobs}), 400)
        self.assertEqual([q["weight"] for q in doc["queues"]], [1, 2, 3, 4])
        elastic = [j for j in jobs if "scaling" in j]
        self.assertEqual(len(elastic), 120)
        submits = [tl.parse_duration_ms(j["submit"]) for j in jobs]
        self.assertEqual(submits, sorted(submits))
        self.assertLessEqual(submits[-1], 7 * 86400 * 1000)
        work = 0
        for j in jobs:
            self.assertTrue(DNS.match(j["name"]))
            d = tl.parse_duration_ms(j["duration"])
            self.assertTrue(300000 <= d <= 86400000, j["duration"])
            pods = sum(t["replicas"] for t in j["tasks"])
            if "scaling" in j:
                self.assertLess(j["minAvailable"], pods)           # min < max
                self.assertLessEqual(pods, 2 * j["minAvailable"])
                self.assertEqual(j["tasks"][0]["name"], "master")
                g = j["minAvailable"]
            else:
                self.assertEqual(j["minAvailable"], pods)
                g = gpus_of(j)
            self.assertTrue(1 <= g <= 32)
            work += g * d / 1000
        load = work / (40 * 8 * 7 * 86400)
        self.assertAlmostEqual(load, 0.8, delta=0.05)
        if yaml:
            self.assertEqual(yaml.safe_load(text), doc)

    def test_json_form(self):
        # --format json: the same document, its header under description.
        flags = ["bench-week", "--jobs", "50", "--nodes", "8", "--seed", "3"]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "week.json")
            self.assertEqual(synthetic.main([*flags, "--format", "json", "-o", out]), 0)
            with open(out) as f:
                doc = json.load(f)
        self.assertIn("synthetic bench-week", "\n".join(doc.pop("description")))
        expected, _ = self.gen(*flags[1:])
        self.assertEqual(doc, json.loads(json.dumps(expected)))

    def test_bench_week_shape(self):
        # The benchmark trace of issue 2: 1,000 nodes, 10,000 jobs, 30% of them elastic.
        # (How fast it generates is a benchmark matter, not asserted here.)
        doc, text = self.gen()
        self.assertEqual(len(doc["jobs"]), 10000)
        self.assertEqual(doc["nodes"][0]["count"], 1000)
        self.assertEqual(sum(1 for j in doc["jobs"] if "scaling" in j), 3000)


if __name__ == "__main__":
    unittest.main()
