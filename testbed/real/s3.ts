// Object storage for the real-Pulp tests: moto's S3 API server (testbed/s3) on the real node's bridge
// address, where pods reach the host, so that a backup Job writes to it and a CDI importer reads a
// presigned URL of it. Started and stopped by the test that needs it.
import { execFileSync, spawn } from "child_process";
import * as path from "path";
import { NODE_ADDRESS as HOST, REPO } from "../local/environment";
import { freePort, listening } from "./hostServer";
const CREDENTIALS = { AWS_ACCESS_KEY_ID: "testbed", AWS_SECRET_ACCESS_KEY: "testbed-secret-key" };

export interface ObjectStorage {
  endpointUrl: string;
  accessKeyId: string;
  secretAccessKey: string;
  createBucket(bucket: string): void;
  list(bucket: string, prefix: string): { key: string; bytes: number }[];
  presign(bucket: string, key: string, seconds: number): string;
  download(bucket: string, key: string, file: string): void;
  upload(bucket: string, key: string, file: string): void;
  stop(): void;
}

/** Starts an S3 API server on the bridge address (the real node must be up). */
export async function startObjectStorage(): Promise<ObjectStorage> {
  const bin = execFileSync("bash", [path.join(REPO, "testbed/s3/install.sh")], { encoding: "utf8" }).trim();
  const port = await freePort();
  const child = spawn(path.join(bin, "moto_server"), ["-H", HOST, "-p", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (c) => (output = (output + c).slice(-4000)));
  child.stderr!.on("data", (c) => (output = (output + c).slice(-4000)));
  await listening("moto_server", port, child, () => output);
  const endpointUrl = `http://${HOST}:${port}`;
  const bucketPy = (...args: string[]) =>
    execFileSync(path.join(bin, "python3"), [path.join(REPO, "testbed/s3/bucket.py"), ...args], {
      encoding: "utf8",
      env: { ...process.env, ...CREDENTIALS, S3_ENDPOINT_URL: endpointUrl },
    }).trim();
  return {
    endpointUrl,
    accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID,
    secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    createBucket: (bucket) => void bucketPy("create", bucket),
    list: (bucket, prefix) => JSON.parse(bucketPy("list", bucket, prefix)),
    presign: (bucket, key, seconds) => bucketPy("presign", bucket, key, String(seconds)),
    download: (bucket, key, file) => void bucketPy("get", bucket, key, file),
    upload: (bucket, key, file) => void bucketPy("put", bucket, key, file),
    stop: () => void child.kill(),
  };
}
