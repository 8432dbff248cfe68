#!/bin/sh
# core:AsciiArmoredDetachedSigningService: an ASCII-armored detached signature beside the file (pulp_rpm's
# repomd.xml.asc, pulp_ansible's collection signatures). Signs with the one key in $GNUPGHOME, the key the
# pod was started with, rather than $PULP_SIGNING_KEY_FINGERPRINT: while a rotated key rolls out, a worker
# that has it can still sign before the service records it.
set -eu
file=$1
gpg --batch --yes --quiet --armor --detach-sign --output "$file.asc" "$file"
printf '{"file": "%s", "signature": "%s"}\n' "$file" "$file.asc"
