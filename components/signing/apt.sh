#!/bin/sh
# deb:AptReleaseSigningService: Release.gpg (detached) and InRelease (inline) for an APT Release file, in the
# directory pulp_deb names in $PULP_TEMP_WORKING_DIR. Signs with the one key in $GNUPGHOME (see detached.sh).
set -eu
release=$(readlink -f "$1")
dir=${PULP_TEMP_WORKING_DIR:-$(dirname "$release")}
gpg --batch --yes --quiet --armor --digest-algo SHA256 --detach-sign --output "$dir/Release.gpg" "$release"
gpg --batch --yes --quiet --armor --digest-algo SHA256 --clearsign --output "$dir/InRelease" "$release"
printf '{"signatures": {"inline": "%s", "detached": "%s"}}\n' "$dir/InRelease" "$dir/Release.gpg"
