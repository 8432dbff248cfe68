# shellcheck shell=bash
# What the cluster checks (smoke, node-smoke, cnpg, cdi) print: one line per check with its time, and on
# a failure what was seen, then exit 1. Sourced.

since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; } # start ($EPOCHREALTIME)
pass() { printf 'ok    %-70s %s\n' "$1" "$(since "$2")"; }                          # check, start
fail() { # check, what was seen
  printf 'FAIL  %s\n' "$1"
  printf '%s\n' "$2" | tail -n 60 | sed 's/^/      /'
  exit 1
}

# check DESCRIPTION TIMEOUT SHOW -- COMMAND...: polls COMMAND until it succeeds; on timeout fails with
# what the shell snippet SHOW prints.
check() {
  local desc=$1 timeout=$2 show=$3 t0=$EPOCHREALTIME
  shift 4
  local end=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || fail "$desc (timed out after ${timeout}s)" "$(eval "$show" 2>&1)"
    sleep 0.3
  done
  pass "$desc" "$t0"
}

# restricted_namespace NAME: creates the namespace with Pod Security `restricted` enforced (the level the
# program's namespace enforces), through the script's own `k` (kubectl).
restricted_namespace() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: $1
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
YAML
}

# on_real_node_cluster: the setting of the checks on the embedded cluster's real node (cnpg, cdi), from
# REPO. KUBECONFIG and CONTAINERD_ADDRESS default to the embedded cluster's, KUBECTL to the toolchain's
# (BIN, empty when the toolchain is not built); fails naming the fix when the cluster, its containerd or
# its API server is not there. `k` is kubectl.
on_real_node_cluster() {
  : "${KUBECONFIG:=$(realpath -m "${PULP_STATE_DIR:-$REPO/.state}")/cluster/kubeconfig}"
  export KUBECONFIG
  BIN=$(bash "$REPO/testbed/toolchain.sh" --print 2>/dev/null || true)
  if [[ -z ${KUBECTL:-} ]]; then
    if [[ -n $BIN && -x $BIN/kubectl ]]; then KUBECTL=$BIN/kubectl; else KUBECTL=kubectl; fi
  fi
  export KUBECTL
  k() { "$KUBECTL" "$@"; }
  [[ -f $KUBECONFIG ]] || fail "cluster reachable" "no kubeconfig at $KUBECONFIG: start the cluster with its real node first"
  : "${CONTAINERD_ADDRESS:=$(dirname "$KUBECONFIG")/node/run/containerd.sock}"
  export CONTAINERD_ADDRESS
  [[ -S $CONTAINERD_ADDRESS ]] || fail "containerd socket" "no socket at $CONTAINERD_ADDRESS: start the cluster with its real node, or set CONTAINERD_ADDRESS"
  k get --raw /readyz >/dev/null 2>&1 || fail "cluster reachable" "$(k get --raw /readyz 2>&1)"
}
