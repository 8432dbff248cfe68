#!/usr/bin/env bash
# real node: real CloudNativePG
#
# End-to-end test of the real CloudNativePG operator on the embedded cluster's real node (start the
# cluster with its real node first). It installs the operator (testbed/cnpg/install.sh: idempotent, and
# the operator stays installed for the other suites), then in a namespace of its own, with Pod Security
# `restricted` enforced, creates a Cluster whose spec is the program's own (testbed/cnpg/clusterSpec.ts
# -> components/database/database.ts: 2 instances, 1Gi on the default StorageClass, initdb pulp/pulp,
# switchover updates, PDB) with imageName localhost/postgresql:15 and the real node's nodeSelector, and
# checks: Ready, both instances on real nodes, psql through <name>-rw from the host (ClusterIP) and
# from a pod (Service DNS, the <name>-app Secret's uri), CREATE EXTENSION hstore as the app owner
# (pulpcore migration 0098), a switchover to the replica with the data and writes kept, then deletes the
# namespace. Prints one line per check with its time, and the memory of the operator and instances.
#
#   npm run test:cnpg    (KUBECONFIG and CONTAINERD_ADDRESS default to the embedded cluster's)
#
# Optional: PG_IMAGE (default localhost/postgresql:15, imported from testbed/images' cache when the node
# lacks it), PG_IMAGE_ARCHIVE (an OCI archive of it to import first), NODE_SELECTOR (default
# pulp-testbed/node-kind=real), CNPG_READY_TIMEOUT (600 s),
# KEEP_NAMESPACE=1 (leave the namespace for inspection). Any check that does not hold fails the run.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
# shellcheck source=test/e2e/cluster/checks.sh
source "$HERE/checks.sh"
START=$EPOCHREALTIME
die() { fail "$1" "${2:-}"; }
on_real_node_cluster
PG_IMAGE=${PG_IMAGE:-localhost/postgresql:15}
NODE_SELECTOR=${NODE_SELECTOR-pulp-testbed/node-kind=real}
READY_TIMEOUT=${CNPG_READY_TIMEOUT:-600}
CTR=${CTR:-ctr}
command -v psql >/dev/null || bash "$REPO/testbed/clients/install.sh" >/dev/null \
  || die "psql on the host" "testbed/clients/install.sh could not install Debian's postgresql-client"
