#!/bin/sh
# Imports pulp:signingKey into a keyring of the pod's own (an emptyDir in memory): the signing scripts sign
# with it. Refuses a file that holds no secret key or more than one, which the scripts could not choose from.
set -eu
mkdir -p "$GNUPGHOME"
chmod 700 "$GNUPGHOME"
gpg --batch --quiet --import "$1"
keys=$(gpg --batch --with-colons --list-secret-keys | grep -c '^sec:' || true)
if [ "$keys" != 1 ]; then
  echo "pulp:signingKey must hold exactly one secret key; it holds $keys. Export one:" >&2
  echo "  gpg --armor --export-secret-keys \"\$SIGNING_KEY_ID\" | pulumi config set --secret pulp:signingKey" >&2
  exit 1
fi
if ! echo probe | gpg --batch --pinentry-mode error --sign >/dev/null 2>&1; then
  echo "pulp:signingKey has a passphrase, which no pod can type. Remove it (an empty new passphrase), then set it again:" >&2
  echo "  gpg --pinentry-mode loopback --passwd \"\$SIGNING_KEY_ID\"" >&2
  echo "  gpg --armor --export-secret-keys \"\$SIGNING_KEY_ID\" | pulumi config set --secret pulp:signingKey" >&2
  exit 1
fi
gpgconf --kill gpg-agent 2>/dev/null || true
