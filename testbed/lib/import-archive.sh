# shellcheck shell=bash
# import_archive ARCHIVE: imports an OCI archive into the real node's containerd (namespace k8s.io) unless
# an image of that name and digest is there already. Needs CTR, CONTAINERD_ADDRESS, and the caller's log
# and die. Sourced by the operator installers (testbed/cdi, testbed/cnpg).
import_archive() {
  local a=$1 name digest
  name="$(tar -xOf "$a" index.json | python3 -c 'import json,sys; m=json.load(sys.stdin)["manifests"][0]; print(m["annotations"]["io.containerd.image.name"], m["digest"])')"
  digest=${name#* }; name=${name% *}
  if "$CTR" --address "$CONTAINERD_ADDRESS" -n k8s.io images ls "name==$name" 2>/dev/null | grep -q "$digest"; then
    log "image $name already in containerd ($digest)"; return 0
  fi
  "$CTR" --address "$CONTAINERD_ADDRESS" -n k8s.io images import "$a" >/dev/null \
    || die "ctr images import $a failed"
  log "imported $name ($digest)"
}
