#!/usr/bin/env bash
# real node: real CDI
#
# End-to-end test of the real CDI (testbed/cdi, v1.58.1) on the embedded cluster's real node (start the
# cluster with its real node first). It installs CDI (testbed/cdi/install.sh: idempotent, and CDI stays
# installed), then in a namespace of its own, with Pod Security `restricted` enforced (the importer pod
# satisfies it: CDI's SetRestrictedSecurityContext), serves a small uncompressed tar over http from a
# busybox pod behind a Service, creates the DataVolume the program makes for a `dataVolumes` entry
# (testbed/cdi/dataVolume.ts -> components/cdi/dataVolumes.ts: contentType archive, ReadWriteMany,
# Filesystem) on the cluster's default StorageClass (the host-path one), and checks: phase Succeeded,
# the PVC is the real importer's (not the stand-in's), and the files read back from a pod that mounts
# the PVC have the sha256 of the originals. Then deletes the namespace. Prints one line per check with
# its time, and the memory of CDI's pods.
#
#   npm run test:cdi    (KUBECONFIG and CONTAINERD_ADDRESS default to the embedded cluster's; root: ctr)
#
# Optional: DV_STORAGE_CLASS (default: the cluster's default StorageClass), NODE_SELECTOR (default
# pulp-testbed/node-kind=real), CDI_IMPORT_TIMEOUT (300 s), CDI_INSTALL_TIMEOUT (install.sh, 600 s),
# KEEP_NAMESPACE=1 (leave the namespace for inspection). Any check that does not hold fails the run.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
# shellcheck source=test/e2e/cluster/checks.sh
source "$HERE/checks.sh"
START=$EPOCHREALTIME
die() { fail "$1" "${2:-}"; }
on_real_node_cluster
C=$(dirname "$KUBECONFIG")
NODE_SELECTOR=${NODE_SELECTOR-pulp-testbed/node-kind=real}
IMPORT_TIMEOUT=${CDI_IMPORT_TIMEOUT:-300}
CTR=${CTR:-ctr}
sel_key=${NODE_SELECTOR%%=*} sel_val=${NODE_SELECTOR#*=}
real_nodes=$(k get nodes -l "$NODE_SELECTOR" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}')
[[ -n $real_nodes ]] || die "a real node ($NODE_SELECTOR)" "$(k get nodes --show-labels 2>&1)"
NODE=${real_nodes%% *}
node_sel="{}"
[[ -n $sel_key ]] && node_sel="{\"$sel_key\": \"$sel_val\"}"

# --- CDI ------------------------------------------------------------------------------------------------
t=$EPOCHREALTIME
if ! out=$(CTR=$CTR bash "$REPO/testbed/cdi/install.sh" 2>&1); then
  fail "CDI installed (testbed/cdi/install.sh)" "$out"
fi
pass "CDI installed ($(tail -1 <<<"$out" | sed 's/^cdi install: //'))" "$t"
pods_nodes=$(k -n cdi get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{" "}{end}')
for pn in $pods_nodes; do
  [[ " $real_nodes " == *" ${pn#*=} "* ]] || fail "CDI pods on real nodes" "$pods_nodes"
done
pass "CDI pods on real nodes: $pods_nodes" "$t"

t=$EPOCHREALTIME
IMAGE=$(bash "$REPO/testbed/node/node.sh" "$C" "$BIN" image busybox 2>&1) || fail "busybox image built and imported" "$IMAGE"
pass "image $IMAGE in the node's containerd" "$t"

SC=${DV_STORAGE_CLASS:-$(k get storageclass -o jsonpath='{range .items[?(@.metadata.annotations.storageclass\.kubernetes\.io/is-default-class=="true")]}{.metadata.name}{"\n"}{end}' | head -1 || true)}
[[ -n $SC ]] || die "a StorageClass for the DataVolume" "no default StorageClass; set DV_STORAGE_CLASS. $(k get storageclass 2>&1)"
provisioner=$(k get storageclass "$SC" -o jsonpath='{.provisioner}' 2>&1) || die "StorageClass $SC exists" "$provisioner"

# --- the archive, served from a pod on the real node ----------------------------------------------------
NS=cdi-e2e-$$-$RANDOM
DV=seed
tmp=$(mktemp -d)
cleanup() {
  rm -rf "$tmp"
  [[ ${KEEP_NAMESPACE:-0} == 1 ]] && { echo "namespace $NS kept"; return; }
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
restricted_namespace "$NS"

t=$EPOCHREALTIME
mkdir -p "$tmp/src/sub"
printf 'seeded by test/e2e/cluster/cdi.sh in %s\n' "$NS" >"$tmp/src/hello.txt"
head -c 262144 /dev/urandom >"$tmp/src/sub/random.bin"
files=(hello.txt sub/random.bin)
# Members named, not `.`: a `./` entry would make the importer's tar (uid 107) set the mode and times of
# the volume's root directory, which root owns on host-path volumes (not tried).
tar --format=ustar -C "$tmp/src" -cf "$tmp/seed.tar" hello.txt sub
want=$(cd "$tmp/src" && sha256sum "${files[@]}")
out=$(k -n "$NS" create configmap seed-tar --from-file=seed.tar="$tmp/seed.tar" 2>&1) || fail "ConfigMap with the archive" "$out"
out=$(k -n "$NS" apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: seed-server, labels: {app: seed-server}}
spec:
  nodeSelector: $node_sel
  terminationGracePeriodSeconds: 2
  securityContext: {runAsNonRoot: true, runAsUser: 700, runAsGroup: 700, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: httpd
    image: $IMAGE
    imagePullPolicy: Never
    command: [/bin/sh, -c, 'mkdir -p /tmp/www && cp /seed/seed.tar /tmp/www/ && exec httpd -f -p 8080 -h /tmp/www']
    ports: [{containerPort: 8080, name: http}]
    readinessProbe: {httpGet: {path: /seed.tar, port: http}, periodSeconds: 1}
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true}
    volumeMounts: [{name: tmp, mountPath: /tmp}, {name: seed, mountPath: /seed, readOnly: true}]
  volumes: [{name: tmp, emptyDir: {}}, {name: seed, configMap: {name: seed-tar}}]
---
apiVersion: v1
kind: Service
metadata: {name: seed-server}
spec:
  selector: {app: seed-server}
  ports: [{port: 80, targetPort: http}]
YAML
) || fail "archive server pod and Service created (restricted)" "$out"
k -n "$NS" wait pod/seed-server --for=condition=Ready --timeout=120s >/dev/null 2>&1 \
  || fail "archive server pod Ready within 120s" "$(k -n "$NS" describe pod seed-server 2>&1 | tail -n 25)"
ip=$(k -n "$NS" get service seed-server -o jsonpath='{.spec.clusterIP}')
got=""
for _ in $(seq 1 30); do
  got=$(curl -s --max-time 2 "http://$ip/seed.tar" | sha256sum | cut -d' ' -f1) || true
  [[ $got == $(sha256sum <"$tmp/seed.tar" | cut -d' ' -f1) ]] && break
  sleep 1
done
[[ $got == $(sha256sum <"$tmp/seed.tar" | cut -d' ' -f1) ]] \
  || fail "the archive served intact through Service seed-server ($ip)" "sha256 of the download: $got"
pass "$(stat -c %s "$tmp/seed.tar")-byte tar (${#files[@]} files) served by seed-server ($ip)" "$t"

# --- the DataVolume, as the program makes it ------------------------------------------------------------
URL=http://seed-server.$NS.svc.cluster.local/seed.tar
t=$EPOCHREALTIME
dv=$(cd "$REPO" && npx --no-install ts-node -T testbed/cdi/dataVolume.ts \
  "{\"name\":\"$DV\",\"url\":\"$URL\",\"size\":\"64Mi\",\"storageClass\":\"$SC\"}" 2>"$tmp/dv.err") \
  || fail "the program's DataVolume (testbed/cdi/dataVolume.ts)" "$(cat "$tmp/dv.err")"
out=$(k -n "$NS" create -f - <<<"$dv" 2>&1) || fail "DataVolume created (admission webhooks)" "$out"
show_dv() {
  k -n "$NS" get datavolume "$DV" -o jsonpath='phase={.status.phase} progress={.status.progress}{"\n"}{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' 2>&1
  k -n "$NS" get pvc,pods -o wide 2>&1
  k -n "$NS" get events --sort-by=.lastTimestamp 2>&1 | tail -n 20
  local p
  for p in $(k -n "$NS" get pods -o name 2>/dev/null); do
    [[ $p == pod/seed-server ]] && continue
    echo "--- $p"; k -n "$NS" logs "$p" --all-containers --tail=15 2>&1 | cut -c1-400
  done
  echo "--- cdi-deployment"; k -n cdi logs deploy/cdi-deployment --tail=200 2>&1 | grep -F "$NS" | tail -n 15 | cut -c1-400
}
phase=""
end=$((SECONDS + IMPORT_TIMEOUT))
while ((SECONDS < end)); do
  phase=$(k -n "$NS" get datavolume "$DV" -o jsonpath='{.status.phase}' 2>/dev/null) || true
  [[ $phase == Succeeded || $phase == Failed ]] && break
  sleep 2
done
[[ $phase == Succeeded ]] || fail "DataVolume $DV Succeeded within ${IMPORT_TIMEOUT}s (archive over http, restricted namespace)" "phase=$phase; $(show_dv)"
pass "DataVolume $DV create -> Succeeded (contentType archive, $SC: $provisioner)" "$t"

t=$EPOCHREALTIME
pvc=$(k -n "$NS" get pvc "$DV" -o jsonpath='{.spec.accessModes[*]} {.spec.volumeMode} {.spec.storageClassName} {.status.phase} {.metadata.annotations.cdi\.kubevirt\.io/storage\.pod\.phase}')
[[ $pvc == "ReadWriteMany Filesystem $SC Bound Succeeded" ]] \
  || fail "PVC $DV: ReadWriteMany, Filesystem, $SC, Bound, imported by the real importer (pod phase annotation)" "$pvc; $(show_dv)"
pass "PVC $DV: $pvc (the importer's annotation)" "$t"
standin_log=$C/logs/standin-controllers.log
if [[ -f $standin_log ]]; then
  ! grep -F "DataVolume $NS/$DV" "$standin_log" >/dev/null \
    || fail "the stand-in left DataVolume $NS/$DV alone" "$(grep -F -e "DataVolume $NS/$DV" -e 'real CDI' "$standin_log" | tail -n 10)"
  pass "the stand-in left DataVolume $NS/$DV to the real CDI" "$t"
else
  echo "      (no stand-in log at $standin_log: hand-off not checked)"
fi

# --- the files, read back from a pod that mounts the PVC ------------------------------------------------
t=$EPOCHREALTIME
out=$(k -n "$NS" apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: seed-reader}
spec:
  restartPolicy: Never
  nodeSelector: $node_sel
  securityContext: {runAsNonRoot: true, runAsUser: 700, runAsGroup: 700, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: read
    image: $IMAGE
    imagePullPolicy: Never
    command: [/bin/sh, -c, 'cd /data && sha256sum ${files[*]} && echo --- && ls -lnR .']
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true}
    volumeMounts: [{name: data, mountPath: /data, readOnly: true}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: $DV, readOnly: true}}]
