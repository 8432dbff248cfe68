#!/usr/bin/env bash
# Smoke test of the real node (run testbed/cluster/cluster.sh up first, with the real node on): real
# containers from a local image, an HTTP readiness probe, a ClusterIP Service from the host and from a
# pod, cluster DNS by short and full name, kubectl logs and exec, a default-class PVC written by a
# non-root pod (uid 700, fsGroup), a graceful stop that honours SIGTERM, and a pod's attempt to reach
# an outside address failing on this machine. One line per check; stops at the first failure. Needs
# root (it reads the node's iptables counters).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
# shellcheck source=test/e2e/cluster/checks.sh
source "$HERE/checks.sh"
STATE=$(realpath -m "${PULP_STATE_DIR:-$REPO/.state}")
C=$STATE/cluster
KCFG=$C/kubeconfig
BIN=$(bash "$REPO/testbed/toolchain.sh" --print)
NODE=real-0
POD_SUBNET=10.77.0.0/24 # testbed/node/lib.sh
# TEST-NET-3 (RFC 5737): never routed anywhere. The check below sends to it only after it has seen the
# rule that rejects pod egress on this machine.
OUTSIDE=203.0.113.1

die() { echo "node-smoke: $*" >&2; exit 1; }
[[ -f "$KCFG" ]] || die "no cluster ($KCFG missing); run: bash testbed/cluster/cluster.sh up"
[[ $(id -u) == 0 ]] || die "needs root (iptables counters of the real node)"
k() { "$BIN/kubectl" --kubeconfig "$KCFG" --cache-dir "$C/kubectl-cache" "$@"; }

NS=node-smoke-$$-$RANDOM
cleanup() { k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true; }
trap cleanup EXIT

START=$EPOCHREALTIME
jp() { k -n "$NS" get "$1" -o "jsonpath=$2"; }
is() { [[ $(jp "$1" "$2") == "$3" ]]; }
events() { k -n "$NS" get events --sort-by=.lastTimestamp | tail -n 15; }
ready() { is "pod/$1" '{.status.conditions[?(@.type=="Ready")].status}' True; }
x() { k -n "$NS" exec "$1" -- "${@:2}"; } # pod, command...

# --- the node --------------------------------------------------------------------------------------

t0=$EPOCHREALTIME
got=$(k get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.metadata.labels.pulp-testbed/node-kind} {.status.addresses[?(@.type=="InternalIP")].address}' 2>&1) ||
  fail "node $NODE exists (is the real node on? PULP_TESTBED_REAL_NODE=0 skips it)" "$got"
[[ $got == "True real 10.77.0.1" ]] || fail "node $NODE Ready, labelled pulp-testbed/node-kind=real, InternalIP 10.77.0.1" "$got"
pass "node $NODE Ready, pulp-testbed/node-kind=real, InternalIP 10.77.0.1" "$t0"

t0=$EPOCHREALTIME
IMAGE=$(bash "$REPO/testbed/node/node.sh" "$C" "$BIN" image busybox 2>&1) || fail "busybox image built and imported" "$IMAGE"
pass "image $IMAGE built from busybox-static and imported" "$t0"

restricted_namespace "$NS"
check "ServiceAccount $NS/default created" 30 "k -n $NS get sa" -- k -n "$NS" get serviceaccount default

# pod NAME COMMAND [extra spec lines]: a restricted-compliant busybox pod on the real node, uid 700.
pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: {app: $1}}
spec:
  nodeSelector: {pulp-testbed/node-kind: real}
  terminationGracePeriodSeconds: ${GRACE:-2}
  securityContext: {runAsNonRoot: true, runAsUser: 700, runAsGroup: 700, fsGroup: 700, seccompProfile: {type: RuntimeDefault}}
  containers:
    - name: main
      image: $IMAGE
      imagePullPolicy: Never
      command: [/bin/sh, -c, '$2']
      securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true}
${3:-}
EOF
}

