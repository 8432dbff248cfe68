# shellcheck shell=bash
# Processes of the embedded cluster: pid files under $PIDS, start with a log, stop (TERM, then KILL), wait.
# Sourced by testbed/cluster/cluster.sh, which sets the paths and helpers used here.

pid_of() { [[ -f "$PIDS/$1.pid" ]] && cat "$PIDS/$1.pid"; }

# Zombies count as gone: the init process here reaps orphans only every few seconds.
pid_running() { [[ $(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) =~ ^[^ZX]$ ]]; }

# The pid must still be ours: its command line names this state dir (guards against pid reuse).
alive() {
  local pid
  pid=$(pid_of "$1") || return 1
  [[ -n "$pid" ]] && pid_running "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$C/"
}

# setsid: a Ctrl-C on `up` or the end of the calling job must not take the cluster down with it.
start() {
  local name=$1; shift
  # 9>&-: the state-dir lock must not outlive this script.
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null 9>&- &
  local pid=$!
  echo "$pid" >"$PIDS/$name.pid"
  # Until it execs, the pid is a copy of this shell, whose command line does not name $C/: alive
  # right away would call a starting process dead.
  local i
  for ((i = 0; i < 100; i++)); do
    pid_running "$pid" || return 0
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$C/" && return 0
    sleep 0.05
  done
}

# Processes left behind without a pid file (crashed `up`, deleted state): anything running one of
# our binaries with this state dir on its command line.
orphans() {
  local d pid exe
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    exe=$(readlink "$d/exe" 2>/dev/null) || continue
    case ${exe##*/} in etcd | kube-apiserver | kube-controller-manager | kube-scheduler | kwok | kubectl | node) ;; *) continue ;; esac
    tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF "$C/" && echo "$pid"
  done
  return 0
}

stop_pids() { # pid... : TERM, then KILL after 10s
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  local i p left
  for ((i = 0; i < 100; i++)); do
    left=()
    for p in "$@"; do pid_running "$p" && left+=("$p"); done
    ((${#left[@]})) || return 0
    sleep 0.1
  done
  log "killing after 10s: ${left[*]}"
  kill -KILL "${left[@]}" 2>/dev/null || true
}

stop_all() {
  local i name pids=()
  # real node: before the control plane (no-op when it never ran); it undoes its global changes.
  node_sh down || log "stopping the real node failed; see $C/node/logs"
  # Reverse start order: clients before the apiserver, the apiserver before etcd.
  for ((i = ${#PROCS[@]} - 1; i >= 0; i--)); do
    name=${PROCS[i]}
    if alive "$name"; then pids=("$(pid_of "$name")"); stop_pids "${pids[@]}"; fi
    rm -f "$PIDS/$name.pid"
  done
  mapfile -t pids < <(orphans)
  if ((${#pids[@]})); then
    log "stopping orphaned processes: ${pids[*]}"
    stop_pids "${pids[@]}"
  fi
}

# Names the failed process and shows the end of its log; the EXIT trap of `up` stops the rest.
fail() { # process, message
  echo "cluster: $1: $2" >&2
  if [[ -f "$LOGS/$1.log" ]]; then
    echo "--- last 30 lines of $LOGS/$1.log ---" >&2
    tail -n 30 "$LOGS/$1.log" >&2
    echo "---" >&2
  fi
  exit 1
}

wait_for() { # process, timeout seconds, what, command...
  local name=$1 timeout=$2 what=$3; shift 3
  local end=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || fail "$name" "exited while waiting for $what"
    ((SECONDS < end)) || fail "$name" "timed out after ${timeout}s waiting for $what"
    sleep 0.2
  done
}