YAML
) || fail "reader pod created (restricted)" "$out"
phase=""
for _ in $(seq 1 90); do
  phase=$(k -n "$NS" get pod seed-reader -o jsonpath='{.status.phase}' 2>/dev/null) || true
  [[ $phase == Succeeded || $phase == Failed ]] && break
  sleep 1
done
logs=$(k -n "$NS" logs seed-reader 2>&1 || true)
[[ $phase == Succeeded && ${logs%%$'\n'---*} == "$want" ]] \
  || fail "the imported files have the originals' sha256" "phase=$phase; want:
$want
got:
$logs
$(k -n "$NS" describe pod seed-reader 2>&1 | tail -n 15)"
pass "${#files[@]} files read back from PVC $DV, sha256 equal" "$t"

# --- memory (kubelet summary API through the API server) -------------------------------------------------
summary=$(k get --raw "/api/v1/nodes/$NODE/proxy/stats/summary" 2>/dev/null || true)
mem=$(python3 - "$summary" <<'PY' 2>/dev/null || true
import json, sys
rows = []
for p in json.loads(sys.argv[1]).get("pods", []):
    if p["podRef"]["namespace"] == "cdi":
        ws = (p.get("memory") or {}).get("workingSetBytes")
        rows.append("%s=%s" % (p["podRef"]["name"], "%.0fMiB" % (ws / 2**20) if ws else "n/a"))
print(" ".join(sorted(rows)))
PY
)
echo "memory (working set): ${mem:-not available from the kubelet summary API}"

# --- delete ----------------------------------------------------------------------------------------------
if [[ ${KEEP_NAMESPACE:-0} != 1 ]]; then
  t=$EPOCHREALTIME
  out=$(k delete namespace "$NS" --timeout=180s 2>&1) || fail "namespace $NS deleted within 180s" "$out; $(k -n "$NS" get all,pvc,datavolumes 2>&1)"
  pass "namespace $NS deleted" "$t"
fi
rm -rf "$tmp"
trap - EXIT
echo "real CDI on the real node: all checks passed in $(since "$START")"
