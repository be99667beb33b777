#!/usr/bin/env bash
# Proves that a real kube-apiserver accepts Lahar's deployment manifests (config/) and that the
# PodGroup / Queue / HyperNode CRDs (config/crd/) behave like Volcano's for the objects Lahar
# reads and writes.
#
# Usage: hack/check-manifests.sh DIR
#   DIR is a cluster started by `hack/local-cluster.sh up DIR` (which installs config/crd/*.yaml);
#   DIR/env gives LAHAR_API_URL, LAHAR_API_TOKEN and LAHAR_API_CA.
#
# Checks, in order:
#  1. the CRDs: established, names/shortNames/scope/version/status subresource/printer columns as
#     Volcano's, API discovery, and the files as they are now still pass the apiserver's CRD
#     validation (server-side-apply dry run); every field of Volcano's schema (its CRDs as Volcano
#     installs them, from ../shared/fixtures/volcano/crds/) is in Lahar's, with the same type,
#     format and default, so that nothing Volcano's controllers write is pruned;
#  2. every document of config/*.yaml is created with a server-side dry run (POST ?dryRun=All,
#     strict field validation, Content-Type application/yaml); Namespaces first, and those are
#     then created for real so that the namespaced documents can be admitted;
#  3. the documents agree with each other and with the spec (ConfigMap = the default
#     configuration of config/examples/elastic.conf, Deployment wired to the ServiceAccount,
#     ConfigMap, leader-election namespace and probes, Service selecting the pods, ...);
#  4. RBAC, created for real: SubjectAccessReviews for everything the scheduler needs (allowed)
#     and a sample of what it must not do (denied);
#  5. a Volcano-style Queue, PodGroup and HyperNode with every spec field, created with strict
#     field validation and read back unchanged; defaults; status written through the /status
#     subresource while impersonating the scheduler's ServiceAccount; printer columns;
#  6. invalid objects (minMember "abc", quantity "1.5.3", a HyperNode member with two selector
#     kinds, ...) refused by the schema.
# The test objects of 5 and 6 are deleted at the end; the RBAC objects of 4 are left in place.
#
# Prints one line per check and `check-manifests: N checks passed`; on any failure it says
# which check failed and why, and exits 1 (2 for bad usage or an unreachable apiserver).
# Needs bash, curl and python3 (standard library only).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "check-manifests: error: $*" >&2; exit 2; }