# --- a pod with an HTTP readiness probe, and a Service -----------------------------------------------

t0=$EPOCHREALTIME
pod web 'mkdir -p /tmp/www && echo "hello from $(hostname)" >/tmp/www/index.html && echo web started && exec httpd -f -p 8080 -h /tmp/www' "      ports: [{containerPort: 8080, name: http}]
      readinessProbe: {httpGet: {path: /index.html, port: http}, periodSeconds: 1}
      volumeMounts: [{name: tmp, mountPath: /tmp}]
  volumes: [{name: tmp, emptyDir: {}}]" | k apply -f - >/dev/null
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $NS}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
EOF
check "pod web Ready on $NODE (HTTP readiness probe)" 60 "k -n $NS describe pod web; events" -- ready web
got=$(jp pod/web '{.spec.nodeName} {.status.podIP}')
[[ $got =~ ^$NODE\ 10\.77\.0\.[0-9]+$ ]] || fail "pod web runs on $NODE with an IP in $POD_SUBNET" "$got"
pass "pod web on $NODE, pod IP ${got#* }" "$t0"

CLUSTER_IP=$(jp service/web '{.spec.clusterIP}')
from_host() { [[ $(curl -s --max-time 2 "http://$CLUSTER_IP/index.html") == "hello from web" ]]; }
check "Service web answers from the host (ClusterIP $CLUSTER_IP, kube-proxy)" 30 \
  "curl -sv --max-time 2 http://$CLUSTER_IP/index.html; k -n $NS get endpointslices -o wide" -- from_host

t0=$EPOCHREALTIME
got=$(k -n "$NS" logs web 2>&1) || fail "kubectl logs web" "$got"
[[ $got == *"web started"* ]] || fail "kubectl logs web shows the container's output" "$got"
pass "kubectl logs web" "$t0"
t0=$EPOCHREALTIME
got=$(x web sh -c 'id -u; cat /tmp/www/index.html' 2>&1) || fail "kubectl exec web" "$got"
[[ $got == $'700\nhello from web' ]] || fail "kubectl exec web runs as uid 700 in the container" "$got"
pass "kubectl exec web (uid 700)" "$t0"

# --- a second pod: the Service and cluster DNS from inside --------------------------------------------

pod client 'echo client started; exec sleep 3600' | k apply -f - >/dev/null
check "pod client Running" 60 "k -n $NS describe pod client; events" -- ready client
t0=$EPOCHREALTIME
# busybox nslookup tries every search domain and exits 1 when any of them is NXDOMAIN: read the answer.
# (It applies the search list only to names without a dot; wget resolves through libc and the search list.)
for name in web "web.$NS.svc.cluster.local"; do
  got=$(x client nslookup "$name" 2>&1) || true
  grep -q "^Address: $CLUSTER_IP$" <<<"$got" || fail "DNS: $name resolves to $CLUSTER_IP (CoreDNS)" "$got"
done
pass "DNS: web and web.$NS.svc.cluster.local -> $CLUSTER_IP (nslookup)" "$t0"
t0=$EPOCHREALTIME
# `timeout`, not wget -T: busybox 1.35's wget -T segfaults (exit 139).
for url in "http://web/index.html" "http://web.$NS/index.html" "http://web.$NS.svc.cluster.local/index.html"; do
  got=$(x client timeout 5 wget -q -O - "$url" 2>&1) || fail "Service web from pod client: $url" "$got"
  [[ $got == "hello from web" ]] || fail "Service web from pod client: $url" "$got"
done
pass "Service web from another pod as web, web.$NS and its full name" "$t0"
t0=$EPOCHREALTIME
got=$(x client nslookup does-not-exist.example 2>&1) || true
[[ $got == *"can't find does-not-exist.example: NXDOMAIN"* && $got != *Name:* ]] ||
  fail "DNS: a name outside the cluster is NXDOMAIN" "$got"
pass "DNS: a name outside the cluster fails (no upstream)" "$t0"

