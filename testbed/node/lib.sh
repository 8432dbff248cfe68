# shellcheck shell=bash disable=SC2034 # the settings below are read by the scripts that source this file
# Shared by the real-node scripts: where the node's state lives, its fixed network plan, and process
# helpers. Sourced after NODE_CLUSTER_DIR (the embedded cluster's state dir) and NODE_BIN (toolchain
# bin dir) are set.

NODE_NAME=real-0
NODE_LABEL=pulp-testbed/node-kind=real

# One real node per machine: the bridge, its addresses and the routes are global.
BRIDGE=pulptb0
BRIDGE_IP=10.77.0.1
POD_SUBNET=10.77.0.0/24 # the bridge: real pod IPs (host-local IPAM)
POD_RANGE=10.77.0.0/16  # blackholed around the bridge subnet
KWOK_POD_CIDR=10.244.0.0/16 # fake pod IPs kwok hands out: Endpoints may name them, nothing may route there
SERVICE_CIDR=10.96.0.0/16   # must match the API server's --service-cluster-ip-range
CLUSTER_DOMAIN=cluster.local
CNI_NETWORK=pulp-testbed
CGROUP_ROOT=/pulp-testbed # kubelet cgroupRoot, in every v1 hierarchy
FW_CHAIN=PULP-TESTBED     # our iptables chain (filter table), jumped to from FORWARD and OUTPUT
OWNER_FILE=/run/pulp-testbed-node.owner # the cluster dir of the one real node on this machine

# Sysctls the kubelet (protectKernelDefaults: false), the bridge plugin and we change: recorded before
# the node starts and restored on teardown.
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv4.conf.all.route_localnet
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables)

N=$NODE_CLUSTER_DIR/node
NPKI=$N/pki
NLOGS=$N/logs
NPIDS=$N/pids
NRUN=$N/run # sockets
CONTAINERD_SOCK=$NRUN/containerd.sock
KUBELET_ROOT=$N/kubelet
NODE_PORTS_FILE=$N/ports
CLUSTER_PKI=$NODE_CLUSTER_DIR/pki
ADMIN_KUBECONFIG=$NODE_CLUSTER_DIR/kubeconfig

nlog() { printf '[node %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
ndie() { echo "real node: $*" >&2; exit 1; }
nk() { "$NODE_BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" --cache-dir "$N/kubectl-cache" "$@"; }
nctr() { ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

npid_of() { [[ -f "$NPIDS/$1.pid" ]] && cat "$NPIDS/$1.pid"; }
npid_running() { [[ $(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) =~ ^[^ZX]$ ]]; }
# Alive and still ours: the command line names this node's state dir. A process in the middle of an
# exec (a pyenv shim execs four times before python runs) briefly shows an empty command line: that
# is still ours; only another process's command line means the pid was reused.
nalive() {
  local pid cmdline
  pid=$(npid_of "$1") || return 1
  [[ -n "$pid" ]] && npid_running "$pid" || return 1
  cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ -z $cmdline || $cmdline == *"$N/"* ]]
}

# setsid: survives the calling shell; 9>&- keeps cluster.sh's lock from leaking into the daemon.
nstart() { # name, command...
  local name=$1; shift
  setsid "$@" >"$NLOGS/$name.log" 2>&1 </dev/null 9>&- &
  local pid=$!
  echo "$pid" >"$NPIDS/$name.pid"
  # Until it execs, the pid is a copy of this shell, whose command line does not name $N/: nalive
  # right away would call a starting process dead.
  local i
  for ((i = 0; i < 100; i++)); do
    npid_running "$pid" || return 0
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$N/" && return 0
    sleep 0.05
  done
}

nstop_pids() { # seconds, pid... : TERM, then KILL
  local secs=$1; shift
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  local i p left
  for ((i = 0; i < secs * 10; i++)); do
    left=()
    for p in "$@"; do npid_running "$p" && left+=("$p"); done
    ((${#left[@]})) || return 0
    sleep 0.1
  done
  nlog "killing after ${secs}s: ${left[*]}"
  kill -KILL "${left[@]}" 2>/dev/null || true
}

nstop() { # name, seconds
  if nalive "$1"; then nstop_pids "${2:-10}" "$(npid_of "$1")"; fi
  rm -f "$NPIDS/$1.pid"
}

nfail() { # process, message: names it and shows the end of its log
  echo "real node: $1: $2" >&2
  if [[ -f "$NLOGS/$1.log" ]]; then
    echo "--- last 30 lines of $NLOGS/$1.log ---" >&2
    tail -n 30 "$NLOGS/$1.log" >&2
    echo "---" >&2
  fi
  exit 1
}

# What is left of a process nalive calls dead: gone, a zombie, or alive under another command line.
nprocess_seen() { # name
  local pid
  pid=$(npid_of "$1" 2>/dev/null) || { echo "no pid file"; return; }
  [[ -r /proc/$pid/status ]] || { echo "pid $pid is gone"; return; }
  echo "pid $pid: $(awk '/^State:/ { print $2, $3 }' "/proc/$pid/status"), command line: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
}

nwait() { # process, timeout seconds, what, command...
  local name=$1 timeout=$2 what=$3; shift 3
  local end=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    nalive "$name" || nfail "$name" "exited while waiting for $what ($(nprocess_seen "$name"))"
    ((SECONDS < end)) || nfail "$name" "timed out after ${timeout}s waiting for $what"
    sleep 0.2
  done
}

# Free ports on 127.0.0.1 (health and metrics endpoints), picked as the cluster picks its own.
npick_ports() { python3 "$HERE/../cluster/free-ports.py" "$1"; } # count
