# shellcheck shell=bash
# HMAC-SHA256 (RFC 2104) in hex of file $2 keyed by file $1, sourced by backup.sh (which writes it into the
# manifest) and restore.sh (which compares it). Bash and coreutils alone: the PostgreSQL image these scripts
# run in has no python3, and openssl is not among what backup.image must have. The key goes from its file
# into this shell's memory and out through printf, a builtin: never an argument or in the environment.
hmac_sha256() {
  local key ipad='' opad='' i b
  key=$(od -An -v -tx1 "$1" | tr -d ' \n')
  ((${#key} <= 128)) || key=$(sha256sum <"$1" | cut -d' ' -f1) # longer than a block (64 bytes): its hash
  while ((${#key} < 128)); do key+=00; done
  for ((i = 0; i < 128; i += 2)); do
    b=$((16#${key:i:2}))
    printf -v ipad '%s\\x%02x' "$ipad" $((b ^ 0x36))
    printf -v opad '%s\\x%02x' "$opad" $((b ^ 0x5c))
  done
  # shellcheck disable=SC2059 # the pads are the format: printf turns their \xHH into bytes
  { printf "$opad"; printf "$({ printf "$ipad"; cat "$2"; } | sha256sum | cut -c1-64 | sed 's/../\\x&/g')"; } \
    | sha256sum | cut -d' ' -f1
}