command -v psql >/dev/null || die "psql on the host" "install Debian's postgresql-client"
sel_key=${NODE_SELECTOR%%=*} sel_val=${NODE_SELECTOR#*=}
real_nodes=$(k get nodes -l "$NODE_SELECTOR" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}')
[[ -n $real_nodes ]] || die "a real node ($NODE_SELECTOR)" "$(k get nodes --show-labels 2>&1)"
NODE=${real_nodes%% *}

# --- the operator -----------------------------------------------------------------------------------
t=$EPOCHREALTIME
extra=()
[[ -n ${PG_IMAGE_ARCHIVE:-} ]] && extra+=("$PG_IMAGE_ARCHIVE")
if ! out=$(CTR=$CTR bash "$REPO/testbed/cnpg/install.sh" "${extra[@]}" 2>&1); then
  fail "operator installed (testbed/cnpg/install.sh)" "$out"
fi
pass "operator installed, webhooks answer ($(tail -1 <<<"$out" | sed 's/^cnpg install: //'))" "$t"
op_node=$(k -n cnpg-system get pods -l app.kubernetes.io/name=cloudnative-pg -o jsonpath='{.items[0].spec.nodeName}')
[[ " $real_nodes " == *" $op_node "* ]] || fail "operator pod on a real node" "it runs on $op_node; real nodes: $real_nodes"
pass "operator pod on real node $op_node" "$t"

t=$EPOCHREALTIME
on_node() { "$CTR" --address "$CONTAINERD_ADDRESS" -n k8s.io images ls -q "name==$PG_IMAGE" | grep -qx "$PG_IMAGE"; }
# A fresh node has none of the built images: bring this one in from testbed/images' cache.
on_node || out=$(python3 "$REPO/testbed/images/build.py" import --address "$CONTAINERD_ADDRESS" --ctr "$CTR" "$PG_IMAGE" 2>&1) \
  || fail "operand image $PG_IMAGE in the node's containerd" "$out"
on_node || fail "operand image $PG_IMAGE in the node's containerd" "not there after the import; build it (npm run images) or set PG_IMAGE_ARCHIVE"
pass "operand image $PG_IMAGE in the node's containerd" "$t"

# --- the Cluster, as the program makes it -------------------------------------------------------------
NS=cnpg-e2e-$$-$RANDOM
C=pulp-db
cleanup() {
  [[ ${KEEP_NAMESPACE:-0} == 1 ]] && { echo "namespace $NS kept"; return; }
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
k create namespace "$NS" >/dev/null
k label namespace "$NS" pod-security.kubernetes.io/enforce=restricted >/dev/null

spec=$(cd "$REPO" && npx --no-install ts-node -T testbed/cnpg/clusterSpec.ts \
  "{\"instances\":2,\"storageSize\":\"1Gi\",\"imageName\":\"$PG_IMAGE\"}" 2>/dev/null) \
  || fail "the program's Cluster spec (testbed/cnpg/clusterSpec.ts)" "$spec"
manifest=$(python3 - "$spec" "$C" "$NS" "$sel_key" "$sel_val" <<'PY'
import json, sys
spec, name, ns, key, val = sys.argv[1:]
spec = json.loads(spec)
if key:
    spec["affinity"] = {"nodeSelector": {key: val}}
print(json.dumps({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
                  "metadata": {"name": name, "namespace": ns}, "spec": spec}))
PY
)
t=$EPOCHREALTIME
out=$(k apply -f - <<<"$manifest" 2>&1) || fail "Cluster created (admission webhooks)" "$out"
image=$(k -n "$NS" get cluster "$C" -o jsonpath='{.spec.imageName}')
[[ $image == "$PG_IMAGE" ]] || fail "Cluster keeps imageName" "spec.imageName is '$image'"
show_cluster() {
  k -n "$NS" get cluster "$C" -o jsonpath='{.status.phase}{" / "}{.status.phaseReason}{"\n"}' 2>&1
  k -n "$NS" get pods,pvc,jobs -o wide 2>&1
  k -n "$NS" get events --sort-by=.lastTimestamp 2>&1 | tail -n 20
  local p
  for p in $(k -n "$NS" get pods -o name 2>/dev/null); do
    echo "--- $p"; k -n "$NS" logs "$p" --all-containers --tail=8 2>&1 | cut -c1-400
  done
  echo "--- operator"; k -n cnpg-system logs deploy/cnpg-controller-manager --tail=15 2>&1 | cut -c1-400
}
if ! k -n "$NS" wait cluster/"$C" --for=condition=Ready --timeout="${READY_TIMEOUT}s" >/dev/null 2>&1; then
  fail "Cluster Ready within ${READY_TIMEOUT}s" "$(show_cluster)"
fi
ready_s=$(since "$t")
ready=$(k -n "$NS" get cluster "$C" -o jsonpath='{.status.readyInstances}')
[[ $ready == 2 ]] || fail "2 ready instances" "readyInstances=$ready; $(show_cluster)"
pass "Cluster create -> Ready, 2 instances ($ready_s)" "$t"
pods_nodes=$(k -n "$NS" get pods -l "cnpg.io/cluster=$C,cnpg.io/podRole=instance" -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{" "}{end}')
for pn in $pods_nodes; do
  [[ " $real_nodes " == *" ${pn#*=} "* ]] || fail "instances on real nodes" "$pods_nodes"
done
pass "instances on real nodes: $pods_nodes" "$t"

# --- the app Secret, from the host through the ClusterIP -----------------------------------------------
t=$EPOCHREALTIME
secret() { k -n "$NS" get secret "$C-app" -o jsonpath="{.data.$1}" | base64 -d; }
for key in username password dbname host port uri; do
  [[ -n $(secret "$key") ]] || fail "Secret $C-app has '$key'" "$(k -n "$NS" get secret "$C-app" -o jsonpath='{.data}' | python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)))')"
done
user=$(secret username) pass_=$(secret password) db=$(secret dbname) host=$(secret host)
[[ $user == pulp && $db == pulp && $host == "$C-rw" ]] \
  || fail "Secret $C-app matches the program's settings (pulp/pulp at $C-rw)" "username=$user dbname=$db host=$host"
rw_ip=$(k -n "$NS" get svc "$C-rw" -o jsonpath='{.spec.clusterIP}')
hpsql() { PGPASSWORD=$pass_ PGCONNECT_TIMEOUT=5 psql "host=$rw_ip port=5432 user=$user dbname=$db sslmode=require" -XAtq -v ON_ERROR_STOP=1 "$@"; }
out=$(hpsql -c "select current_user, current_database(), pg_is_in_recovery(), split_part(version(), ' ', 2)" 2>&1) \
  || fail "psql from the host to $C-rw ($rw_ip) with the $C-app Secret" "$out"
[[ $out == "pulp|pulp|f|15."* ]] || fail "psql from the host: app user on the primary, PostgreSQL 15" "$out"
pass "psql from the host via ClusterIP $rw_ip: $out" "$t"

t=$EPOCHREALTIME
out=$(hpsql -c "create extension if not exists hstore" -c "select ('a=>1'::hstore)->'a'" \
  -c "select extname from pg_extension where extname='hstore'" 2>&1) \
  || fail "CREATE EXTENSION hstore as the app owner (pulpcore migration 0098)" "$out"
[[ $out == $'1\nhstore' ]] || fail "hstore usable" "$out"
pass "CREATE EXTENSION hstore as the app owner" "$t"
out=$(hpsql -c "create table e2e(id int primary key, note text)" -c "insert into e2e values (1, 'before switchover')" 2>&1) \
  || fail "create a table and write as the app owner" "$out"

# --- from a pod, by Service name, with the Secret's uri -------------------------------------------------
t=$EPOCHREALTIME
node_sel="{}"
[[ -n $sel_key ]] && node_sel="{\"$sel_key\": \"$sel_val\"}"
out=$(k -n "$NS" apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: psql-client}
spec:
  restartPolicy: Never
  nodeSelector: $node_sel
  securityContext: {runAsNonRoot: true, runAsUser: 26, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: psql
    image: $PG_IMAGE
    imagePullPolicy: Never
    command: [psql, "\$(DB_URI)", -XAtq, -v, ON_ERROR_STOP=1, -c, "select current_user || '@' || current_database() || ' ' || note from e2e where id = 1"]
    env:
    - name: DB_URI
      valueFrom: {secretKeyRef: {name: $C-app, key: uri}}
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true}
YAML
) || fail "psql pod created (restricted)" "$out"
phase=""
for _ in $(seq 1 90); do
  phase=$(k -n "$NS" get pod psql-client -o jsonpath='{.status.phase}')
  [[ $phase == Succeeded || $phase == Failed ]] && break
  sleep 1
done
logs=$(k -n "$NS" logs psql-client 2>&1 || true)
[[ $phase == Succeeded && $logs == "pulp@pulp before switchover" ]] \
  || fail "psql from a pod to $C-rw by name with the Secret's uri" "phase=$phase logs: $logs; $(k -n "$NS" describe pod psql-client 2>&1 | tail -15)"
pass "psql from a pod via Service DNS $C-rw and the Secret's uri" "$t"

# --- switchover -----------------------------------------------------------------------------------------
t=$EPOCHREALTIME
old=$(k -n "$NS" get cluster "$C" -o jsonpath='{.status.currentPrimary}')
new=$(k -n "$NS" get pods -l "cnpg.io/cluster=$C,cnpg.io/instanceRole=replica" -o jsonpath='{.items[0].metadata.name}')
[[ -n $old && -n $new && $old != "$new" ]] || fail "a primary and a replica to switch over" "primary=$old replica=$new"
new_ip=$(k -n "$NS" get pod "$new" -o jsonpath='{.status.podIP}')
# What `kubectl cnpg promote` does: set the target primary through the status subresource.
out=$(k -n "$NS" patch cluster "$C" --subresource=status --type=merge \
  -p "{\"status\":{\"targetPrimary\":\"$new\",\"phase\":\"Switchover in progress\",\"phaseReason\":\"Switching over to $new\"}}" 2>&1) \
  || fail "request a switchover to $new" "$out"
cur=""
for _ in $(seq 1 180); do
  cur=$(k -n "$NS" get cluster "$C" -o jsonpath='{.status.currentPrimary}')
  [[ $cur == "$new" ]] && break
  sleep 1
done
[[ $cur == "$new" ]] || fail "switchover: currentPrimary becomes $new within 180s" "currentPrimary=$cur; $(show_cluster)"
k -n "$NS" wait cluster/"$C" --for=condition=Ready --timeout=300s >/dev/null 2>&1 \
  || fail "Ready again after the switchover" "$(show_cluster)"
out=""
for _ in $(seq 1 60); do
  out=$(hpsql -c "insert into e2e values (2, 'after switchover')" -c "select inet_server_addr(), pg_is_in_recovery(), count(*) from e2e" 2>&1) && break
  sleep 1
done
[[ $out == "$new_ip|f|2" ]] || fail "after the switchover $C-rw reaches $new ($new_ip), writable, data kept" "$out"
# The Ready condition can still be the one from before the switchover: wait for the old primary itself
# (it restarts, rewinds and follows the new one).
ready=""
for _ in $(seq 1 300); do
  ready=$(k -n "$NS" get cluster "$C" -o jsonpath='{.status.readyInstances}')
  [[ $ready == 2 ]] && break
  sleep 1
done
[[ $ready == 2 ]] || fail "the old primary rejoins as a replica within 300s" "readyInstances=$ready; $(show_cluster)"
pass "switchover $old -> $new: $C-rw writable on $new_ip, data kept, 2 ready" "$t"

# --- memory (kubelet summary API through the API server) -------------------------------------------------
summary=$(k get --raw "/api/v1/nodes/$NODE/proxy/stats/summary" 2>/dev/null || true)
mem=$(python3 - "$NS" "$summary" <<'PY' 2>/dev/null || true
import json, sys
ns, raw = sys.argv[1], sys.argv[2]
rows = []
for p in json.loads(raw).get("pods", []):
    ref = p["podRef"]
    if ref["namespace"] in (ns, "cnpg-system"):
        ws = (p.get("memory") or {}).get("workingSetBytes")
        rows.append("%s=%s" % (ref["name"], "%.0fMiB" % (ws / 2**20) if ws else "n/a"))
print(" ".join(sorted(rows)))
PY
)
echo "memory (working set): ${mem:-not available from the kubelet summary API}"

# --- delete ----------------------------------------------------------------------------------------------
if [[ ${KEEP_NAMESPACE:-0} != 1 ]]; then
  t=$EPOCHREALTIME
  out=$(k delete namespace "$NS" --timeout=180s 2>&1) || fail "namespace $NS deleted within 180s" "$out; $(k -n "$NS" get all,pvc 2>&1)"
  pass "namespace $NS deleted" "$t"
fi
trap - EXIT
echo "real CloudNativePG on the real node: all checks passed in $(since "$START")"