# --- storage: a default-class PVC, written by uid 700, shared by two pods --------------------------------

k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: $NS}
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
EOF
check "PVC data Bound (default StorageClass)" 60 "k -n $NS describe pvc data" -- is pvc/data '{.status.phase}' Bound
vol="      volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]"
pod writer 'echo written-by-$(id -u) >/data/file && echo wrote && exec sleep 3600' "$vol" | k apply -f - >/dev/null
check "pod writer (uid 700, fsGroup 700) Running with the PVC" 60 "k -n $NS describe pod writer; events" -- ready writer
t0=$EPOCHREALTIME
got=$(x writer sh -c 'cat /data/file; stat -c "%u" /data/file' 2>&1) || fail "uid 700 wrote to the PVC" "$got"
[[ $got == $'written-by-700\n700' ]] || fail "uid 700 wrote to the PVC" "$got"
pass "uid 700 wrote to the PVC" "$t0"

# --- graceful stop: SIGTERM reaches PID 1, the pod goes before its 30 s grace period ---------------------

GRACE=30 pod graceful 'trap "echo got SIGTERM >/data/term; exit 0" TERM; echo ready >/data/graceful; while :; do sleep 0.2; done' "$vol" |
  k apply -f - >/dev/null
check "pod graceful Running (RWX: the same PVC as writer)" 60 "k -n $NS describe pod graceful; events" -- ready graceful
check "pod graceful wrote to the shared PVC" 10 "x writer ls -la /data" -- x writer test -f /data/graceful
t0=$EPOCHREALTIME
k -n "$NS" delete pod graceful --wait=true --timeout=60s >/dev/null
took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
((took < 15)) || fail "pod graceful stopped on SIGTERM, not at the end of its 30 s grace period" "took ${took}s"
got=$(x writer cat /data/term 2>&1) || fail "pod graceful handled SIGTERM" "$got"
[[ $got == "got SIGTERM" ]] || fail "pod graceful handled SIGTERM" "$got"
pass "pod graceful stopped on SIGTERM (its handler ran; grace period 30 s)" "$t0"

# --- no way out: a pod's packet to an outside address fails here, fast --------------------------------

rule=(-s "$POD_SUBNET" -m comment --comment "pods have no egress" -j REJECT --reject-with icmp-net-prohibited)
iptables -C PULP-TESTBED "${rule[@]}" 2>/dev/null && iptables -C FORWARD -j PULP-TESTBED 2>/dev/null ||
  fail "the pod egress REJECT rule is in place (nothing was sent)" "$(iptables -S PULP-TESTBED 2>&1; iptables -S FORWARD 2>&1)"
rejected() { iptables -L PULP-TESTBED -v -n -x | awk '/pods have no egress/ { print $1 }'; }
before=$(rejected)
t0=$EPOCHREALTIME
if got=$(x client timeout 5 wget -q -O - "http://$OUTSIDE/" 2>&1); then fail "a pod cannot reach $OUTSIDE" "it got an answer: $got"; fi
took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
after=$(rejected)
((after > before)) || fail "the pod's packet to $OUTSIDE was rejected on this machine" "REJECT counter $before -> $after; wget: $got"
awk -v t="$took" 'BEGIN { exit !(t < 3) }' || fail "a pod's connection to $OUTSIDE fails fast" "took ${took}s: $got"
pass "a pod's connection to $OUTSIDE fails locally (REJECT counter $before -> $after)" "$t0"

# --- teardown -----------------------------------------------------------------------------------------

k delete namespace "$NS" --wait=false >/dev/null
namespace_gone() { [[ -z $(k get namespace "$NS" --ignore-not-found -o name) ]]; }
check "namespace deleted (containers stopped, PVC released)" 120 "k get ns $NS -o yaml; k -n $NS get pods" -- namespace_gone
trap - EXIT
echo "node-smoke: all checks passed in $(since "$START")"
