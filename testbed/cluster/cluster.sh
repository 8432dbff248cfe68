#!/usr/bin/env bash
# A throwaway local Kubernetes cluster for end-to-end tests: a real control plane (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler) from the toolchain binaries, kwok fake
# nodes, and stand-in CNPG/CDI controllers (standin-controllers.mjs). No Docker, no network access:
# everything listens on 127.0.0.1 only.
#
#   testbed/cluster/cluster.sh up       start (or report already running); prints the time taken
#   testbed/cluster/cluster.sh down     stop every process and delete the cluster state
#   testbed/cluster/cluster.sh status   processes, ports, kubeconfig, nodes; exit 1 unless all run
#   testbed/cluster/cluster.sh env      `export KUBECONFIG=...` lines, for eval
#
# State lives in ${PULP_STATE_DIR:-<repo>/.state}/cluster. Ports are picked at `up` and written
# there, so checkouts with different state dirs can run clusters side by side.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE=$(realpath -m "${PULP_STATE_DIR:-$REPO/.state}")
C=$STATE/cluster
PKI=$C/pki
LOGS=$C/logs
PIDS=$C/pids
KCFGS=$C/kubeconfigs
KUBECONFIG_FILE=$C/kubeconfig
PORTS_FILE=$C/ports
BIN=$(bash "$REPO/testbed/toolchain.sh" --print)

SERVICE_CIDR=10.96.0.0/16
# shellcheck disable=SC2034 # used by lib/pki.sh
SERVICE_IP=10.96.0.1 # first address of SERVICE_CIDR: the `kubernetes` Service
# Fake pod IPs handed out by kwok; nothing is routed. Not loopback: Endpoints validation rejects it.
POD_CIDR=10.244.0.1/16
# The repository's copy (test/fixtures/crds) unless $PULP_CRD_DIR names another.
CRD_DIR=$(bash "$HERE/crds.sh" dir) || exit 1
NODES=3
# shellcheck disable=SC2034 # used by lib/objects.sh
ZONES=(zone-a zone-b)
PROCS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok standin-controllers)
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwok-stages)

# --- real node (testbed/node/): one real node `real-0` beside the kwok ones ------------------------
# PULP_TESTBED_REAL_NODE=0: kwok nodes only (parallel checkouts: one real node per machine).
# Without the variable, a cluster keeps the mode it was started in: the e2e harness runs `up` again, and
# that must not turn a kwok-only cluster into one with a real node (and tainted kwok nodes).
REAL_NODE=${PULP_TESTBED_REAL_NODE:-$(cat "$C/real-node" 2>/dev/null || echo 1)}
real_node() { [[ $REAL_NODE != 0 ]]; }
node_sh() { bash "$REPO/testbed/node/node.sh" "$C" "$BIN" "$@"; }
# --- end real node ---------------------------------------------------------------------------------

log() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { echo "cluster: $*" >&2; exit 1; }
k() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$C/kubectl-cache" "$@"; }

# The pieces, one concern per file (each sourced, so they share the settings above).
# shellcheck source=lib/processes.sh
source "$HERE/lib/processes.sh"
# shellcheck source=lib/ports.sh
source "$HERE/lib/ports.sh"
# shellcheck source=lib/pki.sh
source "$HERE/lib/pki.sh"
# shellcheck source=lib/objects.sh
source "$HERE/lib/objects.sh"

# --- commands --------------------------------------------------------------------------------------

running() {
  local p
  for p in "${PROCS[@]}"; do alive "$p" || return 1; done
  k get --raw /readyz >/dev/null 2>&1 || return 1
  ! real_node || node_sh running >/dev/null 2>&1 # real node
}

