#!/usr/bin/env bash
# Peak memory (RSS, /usr/bin/time -v) of the backup pod's upload (components/backup/upload.py) putting a
# synthetic backup of GIB GiB of random bytes into moto's S3 server on 127.0.0.1, with multipart parts of
# PART_MIB MiB: the result line's artifactBytes is set to the backup size that gives that part size, so a
# few GiB stand for a multi-TiB backup. moto and boto3 are testbed/s3's locked venv (the boto3 and
# s3transfer versions of the Pulp images). No cluster. LIMIT_MIB, when set, is the container memory limit
# upload.py reads from its cgroup (it sizes its buffering by it), given here as a file: nothing enforces it.
#
#   [LIMIT_MIB=1024] testbed/bench/upload-memory.sh [GIB [PART_MIB [UPLOAD_PY]]]
#                                                    defaults: 2 100 components/backup/upload.py
#
# moto builds the whole object in memory on completion: above ~2 GiB its answer can outlast boto3's 60 s
# read timeout, and the upload then fails at CompleteMultipartUpload after every part went up (the peak
# is measured by then).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GIB=${1:-2}
PART_MIB=${2:-100}
UPLOAD_PY=${3:-$REPO/components/backup/upload.py}
BIN=$("$REPO/testbed/s3/install.sh" | tail -n 1)
work=$(mktemp -d)
moto=""
trap '[[ -z $moto ]] || kill "$moto"; rm -rf "$work"' EXIT

port=$("$BIN/python3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN/moto_server" -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto=$!
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench S3_ENDPOINT_URL=http://127.0.0.1:$port S3_REGION=us-east-1
for _ in $(seq 50); do curl -sf "$S3_ENDPOINT_URL" >/dev/null && break; sleep 0.2; done
"$BIN/python3" -c 'import boto3, os; boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT_URL"]).create_bucket(Bucket="bench")'

id=20261125T150000Z
backup=$work/backups/$id
mkdir -p "$backup/keys"
head -c 50 /dev/urandom | base64 >"$backup/keys/secret_key"
head -c 32 /dev/urandom | base64 >"$backup/keys/database_fields.symmetric.key"
echo bench >"$backup/keys/admin_password"
echo "{\"id\": \"$id\"}" >"$backup/manifest.json"
echo '{}' >"$backup/config.json"
: >"$backup/artifacts.list"
db=$((GIB * 1024 * 1024 * 1024))
head -c "$db" /dev/urandom >"$backup/database.dump"
# upload.py's part size is (size * 1.05) / 9,900: the size that gives PART_MIB.
size=$((PART_MIB * 1024 * 1024 * 9900 * 100 / 105))
echo "{\"id\": \"$id\", \"databaseBytes\": $db, \"artifactBytes\": $((size - db))}" >"$work/result.json"
# The kubelet's termination log and the cgroup's memory limit (v2; no v1 file), here files of the bench's.
echo "$((${LIMIT_MIB:-0} * 1024 * 1024))" >"$work/memory.max"
[[ -n ${LIMIT_MIB:-} ]] || echo max >"$work/memory.max"
sed -e "s#/dev/termination-log#$work/termination-log#" -e "s#/sys/fs/cgroup/memory.max#$work/memory.max#" \
  -e "s#/sys/fs/cgroup/memory/memory.limit_in_bytes#$work/none#" "$UPLOAD_PY" >"$work/upload.py"

echo "upload.py: $UPLOAD_PY; $GIB GiB in parts of $PART_MIB MiB (as for a backup of $((size / 1024 ** 3)) GiB), limit ${LIMIT_MIB:-none} MiB"
BACKUP_ROOT=$work/backups RESULT_FILE=$work/result.json KEEP=2 S3_BUCKET=bench S3_PREFIX=bench/ \
  /usr/bin/time -v -o "$work/time" "$BIN/python3" "$work/upload.py" >"$work/out" 2>&1 && status=0 || status=$?
grep -v '^{' "$work/out"
grep -E 'Maximum resident set size|Elapsed \(wall clock\)' "$work/time"
echo "exit status: $status"
