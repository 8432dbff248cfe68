"""What the real-Pulp tests ask of the test bed's object storage, through boto3 as a user's tools would.

  bucket.py create BUCKET            make the bucket
  bucket.py list BUCKET PREFIX       the objects under PREFIX as JSON: [{"key", "bytes"}]
  bucket.py presign BUCKET KEY SECS  a GET URL that works without credentials for SECS seconds
  bucket.py get BUCKET KEY FILE      the object into FILE
  bucket.py put BUCKET KEY FILE      FILE as the object

Env: S3_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
"""

import json
import os
import sys

import boto3


def main(command: str, bucket: str, *rest: str) -> None:
    s3 = boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT_URL"], region_name="us-east-1")
    if command == "create":
        s3.create_bucket(Bucket=bucket)
    elif command == "list":
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=rest[0])
        objects = [{"key": o["Key"], "bytes": o["Size"]} for p in pages for o in p.get("Contents", [])]
        print(json.dumps(objects))
    elif command == "presign":
        key, seconds = rest
        print(s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=int(seconds)))
    elif command == "get":
        key, file = rest
        s3.download_file(bucket, key, file)
    elif command == "put":
        key, file = rest
        s3.upload_file(file, bucket, key)
    else:
        sys.exit(f"bucket.py: unknown command {command}")


if __name__ == "__main__":
    main(*sys.argv[1:])
