#!/usr/bin/env bash
# One real node, `real-0`, for the embedded cluster: containerd, kubelet, kube-proxy (iptables) and
# CoreDNS as host processes, pods on a bridge with no way off this machine. cluster.sh calls it after
# the control plane is up (`up`) and before it stops (`down`); it can also run on its own.
#
#   testbed/node/node.sh CLUSTER_DIR BIN_DIR up            start (cluster PKI, ports and kubeconfig from CLUSTER_DIR)
#   testbed/node/node.sh CLUSTER_DIR BIN_DIR down          stop everything, undo every global change
#   testbed/node/node.sh CLUSTER_DIR BIN_DIR status        processes and the Node's Ready condition; exit 1 unless all run
#   testbed/node/node.sh CLUSTER_DIR BIN_DIR image busybox build and import the test image, print its name
#   testbed/node/node.sh CLUSTER_DIR BIN_DIR import FILE   import an OCI archive into the node's containerd
#
# State: CLUSTER_DIR/node (removed with the cluster). Global, and undone by `down`: the bridge
# pulptb0, routes, the PULP-TESTBED and kube-proxy iptables chains, sysctls, the cgroup /pulp-testbed,
# /run/containerd/{s,fifo}, /var/lib/kubelet/device-plugins, /var/log/containers entries. One real node
# per machine: /run/pulp-testbed-node.owner names the cluster dir that has it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
(($# >= 3)) || { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
NODE_CLUSTER_DIR=$(realpath -m "$1")
NODE_BIN=$2
CMD=$3
shift 3

# shellcheck source=testbed/node/lib.sh
source "$HERE/lib.sh"
for f in pki network images containerd kubelet kube-proxy coredns apiserver-relay; do
  # shellcheck disable=SC1090
  source "$HERE/$f.sh"
done

PROCS=(hostpath-perms apiserver-relay containerd coredns kubelet kube-proxy) # start order
HOSTPATH_BASE=/tmp/hostpath_pv # the controller-manager's host-path provisioner, fixed

load_ports() {
  # shellcheck disable=SC1091
  source "$NODE_CLUSTER_DIR/ports" # APISERVER_PORT
  if [[ -f $NODE_PORTS_FILE ]]; then
    # shellcheck disable=SC1090
    source "$NODE_PORTS_FILE"
  fi
}

owner() { cat "$OWNER_FILE" 2>/dev/null || true; }

node_ready() {
  [[ $(nk get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

keep_failed_logs() {
  local kept=$NODE_CLUSTER_DIR/node-logs-failed
  rm -rf "$kept" && cp -a "$NLOGS" "$kept" 2>/dev/null || kept=$NLOGS
  echo "real node: up failed; logs are in $kept" >&2
}

cmd_up() {
  local t0=$EPOCHREALTIME b
  bash "$HERE/packages.sh" --check
  for b in kubelet kube-proxy coredns pause kubectl; do
    [[ -x $NODE_BIN/$b ]] || ndie "missing $NODE_BIN/$b; build it with 'npm run toolchain'"
  done
  for b in containerd ctr runc iptables ip openssl curl python3; do
    command -v "$b" >/dev/null || ndie "'$b' is not on PATH"
  done
  [[ -f $NODE_CLUSTER_DIR/ports && -f $CLUSTER_PKI/ca.key ]] || ndie "no embedded cluster in $NODE_CLUSTER_DIR"
  local other
  other=$(owner)
  if [[ -n $other && $other != "$NODE_CLUSTER_DIR" ]]; then
    if [[ -d $other/node ]] && pgrep -f -- "--config $other/node/containerd/config.toml" >/dev/null; then
      ndie "this machine's real node belongs to the cluster in $other. Stop that one first, or set PULP_TESTBED_REAL_NODE=0 for a kwok-only cluster."
    fi
    nlog "the real node of $other is gone but left global state behind; cleaning it up"
    bash "$0" "$other" "$NODE_BIN" down
  fi
  if [[ -d $N ]]; then
    nlog "found an old real node in $N; stopping it first"
    cmd_down
  fi
  mkdir -p "$N" "$NLOGS" "$NPIDS" "$NRUN"
  echo "$NODE_CLUSTER_DIR" >"$OWNER_FILE"
  # `down` removes $N: a failed start keeps its logs beside it for a look.
  trap 'rc=$?; if ((rc)); then keep_failed_logs; cmd_down || true; fi' EXIT

  load_ports
  read -r KUBELET_HEALTHZ_PORT PROXY_HEALTHZ_PORT PROXY_METRICS_PORT COREDNS_READY_PORT <<<"$(npick_ports 4)"
  printf '%s\n' "KUBELET_HEALTHZ_PORT=$KUBELET_HEALTHZ_PORT" "PROXY_HEALTHZ_PORT=$PROXY_HEALTHZ_PORT" \
    "PROXY_METRICS_PORT=$PROXY_METRICS_PORT" "COREDNS_READY_PORT=$COREDNS_READY_PORT" >"$NODE_PORTS_FILE"

  node_pki
  net_up
  # The interpreter itself, not a version manager's shim: one exec, and the pid is python's.
  nstart hostpath-perms "$(python3 -c 'import sys; print(sys.executable)')" "$HERE/hostpath-perms.py" \
    "$HOSTPATH_BASE" --owner "$N/"
  nwait hostpath-perms 30 "its inotify watch" grep -q watching "$NLOGS/hostpath-perms.log"
  apiserver_relay_up
  mkdir -p "$N/images"
  image_pause "$N/images/pause.tar"
  containerd_up
  image_import "$N/images/pause.tar"
  nlog "containerd ready, sandbox image $PAUSE_IMAGE imported ($(since "$t0")s)"
  coredns_up
  nlog "CoreDNS ready on $BRIDGE_IP:53 ($(since "$t0")s)"
  local tk=$EPOCHREALTIME
  kubelet_up
  nwait kubelet 60 "Node $NODE_NAME Ready" node_ready
  nlog "node $NODE_NAME Ready $(since "$tk")s after the kubelet started"
  # After the kubelet: kube-proxy waits for its Node object. The routes are in place already.
  kube_proxy_up
  trap - EXIT
  nlog "kube-proxy ready; real node up in $(since "$t0")s"
}

# Processes of ours that have no pid file any more: anything whose command line names this node dir.
node_orphans() {
  local d pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    tr '\0' ' ' 2>/dev/null <"$d/cmdline" | grep -qF "$N/" && echo "$pid"
  done
  return 0
}

cmd_down() {
  local other
  other=$(owner)
  if [[ ! -d $N && $other != "$NODE_CLUSTER_DIR" ]]; then return 0; fi # never had the real node
  # Global state (bridge, routes, chains, sysctls, cgroups) is undone only by its owner.
  local global=1
  [[ -z $other || $other == "$NODE_CLUSTER_DIR" ]] || global=0
  [[ -f $NODE_CLUSTER_DIR/ports ]] && load_ports
  local i
  # Reverse start order: kube-proxy, then the kubelet (so that it restarts nothing), then the rest.
  for ((i = ${#PROCS[@]} - 1; i >= 0; i--)); do nstop "${PROCS[i]}" 10; done
  # Containers outlive containerd (their shims are separate processes): kill them through our cgroups,
  # then their shims.
  local pids=()
  mapfile -t pids < <(cgroup_root_pids)
  ((${#pids[@]} == 0)) || { kill -KILL "${pids[@]}" 2>/dev/null || true; }
  mapfile -t pids < <(node_orphans)
  ((${#pids[@]} == 0)) || { nlog "stopping leftover processes: ${pids[*]}"; nstop_pids 5 "${pids[@]}"; }
  # Mounts under the node dir: projected and secret volumes (tmpfs), container rootfs overlays, the
  # pods' network namespaces. Deepest first; lazily, so one busy mount cannot block the rest.
  local m
  if [[ -d $N ]]; then
    while read -r m; do umount -l "$m" 2>/dev/null || nlog "could not unmount $m"; done < <(
      awk -v p="$N/" 'index($2, p) == 1 { print $2 }' /proc/self/mounts | awk '{ print length, $0 }' | sort -rn | cut -d' ' -f2-
    )
  fi
  if ((global)); then
    cgroup_root_down
    kube_proxy_cleanup
    net_down
  fi
  # Fixed paths the kubelet and containerd use whatever they are told.
  if [[ -d /var/log/containers ]]; then
    find /var/log/containers -maxdepth 1 -type l -lname "$N/*" -delete 2>/dev/null || true
    rmdir /var/log/containers 2>/dev/null || true
  fi
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
  rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null || true
  if ! pgrep -x containerd-shim >/dev/null && ! pgrep -x containerd >/dev/null; then
    rm -rf /run/containerd/s /run/containerd/fifo /run/containerd/runc
    rmdir /run/containerd 2>/dev/null || true
  fi
  # A separate `down` of the node alone leaves the cluster: take the Node out of it too.
  if [[ -f $ADMIN_KUBECONFIG ]] && [[ -x $NODE_BIN/kubectl ]]; then
    nk delete node "$NODE_NAME" --ignore-not-found --wait=false --request-timeout=5s >/dev/null 2>&1 || true
  fi
  rm -rf "$N"
  [[ $(owner) != "$NODE_CLUSTER_DIR" ]] || rm -f "$OWNER_FILE"
  nlog "real node down; global state restored"
}

cmd_status() {
  [[ -d $N ]] || { echo "real node: not started (no $N)"; return 1; }
  local p ok=0
  for p in "${PROCS[@]}"; do
    if nalive "$p"; then
      printf '%-24s running  pid %-8s (real node)\n' "$p" "$(npid_of "$p")"
    else
      printf '%-24s DEAD     pid %-8s (log: %s)\n' "$p" "$(npid_of "$p" || echo -)" "$NLOGS/$p.log"
      ok=1
    fi
  done
  if node_ready 2>/dev/null; then echo "node $NODE_NAME: Ready (bridge $BRIDGE $BRIDGE_IP, pods $POD_SUBNET)"; else
    echo "node $NODE_NAME: not Ready"
    ok=1
  fi
  return $ok
}

# Exit 0 when every process runs and the node is Ready: cluster.sh's "already running" check.
cmd_running() {
  local p
  for p in "${PROCS[@]}"; do nalive "$p" || return 1; done
  node_ready
}

cmd_image() {
  [[ ${1:-} == busybox ]] || ndie "usage: image busybox"
  nalive containerd || ndie "containerd of the real node is not running; start the cluster first"
  mkdir -p "$N/images"
  local name
  name=$(image_busybox "$N/images/busybox.tar")
  image_import "$N/images/busybox.tar"
  echo "$name"
}

cmd_import() {
  [[ -f ${1:-} ]] || ndie "usage: import FILE (an OCI archive)"
  nalive containerd || ndie "containerd of the real node is not running; start the cluster first"
  image_import "$1"
}

case $CMD in
  up | down | status | running | image | import) "cmd_$CMD" "$@" ;;
  *) ndie "unknown command '$CMD' (up|down|status|running|image|import)" ;;
esac