[ $# -eq 1 ] || { sed -n '6,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
DIR="$1"
[ -f "$DIR/env" ] || die "$DIR/env not found; start a cluster first: hack/local-cluster.sh up $DIR"
command -v curl >/dev/null || die "curl is required"
command -v python3 >/dev/null || die "python3 is required"
LAHAR_API_URL="" LAHAR_API_TOKEN="" LAHAR_API_CA=""
# shellcheck disable=SC1091
. "$DIR/env"
[ -n "$LAHAR_API_URL" ] && [ -n "$LAHAR_API_TOKEN" ] && [ -n "$LAHAR_API_CA" ] ||
  die "$DIR/env lacks LAHAR_API_URL, LAHAR_API_TOKEN or LAHAR_API_CA"

# Volcano's files, unchanged (read-only): its CRDs are what Lahar's must stay compatible with.
FIXTURES="$("$ROOT/hack/fixtures-dir.sh")/volcano" || die "Volcano's fixtures not found"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/lahar-check-manifests.XXXXXX")"
BODY="$WORK/body.json"
REQ="$WORK/request"
SA_USER=system:serviceaccount:lahar-system:lahar-scheduler
SUF="$$$RANDOM"                      # test object names are unique per run
NS=default                           # namespace of the test PodGroups
PG=/apis/scheduling.volcano.sh/v1beta1/namespaces/$NS/podgroups
Q=/apis/scheduling.volcano.sh/v1beta1/queues
CREATED=()                           # test objects to delete at the end
PASSED=0
FAILED=0

cleanup() {
  local path
  for path in "${CREATED[@]}"; do api DELETE "$path" >/dev/null 2>&1; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- HTTP ----------------------------------------------------------------------------------
# api METHOD PATH [CONTENT-TYPE [FILE]]: body in $BODY, status in $CODE. FILE defaults to $REQ.
# $AS (a user name) impersonates that user; $ACCEPT overrides the Accept header.
api() {
  local args=(-sS --max-time 30 --cacert "$LAHAR_API_CA" -H "Authorization: Bearer $LAHAR_API_TOKEN"
    -H "Accept: ${ACCEPT:-application/json}" -X "$1" -o "$BODY" -w '%{http_code}')
  if [ $# -ge 3 ]; then args+=(-H "Content-Type: $3" --data-binary "@${4:-$REQ}"); fi
  if [ -n "${AS:-}" ]; then args+=(-H "Impersonate-User: $AS"); fi
  CODE="$(curl "${args[@]}" "$LAHAR_API_URL$2" 2>"$WORK/curl.err")" || CODE=000
  [ -s "$BODY" ] || echo '{}' >"$BODY"
}
req() { cat >"$REQ"; }  # the request body, from stdin

# The apiserver's message for the last response (or curl's error).
reason() {
  if [ "$CODE" = 000 ]; then head -c 300 "$WORK/curl.err"; return; fi
  python3 - "$BODY" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print((d.get("message") or json.dumps(d))[:600])
except Exception:
    print(open(sys.argv[1], errors="replace").read()[:600])
EOF
}

# --- checks --------------------------------------------------------------------------------
pass() { PASSED=$((PASSED + 1)); echo "  ok    $1"; }
fail() { FAILED=$((FAILED + 1)); echo "  FAIL  $1"; [ -n "${2:-}" ] && echo "        $2"; return 0; }
section() { echo "== $*"; }

# expect DESCRIPTION CODE...: the last response had one of these HTTP codes.
expect() {
  local what="$1" c
  shift
  for c in "$@"; do
    if [ "$CODE" = "$c" ]; then pass "$what"; return 0; fi
  done
  fail "$what" "HTTP $CODE, want $*: $(reason)"
  return 1
}

# jcheck DESCRIPTION PYTHON-EXPRESSION: the expression holds for the last response body `d`.
# On failure prints the expression's `show` value if the expression defines one via `note`.
jcheck() {
  local out
  if out="$(python3 - "$BODY" "$2" <<'EOF' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
notes = []
def note(x):
    notes.append(x)
    return True
def diff(a, b, path=""):
    """The paths where a and b differ (at most 10)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += diff(a.get(k), b.get(k), f"{path}.{k}")
        return out[:10]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in diff(x, y, f"{path}[{i}]")][:10]
    return [] if a == b else [path or "."]
def same(a, b):
    notes.append({"differs at": diff(a, b)})
    return a == b
try:
    ok = eval(sys.argv[2], {"d": d, "note": note, "same": same, "json": json})
except KeyError as e:
    print(f"missing {e} (not in the manifests, or its dry run failed)")
    sys.exit(1)
except Exception as e:
    print(f"{type(e).__name__}: {e}")
    sys.exit(1)
if not ok:
    print("; ".join(json.dumps(n)[:400] for n in notes) or json.dumps(d)[:400])
sys.exit(0 if ok else 1)
EOF
  )"; then
    pass "$1"
  else
    fail "$1" "$out"
  fi
}

# refused DESCRIPTION METHOD PATH CONTENT-TYPE [FIELD]: the request in $REQ is refused as invalid
# (HTTP 422), with FIELD named in the message when given.
refused() {
  local what="$1" field="${5:-}"
  api "$2" "$3" "$4"
  if [ "$CODE" = 422 ] && { [ -z "$field" ] || grep -qF "$field" "$BODY"; }; then
    pass "$what"
  else
    [ "$CODE" = 201 ] || [ "$CODE" = 200 ] && CREATED+=("$3/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["name"])' "$BODY" 2>/dev/null)")
    fail "$what" "HTTP $CODE, want 422${field:+ naming $field}: $(reason)"
  fi
}

api GET /readyz
[ "$CODE" = 200 ] || die "kube-apiserver at $LAHAR_API_URL not ready (HTTP $CODE: $(reason)); is the cluster in $DIR up?"

# --- manifests -----------------------------------------------------------------------------
# split_docs DEST FILE...: one file per YAML document (DEST/BASENAME.NNN), like local-cluster.sh.
split_docs() {
  local dest="$1" f
  shift
  mkdir -p "$dest"
  for f in "$@"; do
    awk -v dir="$dest" -v base="$(basename "$f")" '
      BEGIN { n = 0; out = sprintf("%s/%s.%03d", dir, base, n) }
      /^---[ \t]*$/ { n++; out = sprintf("%s/%s.%03d", dir, base, n); next }
      { print > out }' "$f"
  done
}
doc_field() { # doc_field FILE apiVersion|kind|name|namespace
  awk -v want="$2" '
    function val(s) { sub(/^[^:]*:[ \t]*/, "", s); sub(/[ \t]+#.*$/, "", s); gsub(/^["\047]|["\047]$/, "", s); return s }
    /^metadata:/ { m = 1; next }
    /^[^ #]/ { m = 0 }
    want == "apiVersion" && /^apiVersion:/ { print val($0); exit }
    want == "kind" && /^kind:/ { print val($0); exit }
    m && want == "name" && /^  name:/ { print val($0); exit }
    m && want == "namespace" && /^  namespace:/ { print val($0); exit }' "$1"
}
# collection_path APIVERSION KIND NAMESPACE: the collection URL, from API discovery.
collection_path() {
  local base
  case "$1" in */*) base="/apis/$1" ;; *) base="/api/$1" ;; esac
  api GET "$base"
  [ "$CODE" = 200 ] || return 1
  python3 - "$BODY" "$2" "$3" "$base" <<'EOF'
import json, sys
d, kind, ns, base = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
for r in d["resources"]:
    if r["kind"] == kind and "/" not in r["name"]:
        if r["namespaced"] and not ns:
            sys.exit("namespaced kind without metadata.namespace")
        print(f"{base}/namespaces/{ns}/{r['name']}" if r["namespaced"] else f"{base}/{r['name']}")
        sys.exit(0)
sys.exit(f"kind {kind} not served")
EOF
}

# ===========================================================================================
section "CRDs (config/crd/, installed by hack/local-cluster.sh)"
split_docs "$WORK/crd" "$ROOT"/config/crd/*.yaml
CRD=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
# crd_check NAME SCOPE SHORTNAMES(comma) COLUMNS(comma) [VERSION, default v1beta1]; the group is
# NAME's part after the first dot.
crd_check() {
  local name="$1" scope="$2" short="$3" cols="$4" version="${5:-v1beta1}" group="${1#*.}" doc="" d rv
  for d in "$WORK"/crd/*; do
    [ "$(doc_field "$d" kind)" = CustomResourceDefinition ] && [ "$(doc_field "$d" name)" = "$name" ] && doc="$d"
  done
  if [ -z "$doc" ]; then fail "config/crd/ defines CRD $name" "no such document"; return; fi
  local file="config/crd/$(basename "${doc%.*}")"
  api GET "$CRD/$name"
  expect "$name is installed" 200 || return
  cp "$BODY" "$WORK/installed.json"
  jcheck "$name: Established and NamesAccepted" \
    'all(any(c["type"] == t and c["status"] == "True" for c in d["status"]["conditions"]) for t in ("Established", "NamesAccepted"))'
  # The file as it is now, as an update of the installed CRD (dry run): the apiserver's CRD
  # validation (structural schema, defaults, printer columns) and exactly the file's content.
  rv="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["resourceVersion"])' "$BODY")"
  awk -v rv="$rv" '{ print } /^metadata:/ && !done { printf "  resourceVersion: \"%s\"\n", rv; done = 1 }' "$doc" >"$WORK/crd-put.yaml"
  api PUT "$CRD/$name?dryRun=All&fieldValidation=Strict" application/yaml "$WORK/crd-put.yaml"
  expect "$file passes the apiserver's CRD validation (PUT ?dryRun=All)" 200 || return
  cp "$BODY" "$WORK/lahar-crd.json"
  jcheck "$file is what is installed (else: hack/local-cluster.sh down, then up, to reinstall)" \
    "same(d['spec'], json.load(open('$WORK/installed.json'))['spec'])"
  jcheck "$name: group $group, scope $scope, shortNames $short" \
    "note(d['spec']['names']) and d['spec']['group'] == '$group' and d['spec']['scope'] == '$scope' and d['spec']['names']['shortNames'] == '$short'.split(',')"
  jcheck "$name: only $version, served and storage, with the status subresource" \
    "note(d['spec']['versions']) and [(v['name'], v['served'], v['storage'], 'status' in v.get('subresources', {})) for v in d['spec']['versions']] == [('$version', True, True, True)]"
  jcheck "$name: printer columns $cols (as Volcano's)" \
    "note(d['spec']['versions'][0].get('additionalPrinterColumns')) and [c['name'] for c in d['spec']['versions'][0].get('additionalPrinterColumns', [])] == '$cols'.split(',')"
  volcano_schema_check "$name" "$rv" "$file"
}
# volcano_schema_check NAME RESOURCE-VERSION FILE: every field of Volcano's CRD NAME is in
# Lahar's ($WORK/lahar-crd.json, from FILE) with the same type, format and default. The
# apiserver reads Volcano's YAML (an update of the installed CRD, dry run), so both are JSON.
volcano_schema_check() {
  local name="$1" rv="$2" file="$3" fixture="$FIXTURES/crds/${1#*.}_${1%%.*}.yaml" d doc="" out
  local what="$file has every field of Volcano's schema, with the same type, format and default"
  if [ ! -f "$fixture" ]; then
    fail "$what" "Volcano's CRD $fixture not found"
    return
  fi
  split_docs "$WORK/fixture-$name" "$fixture"
  for d in "$WORK/fixture-$name"/*; do [ "$(doc_field "$d" kind)" = CustomResourceDefinition ] && doc="$d"; done
  awk -v rv="$rv" '{ print } /^metadata:/ && !done { printf "  resourceVersion: \"%s\"\n", rv; done = 1 }' "$doc" >"$WORK/crd-put.yaml"
  api PUT "$CRD/$name?dryRun=All&fieldValidation=Strict" application/yaml "$WORK/crd-put.yaml"
  expect "Volcano's $name (fixtures/volcano/crds/$(basename "$fixture")) read by the apiserver (PUT ?dryRun=All)" 200 || return
  if out="$(python3 - "$BODY" "$WORK/lahar-crd.json" <<'EOF'
import json, sys
def schemas(path):
    crd = json.load(open(path))
    return {v["name"]: v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"]}
volcano, lahar = schemas(sys.argv[1]), schemas(sys.argv[2])
problems = []
def walk(v, l, path):
    for key in ("type", "x-kubernetes-int-or-string", "format", "default"):
        if key in v or (key == "type" and "type" in l):
            if v.get(key) != l.get(key):
                problems.append(f"{path}: {key} {json.dumps(v.get(key))} in Volcano's, {json.dumps(l.get(key))} in Lahar's")
    for name, sub in sorted(v.get("properties", {}).items()):
        if name in l.get("properties", {}):
            walk(sub, l["properties"][name], f"{path}.{name}")
        else:
            problems.append(f"{path}.{name}: missing (Volcano's is {sub.get('type', 'int-or-string')})")
    for key, mark in (("items", "[]"), ("additionalProperties", "{}")):
        if isinstance(v.get(key), dict):
            if isinstance(l.get(key), dict):
                walk(v[key], l[key], path + mark)
            else:
                problems.append(f"{path}{mark}: missing")
for version, schema in sorted(volcano.items()):
    if version in lahar:
        walk(schema, lahar[version], version)
    else:
        problems.append(f"version {version}: missing")
print("; ".join(problems[:20]) + (f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""))
sys.exit(1 if problems else 0)
EOF
  )"; then
    pass "$what"
  else
    fail "$what" "$out"
  fi
}
crd_check podgroups.scheduling.volcano.sh Namespaced pg,podgroup-v1beta1 STATUS,minMember,RUNNINGS,AGE,QUEUE
crd_check queues.scheduling.volcano.sh Cluster q,queue-v1beta1 PARENT
crd_check hypernodes.topology.volcano.sh Cluster hn Tier,TierName,NodeCount,Age v1alpha1

api GET /apis/scheduling.volcano.sh/v1beta1
expect "discovery: /apis/scheduling.volcano.sh/v1beta1 is served" 200
jcheck "discovery: podgroups (namespaced, PodGroup, pg), queues (cluster, Queue, q) and both /status" \
  'note(sorted(r["name"] for r in d["resources"])) and (lambda r: r["podgroups"]["namespaced"] and r["podgroups"]["kind"] == "PodGroup" and "pg" in r["podgroups"]["shortNames"] and not r["queues"]["namespaced"] and r["queues"]["kind"] == "Queue" and "q" in r["queues"]["shortNames"] and "podgroups/status" in r and "queues/status" in r)({x["name"]: x for x in d["resources"]})'
api GET /apis/topology.volcano.sh/v1alpha1
expect "discovery: /apis/topology.volcano.sh/v1alpha1 is served" 200
jcheck "discovery: hypernodes (cluster, HyperNode, hn)" \
  'note(d["resources"]) and (lambda r: not r["hypernodes"]["namespaced"] and r["hypernodes"]["kind"] == "HyperNode" and "hn" in r["hypernodes"]["shortNames"])({x["name"]: x for x in d["resources"]})'

# ===========================================================================================
section "config/*.yaml: server-side dry run of every document"
DOCS="$WORK/docs"
split_docs "$DOCS" "$ROOT"/config/*.yaml
ORDER=()  # Namespaces first, then the rest in file order
for doc in "$DOCS"/*; do [ "$(doc_field "$doc" kind)" = Namespace ] && ORDER+=("$doc"); done
for doc in "$DOCS"/*; do
  k="$(doc_field "$doc" kind)"
  [ -n "$k" ] && [ "$k" != Namespace ] && ORDER+=("$doc")
done
[ ${#ORDER[@]} -gt 0 ] || fail "config/*.yaml holds documents" "none found"
DRY="$WORK/dry"  # dry-run responses, by kind/name, for the consistency checks
mkdir -p "$DRY"
for doc in "${ORDER[@]}"; do
  av="$(doc_field "$doc" apiVersion)" kind="$(doc_field "$doc" kind)"
  name="$(doc_field "$doc" name)" ns="$(doc_field "$doc" namespace)"
  file="$(basename "${doc%.*}")"
  label="$file: $kind ${ns:+$ns/}$name"
  if ! coll="$(collection_path "$av" "$kind" "$ns" 2>"$WORK/err")"; then
    fail "$label: resolve its URL" "$(cat "$WORK/err")"
    continue
  fi
  api POST "$coll?dryRun=All&fieldValidation=Strict&fieldManager=lahar-check-manifests" application/yaml "$doc"
  if [ "$CODE" = 409 ]; then
    # Already there (a second run on the same cluster): validate as an update instead.
    api PATCH "$coll/$name?dryRun=All&fieldValidation=Strict&fieldManager=lahar-check-manifests&force=true" \
      application/apply-patch+yaml "$doc"
    expect "$label: accepted (exists already; server-side apply, dry run)" 200
  else
    expect "$label: accepted (POST $coll?dryRun=All)" 201
  fi
  if [ "$CODE" = 200 ] || [ "$CODE" = 201 ]; then cp "$BODY" "$DRY/$kind.$name.json"; fi
  if [ "$kind" = Namespace ]; then
    api POST "$coll?fieldValidation=Strict" application/yaml "$doc"
    expect "$label: created for real (so that its contents can be admitted)" 201 409
  fi
done

# ===========================================================================================
section "config/*.yaml: the documents agree with each other and with the spec"
# Every dry-run response in one JSON object {kind: {name: object}}.
python3 - "$DRY" >"$WORK/all.json" <<'EOF'
import json, os, sys
out = {}
for f in sorted(os.listdir(sys.argv[1])):
    o = json.load(open(os.path.join(sys.argv[1], f)))
    out.setdefault(o.get("kind", "?"), {})[o.get("metadata", {}).get("name", "?")] = o
print(json.dumps(out))
EOF
# The default configuration: config/examples/elastic.conf without its comment lines.
python3 - "$ROOT/config/examples/elastic.conf" "$WORK/all.json" >"$WORK/all2.json" <<'EOF'
import json, sys
conf = "".join(l for l in open(sys.argv[1]) if not l.lstrip().startswith("#"))
d = json.load(open(sys.argv[2]))
d["_defaultConf"] = conf
print(json.dumps(d))
EOF
cp "$WORK/all2.json" "$BODY"
jcheck "every config/*.yaml object is in namespace lahar-system or cluster-scoped" \
  'all(o["metadata"].get("namespace", "lahar-system") == "lahar-system" for k, v in d.items() if not k.startswith("_") for o in v.values())'
jcheck "ConfigMap lahar-scheduler-config: key volcano-scheduler.conf is the default configuration (spec 4 = config/examples/elastic.conf)" \
  'note(d["ConfigMap"]["lahar-scheduler-config"]["data"]) and d["ConfigMap"]["lahar-scheduler-config"]["data"] == {"volcano-scheduler.conf": d["_defaultConf"]}'
DEP='d["Deployment"]["lahar-scheduler"]["spec"]'
POD="$DEP[\"template\"][\"spec\"]"
CTR="$POD[\"containers\"][0]"
jcheck "Deployment lahar-scheduler: 2 replicas, one container, image ghcr.io/lahar-sh/lahar-scheduler:v0.1.0" \
  "$DEP['replicas'] == 2 and len($POD['containers']) == 1 and $CTR['image'] == 'ghcr.io/lahar-sh/lahar-scheduler:v0.1.0'"
jcheck "Deployment: args hold the spec's flags (--scheduler-conf, --scheduler-name, --leader-elect, --leader-elect-namespace, --listen-address, -v)" \
  "note($CTR['args']) and {'--scheduler-conf=/etc/lahar/volcano-scheduler.conf', '--scheduler-name=lahar', '--leader-elect=true', '--leader-elect-namespace=lahar-system', '--listen-address=:8080', '-v=1'} <= set($CTR['args'])"
jcheck "Deployment: runs as ServiceAccount lahar-scheduler (the one rbac.yaml creates and binds)" \
  "$POD['serviceAccountName'] == 'lahar-scheduler' and 'lahar-scheduler' in d['ServiceAccount'] and all(s['name'] == 'lahar-scheduler' and s['namespace'] == 'lahar-system' for b in list(d['ClusterRoleBinding'].values()) + list(d['RoleBinding'].values()) for s in b['subjects'])"
jcheck "Deployment: the ConfigMap is mounted (whole, so that edits reach the daemon) at /etc/lahar, where --scheduler-conf points" \
  "note($CTR['volumeMounts']) and any(v.get('configMap', {}).get('name') == 'lahar-scheduler-config' and any(m['name'] == v['name'] and m['mountPath'] == '/etc/lahar' and not m.get('subPath') for m in $CTR['volumeMounts']) for v in $POD['volumes'])"
jcheck "Deployment: the leader-election namespace is where the Lease Role is granted" \
  "any(r['metadata']['namespace'] == 'lahar-system' and any('leases' in x['resources'] for x in r['rules']) for r in d['Role'].values())"
jcheck "Deployment: liveness GET /healthz and readiness GET /readyz on port 8080" \
  "(lambda port: $CTR['livenessProbe']['httpGet']['path'] == '/healthz' and port($CTR['livenessProbe']['httpGet']['port']) == 8080 and $CTR['readinessProbe']['httpGet']['path'] == '/readyz' and port($CTR['readinessProbe']['httpGet']['port']) == 8080)(lambda p: p if isinstance(p, int) else {x['name']: x['containerPort'] for x in $CTR['ports']}[p])"
jcheck "Deployment: resource requests set (cpu, memory)" \
  "note($CTR.get('resources')) and {'cpu', 'memory'} <= set($CTR['resources'].get('requests', {}))"
jcheck "Deployment: runAsNonRoot, readOnlyRootFilesystem, no privilege escalation, capabilities drop ALL" \
  "note($CTR['securityContext']) and ($CTR['securityContext'].get('runAsNonRoot') or $POD.get('securityContext', {}).get('runAsNonRoot')) is True and $CTR['securityContext']['readOnlyRootFilesystem'] is True and $CTR['securityContext']['allowPrivilegeEscalation'] is False and $CTR['securityContext']['capabilities']['drop'] == ['ALL']"
jcheck "Deployment: selector matches its pod template" \
  "all($DEP['template']['metadata']['labels'].get(k) == v for k, v in $DEP['selector']['matchLabels'].items())"
jcheck "Service lahar-scheduler: port 8080 named metrics, to the container's port 8080, selecting the scheduler's pods" \
  "(lambda s: note(s['ports']) and any(p['name'] == 'metrics' and p['port'] == 8080 and p['targetPort'] in ('metrics', 8080) for p in s['ports']) and any(x['name'] == 'metrics' and x['containerPort'] == 8080 for x in $CTR['ports']) and all($DEP['template']['metadata']['labels'].get(k) == v for k, v in s['selector'].items()))(d['Service']['lahar-scheduler']['spec'])"
jcheck "ClusterRole and Role use no wildcards" \
  "all('*' not in r.get(f, []) for k in ('ClusterRole', 'Role') for o in d.get(k, {}).values() for r in o['rules'] for f in ('apiGroups', 'resources', 'verbs', 'resourceNames'))"

# ===========================================================================================
section "RBAC (config/rbac.yaml created for real): what lahar-scheduler may and may not do"
for doc in "${ORDER[@]}"; do
  case "$(basename "$doc")" in rbac.yaml.*) ;; *) continue ;; esac
  kind="$(doc_field "$doc" kind)"
  [ "$kind" = Namespace ] && continue
  coll="$(collection_path "$(doc_field "$doc" apiVersion)" "$kind" "$(doc_field "$doc" namespace)")"
  api PATCH "$coll/$(doc_field "$doc" name)?fieldValidation=Strict&fieldManager=lahar-check-manifests&force=true" \
    application/apply-patch+yaml "$doc"
  [ "$CODE" = 200 ] || [ "$CODE" = 201 ] || fail "create $kind $(doc_field "$doc" name)" "HTTP $CODE: $(reason)"
done
# can VERB GROUP RESOURCE[/SUBRESOURCE] NAMESPACE: "true" or "false" from a SubjectAccessReview.
can() {
  local res="${3%%/*}" sub=""
  [ "$res" != "$3" ] && sub="${3#*/}"
  req <<EOF
{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"$SA_USER",
 "groups":["system:serviceaccounts","system:serviceaccounts:lahar-system","system:authenticated"],
 "resourceAttributes":{"verb":"$1","group":"$2","resource":"$res","subresource":"$sub","namespace":"$4"}}}
EOF
  api POST /apis/authorization.k8s.io/v1/subjectaccessreviews application/json
  python3 -c 'import json,sys; print(str(json.load(open(sys.argv[1]))["status"].get("allowed", False)).lower())' "$BODY" 2>/dev/null || echo error
}
# perms WANT "verb[,verb] group resource namespace" ...
perms() {
  local want="$1" line verbs group res ns v got bad
  shift
  for line in "$@"; do
    read -r verbs group res ns <<<"$line"
    [ "$group" = core ] && group=""
    bad=""
    for v in ${verbs//,/ }; do
      got="$(can "$v" "$group" "$res" "$ns")"
      [ "$got" = "$want" ] || bad="$bad $v=$got"
    done
    local where=" cluster-wide"
    [ -n "$ns" ] && where=" in $ns"
    local what="${group:-core} $res$where: $verbs"
    if [ "$want" = true ]; then what="allowed  $what"; else what="denied   $what"; fi
    if [ -z "$bad" ]; then pass "$what"; else fail "$what" "SubjectAccessReview says:$bad"; fi
  done
}
perms true \
  "get,list,watch core nodes" "get,list,watch core pods" \
  "get,list,watch scheduling.k8s.io priorityclasses" \
  "get,list,watch scheduling.volcano.sh podgroups" "get,list,watch scheduling.volcano.sh queues" \
  "get,list,watch policy poddisruptionbudgets" "get,list,watch topology.volcano.sh hypernodes" \
  "create core pods/binding team-a" "create core pods/eviction team-a" \
  "patch,update core pods/status team-a" \
  "update,patch scheduling.volcano.sh podgroups/status team-a" "update,patch scheduling.volcano.sh queues/status" \
  "patch scheduling.volcano.sh podgroups team-a" \
  "create,patch core events team-a" "create,patch events.k8s.io events team-a" \
  "get,create,update coordination.k8s.io leases lahar-system"
perms false \
  "create,update,patch,delete core pods team-a" "update,patch,delete core nodes" \
  "get,list core secrets team-a" "get,list core configmaps lahar-system" \
  "create,update,delete scheduling.volcano.sh podgroups team-a" \
  "create,update,patch,delete scheduling.volcano.sh queues" \
  "create core pods/exec team-a" "update core nodes/status" \
  "list,watch,delete coordination.k8s.io leases lahar-system" "get,create,update coordination.k8s.io leases kube-system" \
  "create,update policy poddisruptionbudgets team-a" "create scheduling.k8s.io priorityclasses" \
  "create,update,patch,delete topology.volcano.sh hypernodes" "update,patch topology.volcano.sh hypernodes/status" \
  "get,list core events team-a" "update,delete core events team-a"

# ===========================================================================================
section "Queue and PodGroup objects (Volcano style) on the CRDs"
# create DESCRIPTION COLLECTION: POSTs $REQ (JSON) with strict field validation; remembers it.
create() {
  api POST "$2?fieldValidation=Strict" application/json
  if expect "$1" 201; then
    CREATED+=("$2/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["name"])' "$BODY")")
    return 0
  fi
  return 1
}
QN="lahar-check-$SUF"
req <<EOF
{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"$QN"},
 "spec":{"weight":3,"reclaimable":false,"parent":"root","type":"batch","priority":10,
  "capability":{"cpu":"64","memory":"256Gi","nvidia.com/gpu":16,"pods":"1e3"},
  "deserved":{"cpu":"32500m","memory":"128Gi","nvidia.com/gpu":"8"},
  "guarantee":{"resource":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":2}},
  "affinity":{"nodeGroupAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":["gpu-a100"],
    "preferredDuringSchedulingIgnoredDuringExecution":["gpu-h100"]},
   "nodeGroupAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":["infra"]}},
  "extendClusters":[{"name":"member-1","weight":2,"capacity":{"cpu":"100","memory":"1Ti"}}]}}
EOF
# What it reads back as: what was written, with Volcano's default dequeueStrategy.
python3 -c 'import json,sys; q = json.load(open(sys.argv[1])); q["spec"]["dequeueStrategy"] = "traverse"; print(json.dumps(q))' \
  "$REQ" >"$WORK/queue.json"
if create "Queue $QN with weight, capability, deserved, guarantee.resource, reclaimable, parent, type, priority, affinity, extendClusters" "$Q"; then
  api GET "$Q/$QN"
  jcheck "Queue $QN reads back with its spec unchanged (quantities as written, affinity kept, dequeueStrategy defaulted)" \
    "same(d['spec'], json.load(open('$WORK/queue.json'))['spec'])"
fi

PGN="lahar-check-full-$SUF"
req <<EOF
{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
 "metadata":{"name":"$PGN","namespace":"$NS","labels":{"app":"train"}},
 "spec":{"minMember":4,"minTaskMember":{"master":1,"worker":3},"queue":"$QN",
  "priorityClassName":"high-priority","preemptable":true,
  "minResources":{"cpu":"4500m","memory":"16Gi","nvidia.com/gpu":4,"ephemeral-storage":"1.5e9",
    "pods":"4","example.com/foo":"2k","hugepages-2Mi":"0.5Gi"},
  "networkTopology":{"mode":"soft","highestTierAllowed":2},
  "subGroupPolicy":[{"name":"workers","subGroupSize":2,"labelSelector":{"matchLabels":{"role":"worker"}},
    "matchLabelKeys":["volcano.sh/shard-id"],"networkTopology":{"mode":"hard","highestTierName":"rack"}}]}}
EOF
# What it reads back as: what was written, with Volcano's default minSubGroups.
python3 -c 'import json,sys; g = json.load(open(sys.argv[1])); g["spec"]["subGroupPolicy"][0]["minSubGroups"] = 0; print(json.dumps(g))' \
  "$REQ" >"$WORK/pg.json"
if create "PodGroup $PGN with minMember, minTaskMember, queue, priorityClassName, minResources, preemptable, networkTopology, subGroupPolicy" "$PG"; then
  api GET "$PG/$PGN"
  jcheck "PodGroup $PGN reads back with its spec unchanged (subGroupPolicy minSubGroups defaulted)" \
    "same(d['spec'], json.load(open('$WORK/pg.json'))['spec'])"
fi

req <<EOF
{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"lahar-check-min-$SUF","namespace":"$NS"},
 "spec":{"minMember":1,"networkTopology":{"highestTierName":"spine"}}}
EOF
if create "minimal PodGroup (minMember only, networkTopology.highestTierName)" "$PG"; then
  jcheck "defaults as Volcano's: spec.queue = default, networkTopology.mode = hard" \
    "note(d['spec']) and d['spec']['queue'] == 'default' and d['spec']['networkTopology'] == {'mode': 'hard', 'highestTierName': 'spine'}"
fi

req <<EOF
{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"lahar-check-new-$SUF","namespace":"$NS"},
 "spec":{"minMember":2,"topologyAffinity":{"subGroupAntiAffinity":{"required":[{"subGroups":["prefill"],"topologyTierName":"rack"}]}}}}
EOF
if create "PodGroup with a field of newer Volcano releases (spec.topologyAffinity) accepted under strict validation" "$PG"; then
  jcheck "and kept as written" "d['spec'].get('topologyAffinity', {}).get('subGroupAntiAffinity', {}).get('required', [{}])[0].get('topologyTierName') == 'rack'"
fi

# --- status through the /status subresource, as the scheduler's ServiceAccount ------------
NOW="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
req <<EOF
{"status":{"phase":"Running","running":3,"succeeded":1,"failed":0,
 "conditions":[{"type":"Scheduled","status":"True","reason":"tasks in gang are ready to be scheduled",
   "message":"4/4 tasks in gang scheduled","lastTransitionTime":"$NOW","transitionID":"a1b2c3"},
  {"type":"Unschedulable","status":"False","reason":"NotEnoughResources","message":"",
   "lastTransitionTime":"$NOW","transitionID":"a1b2c2"}]}}
EOF
AS=$SA_USER api PATCH "$PG/$PGN/status" application/merge-patch+json
expect "as lahar-scheduler: PATCH podgroups/$PGN/status (phase Running, conditions, running/succeeded/failed)" 200
api GET "$PG/$PGN"
jcheck "PodGroup status reads back: phase Running, running 3, succeeded 1, conditions with all six fields" \
  "note(d.get('status')) and d['status']['phase'] == 'Running' and d['status']['running'] == 3 and d['status']['succeeded'] == 1 and [c['type'] for c in d['status']['conditions']] == ['Scheduled', 'Unschedulable'] and set(d['status']['conditions'][0]) == {'type', 'status', 'reason', 'message', 'lastTransitionTime', 'transitionID'}"
jcheck "the status write left the spec alone" "same(d['spec'], json.load(open('$WORK/pg.json'))['spec'])"
# A full update through /status (PUT), as client-go's UpdateStatus does.
python3 - "$BODY" >"$REQ" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["status"]["running"] = 4
d["status"]["succeeded"] = 0
d["spec"]["minMember"] = 99  # ignored by /status
print(json.dumps(d))
EOF
AS=$SA_USER api PUT "$PG/$PGN/status" application/json
expect "as lahar-scheduler: PUT podgroups/$PGN/status (UpdateStatus)" 200
jcheck "it changes status only (running 4, spec.minMember still 4)" "note([d['status'], d['spec']['minMember']]) and d['status']['running'] == 4 and d['spec']['minMember'] == 4"
req <<<'{"spec":{"minMember":5},"status":{"phase":"Completed"}}'
api PATCH "$PG/$PGN" application/merge-patch+json
expect "as admin: PATCH of the PodGroup itself (spec and status)" 200
jcheck "status is a subresource: that PATCH changed minMember but not the phase" \
  "note([d['spec']['minMember'], d['status']['phase']]) and d['spec']['minMember'] == 5 and d['status']['phase'] == 'Running'"
ACCEPT='application/json;as=Table;v=v1;g=meta.k8s.io' api GET "$PG/$PGN"
jcheck "kubectl get pg: columns NAME STATUS minMember RUNNINGS AGE QUEUE = $PGN Running 5 4 .. $QN" \
  "note([[c['name'] for c in d['columnDefinitions']], d['rows'][0]['cells']]) and [c['name'] for c in d['columnDefinitions']] == ['Name', 'STATUS', 'minMember', 'RUNNINGS', 'AGE', 'QUEUE'] and [d['rows'][0]['cells'][i] for i in (0, 1, 2, 3, 5)] == ['$PGN', 'Running', 5, 4, '$QN']"

req <<'EOF'
{"status":{"state":"Open","allocated":{"cpu":"12500m","memory":"48Gi","nvidia.com/gpu":"4","pods":3},
 "pending":1,"running":2,"unknown":0,"inqueue":1,"completed":5,
 "reservation":{"nodes":["node-1"],"resource":{"cpu":"2"}}}}
EOF
AS=$SA_USER api PATCH "$Q/$QN/status" application/merge-patch+json
expect "as lahar-scheduler: PATCH queues/$QN/status (state, allocated, counts, reservation)" 200
api GET "$Q/$QN"
jcheck "Queue status reads back: allocated {cpu 12500m, memory 48Gi, nvidia.com/gpu 4, pods 3}, state Open, running 2" \
  "note(d.get('status')) and d['status']['allocated'] == {'cpu': '12500m', 'memory': '48Gi', 'nvidia.com/gpu': '4', 'pods': 3} and d['status']['state'] == 'Open' and d['status']['running'] == 2"
jcheck "and the Queue's spec is untouched" "same(d['spec'], json.load(open('$WORK/queue.json'))['spec'])"
ACCEPT='application/json;as=Table;v=v1;g=meta.k8s.io' api GET "$Q/$QN"
jcheck "kubectl get q: columns NAME PARENT = $QN root" \
  "note(d['rows'][0]['cells']) and [c['name'] for c in d['columnDefinitions']] == ['Name', 'PARENT'] and d['rows'][0]['cells'] == ['$QN', 'root']"

VALID_Q="" n=0
for qty in 500m 1.5 4Gi 1e3 2k 0.5 +1 .5 1E-3 100Ki 7; do
  n=$((n + 1))
  VALID_Q="$VALID_Q\"example.com/r$n\":\"$qty\","
done
req <<EOF
{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"lahar-check-qty-$SUF","namespace":"$NS"},
 "spec":{"minMember":1,"minResources":{${VALID_Q}"int":8}}}
EOF
create "Kubernetes quantities accepted in minResources: 500m 1.5 4Gi 1e3 2k 0.5 +1 .5 1E-3 100Ki 7 and the integer 8" "$PG"

HN=/apis/topology.volcano.sh/v1alpha1/hypernodes
HNN="lahar-check-hn-$SUF"
req <<EOF
{"apiVersion":"topology.volcano.sh/v1alpha1","kind":"HyperNode","metadata":{"name":"$HNN"},
 "spec":{"tier":1,"tierName":"leaf","members":[
  {"type":"Node","selector":{"exactMatch":{"name":"node-1"}}},
  {"type":"Node","selector":{"regexMatch":{"pattern":"^gpu-[0-7]$"}}},
  {"type":"Node","selector":{"labelMatch":{"matchLabels":{"rack":"r1"},
    "matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}}}]}}
EOF
cp "$REQ" "$WORK/hn.json"
if create "HyperNode $HNN with tier, tierName and a member of each selector kind" "$HN"; then
  api GET "$HN/$HNN"
  jcheck "HyperNode $HNN reads back with its spec unchanged" "same(d['spec'], json.load(open('$WORK/hn.json'))['spec'])"
  ACCEPT='application/json;as=Table;v=v1;g=meta.k8s.io' api GET "$HN/$HNN"
  jcheck "kubectl get hn: columns NAME Tier TierName NodeCount Age = $HNN 1 leaf" \
    "note(d['rows'][0]['cells']) and [c['name'] for c in d['columnDefinitions']] == ['Name', 'Tier', 'TierName', 'NodeCount', 'Age'] and [str(c) for c in d['rows'][0]['cells'][:3]] == ['$HNN', '1', 'leaf']"
fi

# ===========================================================================================
section "invalid objects are refused by the schema"
# bad_object KIND API-VERSION URL METADATA-JSON DESCRIPTION FIELD SPEC-JSON: an object of KIND
# with this spec is refused, naming FIELD. bad_pg, bad_q, bad_hn: DESCRIPTION FIELD SPEC-JSON.
bad_object() {
  req <<EOF
{"apiVersion":"$2","kind":"$1","metadata":$4,"spec":$7}
EOF
  refused "$1 $5" POST "$3" application/json "$6"
}
bad_pg() { bad_object PodGroup scheduling.volcano.sh/v1beta1 "$PG" "{\"name\":\"lahar-check-bad-$SUF\",\"namespace\":\"$NS\"}" "$@"; }
bad_q() { bad_object Queue scheduling.volcano.sh/v1beta1 "$Q" "{\"name\":\"lahar-check-bad-$SUF\"}" "$@"; }
bad_hn() { bad_object HyperNode topology.volcano.sh/v1alpha1 "$HN" "{\"name\":\"lahar-check-bad-hn-$SUF\"}" "$@"; }
bad_pg 'minMember "abc"' spec.minMember '{"minMember":"abc"}'
bad_pg 'minMember 2.5' spec.minMember '{"minMember":2.5}'
bad_pg 'minResources cpu "1.5.3"' spec.minResources.cpu '{"minMember":1,"minResources":{"cpu":"1.5.3"}}'
bad_pg 'minResources memory "4GB"' spec.minResources.memory '{"minMember":1,"minResources":{"memory":"4GB"}}'
bad_pg 'minResources nvidia.com/gpu "lots"' spec.minResources.nvidia.com/gpu '{"minMember":1,"minResources":{"nvidia.com/gpu":"lots"}}'
bad_pg 'minResources cpu 1.5 (a JSON number that is not an integer)' spec.minResources.cpu '{"minMember":1,"minResources":{"cpu":1.5}}'
bad_pg 'minTaskMember worker "two"' spec.minTaskMember.worker '{"minMember":1,"minTaskMember":{"worker":"two"}}'
bad_pg 'queue 7 (not a string)' spec.queue '{"minMember":1,"queue":7}'
bad_pg 'preemptable "yes"' spec.preemptable '{"minMember":1,"preemptable":"yes"}'
bad_pg 'minResources as a list' spec.minResources '{"minMember":1,"minResources":["cpu"]}'
bad_q 'weight "heavy"' spec.weight '{"weight":"heavy"}'
bad_q 'capability cpu "1.5.3"' spec.capability.cpu '{"weight":1,"capability":{"cpu":"1.5.3"}}'
bad_q 'deserved memory "-"' spec.deserved.memory '{"weight":1,"deserved":{"memory":"-"}}'
bad_q 'guarantee.resource nvidia.com/gpu "2 GPUs"' spec.guarantee.resource.nvidia.com/gpu '{"weight":1,"guarantee":{"resource":{"nvidia.com/gpu":"2 GPUs"}}}'
bad_q 'reclaimable "no"' spec.reclaimable '{"weight":1,"reclaimable":"no"}'
bad_hn 'without tier' spec.tier '{"members":[{"type":"Node","selector":{"exactMatch":{"name":"n1"}}}]}'
bad_hn 'tier -1' spec.tier '{"tier":-1,"members":[{"type":"Node","selector":{"exactMatch":{"name":"n1"}}}]}'
bad_hn 'member type Switch' 'spec.members[0].type' '{"tier":1,"members":[{"type":"Switch","selector":{"exactMatch":{"name":"n1"}}}]}'
bad_hn 'member selector naming two kinds' 'Only one of ExactMatch, RegexMatch, or LabelMatch' \
  '{"tier":1,"members":[{"type":"Node","selector":{"exactMatch":{"name":"n1"},"regexMatch":{"pattern":"^n"}}}]}'
bad_hn 'member selector naming no kind' 'Either ExactMatch or RegexMatch or LabelMatch' '{"tier":1,"members":[{"type":"Node","selector":{}}]}'
bad_hn 'exactMatch name "Not_A_Name"' 'spec.members[0].selector.exactMatch.name' \
  '{"tier":1,"members":[{"type":"Node","selector":{"exactMatch":{"name":"Not_A_Name"}}}]}'
req <<<'{"status":{"running":"many"}}'
AS=$SA_USER refused 'PodGroup status.running "many" (through /status)' PATCH "$PG/$PGN/status" application/merge-patch+json status.running
req <<<'{"status":{"conditions":[{"type":"Scheduled","status":"True","lastTransitionTime":"yesterday"}]}}'
AS=$SA_USER refused 'PodGroup condition lastTransitionTime "yesterday"' PATCH "$PG/$PGN/status" application/merge-patch+json lastTransitionTime
req <<<'{"status":{"allocated":{"cpu":"1.5.3"}}}'
AS=$SA_USER refused 'Queue status.allocated cpu "1.5.3" (through /status)' PATCH "$Q/$QN/status" application/merge-patch+json status.allocated.cpu

# ===========================================================================================
if [ "$FAILED" -gt 0 ]; then
  echo "check-manifests: $FAILED of $((PASSED + FAILED)) checks FAILED (see FAIL above)"
  exit 1
fi
echo "check-manifests: $PASSED checks passed"