apiserver_ready() { [[ $(k get --raw /readyz 2>/dev/null) == ok ]]; }
healthz() { [[ $(curl -sk --max-time 2 "https://127.0.0.1:$1/healthz") == ok ]]; }
etcd_healthy() {
  curl -s --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/apiserver-etcd-client.crt" --key "$PKI/apiserver-etcd-client.key" \
    "https://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'
}
nodes_ready() {
  local n
  n=$(k get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')
  ((n == NODES))
}
# One kubectl call waits up to 20 s: a loaded API server answers a 2 s wait too late, every time.
crds_established() { k wait --for=condition=Established --timeout=20s "${CRDS[@]/#/--filename=}"; }
pvc_bound() { [[ $(k -n default get pvc cluster-selfcheck-rwx -o jsonpath='{.status.phase}') == Bound ]]; }
standin_ready() { grep -q 'standin: ready' "$LOGS/standin-controllers.log"; }

cmd_up() {
  local t0=$EPOCHREALTIME
  local missing=() b
  for b in "${BINARIES[@]}"; do [[ -x "$BIN/$b" ]] || missing+=("$b"); done
  ((${#missing[@]} == 0)) || die "missing in $BIN: ${missing[*]}. Build them with 'npm run toolchain' (cluster.sh never builds)."
  for b in openssl python3 curl node setsid; do command -v "$b" >/dev/null || die "'$b' is not on PATH"; done
  ! real_node || bash "$REPO/testbed/node/packages.sh" # real node: its Debian packages
  # The repo-manager.pulpproject.org CRDs are the Pulp operator's; this project does not install them.
  CRDS=()
  for f in "$CRD_DIR"/*.yaml; do
    if [[ -e $f && $f != */repo-manager.pulpproject.org_* ]]; then CRDS+=("$f"); fi
  done
  ((${#CRDS[@]})) || die "no CRDs found in $CRD_DIR"

  if [[ -f "$PORTS_FILE" ]]; then
    # shellcheck disable=SC1090
    source "$PORTS_FILE"
    if running; then
      log "already running (kubeconfig: $KUBECONFIG_FILE)"
      return 0
    fi
    local p dead=()
    for p in "${PROCS[@]}"; do alive "$p" || dead+=("$p"); done
    log "found a stopped or broken cluster (not running: ${dead[*]:-none}); starting from scratch"
  fi
  stop_all
  rm -rf "$C"
  mkdir -p "$PKI" "$LOGS" "$PIDS" "$KCFGS"
  echo "$REAL_NODE" >"$C/real-node"
  # Anything failing from here on stops what was started; logs stay for a look.
  trap 'rc=$?; if ((rc)); then stop_all; echo "cluster: up failed; logs are in $LOGS" >&2; fi' EXIT

  local ports
  read -r -a ports <<<"$(pick_ports)"
  local i
  for i in "${!PORT_NAMES[@]}"; do
    printf -v "${PORT_NAMES[i]}" '%s' "${ports[i]}"
    echo "${PORT_NAMES[i]}=${ports[i]}" >>"$PORTS_FILE"
  done

  gen_pki
  write_kubeconfig "$KUBECONFIG_FILE" admin
  local c
  for c in kube-controller-manager kube-scheduler kwok standin-controllers; do
    write_kubeconfig "$KCFGS/$c.kubeconfig" "$c"
  done
  log "pki and kubeconfigs written; apiserver will be https://127.0.0.1:$APISERVER_PORT"

  check_port etcd "$ETCD_PORT"
  check_port etcd "$ETCD_PEER_PORT"
  # unsafe-no-fsync: the data is thrown away anyway, and fsync dominates etcd latency.
  start etcd "$BIN/etcd" --name=pulp-local --data-dir="$C/etcd" \
    --listen-client-urls="https://127.0.0.1:$ETCD_PORT" --advertise-client-urls="https://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="pulp-local=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state=new \
    --cert-file="$PKI/etcd-server.crt" --key-file="$PKI/etcd-server.key" \
    --client-cert-auth --trusted-ca-file="$PKI/ca.crt" \
    --unsafe-no-fsync --log-level=warn
  wait_for etcd 30 "etcd /health" etcd_healthy
  log "etcd ready on 127.0.0.1:$ETCD_PORT"

  check_port kube-apiserver "$APISERVER_PORT"
  # endpoint-reconciler none: the `kubernetes` Endpoints would carry the loopback advertise
  # address, which Endpoints validation rejects; nothing here needs them.
  start kube-apiserver "$BIN/kube-apiserver" \
    --advertise-address=127.0.0.1 --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --etcd-servers="https://127.0.0.1:$ETCD_PORT" --etcd-cafile="$PKI/ca.crt" \
    --etcd-certfile="$PKI/apiserver-etcd-client.crt" --etcd-keyfile="$PKI/apiserver-etcd-client.key" \
    --cert-dir="$PKI/apiserver-serving" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --requestheader-client-ca-file="$PKI/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
    --authorization-mode=Node,RBAC \
    `# real node: logs/exec reach the kubelet on its InternalIP (the node name does not resolve)` \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --allow-privileged=true \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --endpoint-reconciler-type=none \
    --profiling=false
  wait_for kube-apiserver 90 "/readyz" apiserver_ready
  log "kube-apiserver ready on 127.0.0.1:$APISERVER_PORT"

  check_port kube-controller-manager "$KCM_PORT"
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$KCFGS/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig="$KCFGS/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig="$KCFGS/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --cert-dir="$PKI/kcm-serving" \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --use-service-account-credentials=true \
    --enable-hostpath-provisioner=true \
    --controllers='*' \
    `# kwok's node heartbeats lag on a busy 2-core machine; a short grace period flipped every node` \
    `# NotReady, marked every pod unready and stalled rollouts.` \
    --node-monitor-grace-period=3m \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --cluster-name=pulp-local \
    --leader-elect=false \
    --profiling=false
  check_port kube-scheduler "$SCHEDULER_PORT"
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig="$KCFGS/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="$KCFGS/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$KCFGS/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --cert-dir="$PKI/scheduler-serving" \
    --leader-elect=false \
    --profiling=false
  check_port kwok "$KWOK_PORT"
  # An explicit config keeps a personal ~/.kwok/kwok.yaml out. Pod stages: kwok's defaults (their files
  # come with the toolchain; naming any pod stage replaces the compiled-in ones) plus this test bed's own.
  {
    printf 'apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions: {}\n'
    local stage
    for stage in "$BIN"/kwok-stages/*.yaml "$HERE"/stages/*.yaml; do printf -- '---\n'; cat "$stage"; done
  } >"$C/kwok.yaml"
  start kwok "$BIN/kwok" --kubeconfig="$KCFGS/kwok.kubeconfig" --config="$C/kwok.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr="$POD_CIDR" --node-ip=127.0.0.1 --node-port="$KWOK_PORT" \
    --server-address="127.0.0.1:$KWOK_PORT" \
    --node-lease-duration-seconds=40

  # The stand-ins retry until their CRDs exist; starting them now overlaps node startup.
  start standin-controllers node "$HERE/standin-controllers.mjs" \
    --kubectl="$BIN/kubectl" --kubeconfig="$KCFGS/standin-controllers.kubeconfig" --cache-dir="$C/kubectl-cache-standin"

  # While those start: cluster objects that need only the apiserver.
  # Server-side: the big CRDs exceed the last-applied-configuration annotation limit.
  k apply --server-side --field-manager=pulp-cluster "${CRDS[@]/#/--filename=}" >/dev/null ||
    fail kube-apiserver "applying the CRDs in $CRD_DIR failed"
  { storageclass_yaml; nodes_yaml; echo ---; selfcheck_pvc_yaml; } | k apply -f - >/dev/null

  wait_for kube-controller-manager 60 "/healthz" healthz "$KCM_PORT"
  wait_for kube-scheduler 60 "/healthz" healthz "$SCHEDULER_PORT"
  wait_for kwok 60 "$NODES Ready nodes" nodes_ready
  log "controller-manager, scheduler, kwok and $NODES nodes ready"
  wait_for kube-apiserver 180 "${#CRDS[@]} CRDs Established" crds_established
  wait_for kube-controller-manager 60 "ServiceAccount default/default" k -n default get serviceaccount default
  wait_for standin-controllers 30 "its first poll" standin_ready
  wait_for kube-controller-manager 60 "the self-check ReadWriteMany PVC to be Bound (hostpath provisioner)" pvc_bound
  k -n default delete pvc cluster-selfcheck-rwx --wait=false >/dev/null
  if real_node; then node_sh up; else log "real node skipped (PULP_TESTBED_REAL_NODE=0)"; fi

  trap - EXIT
  local took
  took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  log "up in ${took}s. kubeconfig: $KUBECONFIG_FILE  (eval \"\$(bash testbed/cluster/cluster.sh env)\")"
}

cmd_down() {
  if [[ -f "$PORTS_FILE" ]]; then
    # shellcheck disable=SC1090
    source "$PORTS_FILE"
    # The hostpath provisioner leaves directories in /tmp; remove the ones of our volumes.
    if apiserver_ready; then
      local path
      while read -r path; do
        [[ $path =~ ^/tmp/hostpath_pv/[0-9a-f-]+$ ]] && rm -rf "$path"
      done < <(k get pv -o jsonpath='{range .items[*]}{.spec.hostPath.path}{"\n"}{end}' 2>/dev/null || true)
    fi
  fi
  stop_all
  rm -rf "$C"
  log "down; removed $C"
}

cmd_status() {
  if [[ ! -f "$PORTS_FILE" ]]; then
    echo "cluster: not created (no $PORTS_FILE)"
    return 1
  fi
  # shellcheck disable=SC1090
  source "$PORTS_FILE"
  local p port ok=0
  for p in "${PROCS[@]}"; do
    case $p in
      etcd) port="$ETCD_PORT (peer $ETCD_PEER_PORT)" ;;
      kube-apiserver) port=$APISERVER_PORT ;;
      kube-controller-manager) port=$KCM_PORT ;;
      kube-scheduler) port=$SCHEDULER_PORT ;;
      kwok) port=$KWOK_PORT ;;
      *) port=- ;;
    esac
    if alive "$p"; then
      printf '%-24s running  pid %-8s port %s\n' "$p" "$(pid_of "$p")" "$port"
    else
      printf '%-24s DEAD     pid %-8s port %s  (log: %s)\n' "$p" "$(pid_of "$p" || echo -)" "$port" "$LOGS/$p.log"
      ok=1
    fi
  done
  echo "kubeconfig: $KUBECONFIG_FILE"
  echo "apiserver:  https://127.0.0.1:$APISERVER_PORT"
  if [[ -d $C/node ]]; then node_sh status || ok=1; fi # real node
  if apiserver_ready; then
    k get nodes -L topology.kubernetes.io/zone,pulp-testbed/node-kind
  else
    echo "apiserver not answering"
    ok=1
  fi
  return $ok
}

cmd_env() {
  [[ -f "$KUBECONFIG_FILE" ]] || echo "cluster: warning: $KUBECONFIG_FILE does not exist yet; run 'up'" >&2
  echo "export KUBECONFIG=$KUBECONFIG_FILE"
  # The shipped tools (npm run stack, npm run backup) run $PULP_KUBECTL, else kubectl from PATH.
  echo "export PULP_KUBECTL=$BIN/kubectl"
}

main() {
  local cmd=${1:-}
  case $cmd in
    up | down)
      mkdir -p "$STATE"
      # One `up`/`down` at a time per state dir; a second `up` waits, then finds it running.
      exec 9>"$STATE/cluster.lock"
      flock -w 600 9 || die "timed out waiting for another cluster.sh $cmd (lock $STATE/cluster.lock)"
      "cmd_$cmd"
      ;;
    status | env) "cmd_$cmd" ;;
    *) die "usage: $0 up|down|status|env" ;;
  esac
}

main "$@"
