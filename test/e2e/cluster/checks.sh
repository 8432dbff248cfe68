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
