# shellcheck shell=bash
# A Python venv outside the checkout, from a hash-locked requirements.txt (pip-compile of the
# requirements.in beside it), keyed by the lock's hash so a new lock gets a new venv. Sourced by the test
# bed's installers (testbed/clients, testbed/s3).
#
#   locked_venv DIR CACHE BIN [--lock]
#     DIR    the folder holding requirements.in and requirements.txt
#     CACHE  where venvs go (one per lock hash)
#     BIN    a program the venv must have, to tell an installed venv from a broken one
#     --lock regenerate DIR/requirements.txt from DIR/requirements.in, then exit
#   Sets VENV to the venv's directory.
locked_venv() {
  local dir=$1 cache=$2 bin=$3 mode=${4:-}
  local lock=$dir/requirements.txt
  if [[ $mode == --lock ]]; then
    local repo tools
    repo=$(cd "$dir/../.." && pwd)
    tools=$(mktemp -d)
    python3 -m venv "$tools" && "$tools/bin/pip" install -q pip-tools==7.4.1
    # Paths relative to the checkout: pip-compile writes its command line into the lock.
    (cd "$repo" && "$tools/bin/pip-compile" -q --generate-hashes --allow-unsafe --strip-extras \
      -o "${lock#"$repo"/}" "${dir#"$repo"/}/requirements.in")
    # A machine-wide pip.conf may add its own --find-links line; the lock must not depend on it.
    sed -i '/^--find-links/d' "$lock"
    rm -rf "$tools"
    exit 0
  fi
  VENV=$cache/$(sha256sum "$lock" | cut -c1-12)
  # Installers run side by side (the lanes of .ci/run start together): one makes the venv, the others wait
  # for it instead of deleting it half made.
  mkdir -p "$cache"
  local fd
  exec {fd}>"$cache/.lock"
  flock "$fd"
  if [[ ! -x $VENV/bin/$bin ]]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --require-hashes --no-deps -r "$lock" >&2
  fi
  exec {fd}>&-
}
