// Google Cloud Storage for the real-Pulp tests: fake-gcs-server (testbed/gcs) on the real node's bridge
// address, where pods reach the host and the host's clients follow the content app's redirects, and an
// OAuth token endpoint beside it: the service account key the test makes names it as its token_uri, so
// google-auth in the pods trades the key for a token here, never at Google. The emulator checks neither
// tokens nor signatures; the token endpoint counts what it handed out. Started and stopped by the test.
import { ChildProcess, execFileSync, spawn } from "child_process";
import { createHash, createPublicKey, generateKeyPairSync, verify } from "crypto";
import * as path from "path";
import { NODE_ADDRESS as HOST, REPO } from "../local/environment";
import { freePort, listening } from "./hostServer";

export const SERVICE_ACCOUNT = "pulp-test@pulp-testbed.iam.gserviceaccount.com";

/** Answers every POST with a bearer token, and prints one line per token to stdout. */
const TOKEN_SERVER = `
const http = require("http");
const [host, port] = process.argv.slice(1);
http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const grant = new URLSearchParams(body).get("grant_type") || "";
    console.log("TOKEN " + req.method + " " + grant);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ access_token: "testbed-token", expires_in: 3600, token_type: "Bearer" }));
  });
}).listen(Number(port), host);
`;

export interface GcsEmulator {
  /** The JSON API's endpoint: storage.gcs.endpointUrl. */
  endpointUrl: string;
  /** A service account key whose token_uri is the token endpoint here: pulp:gcsCredentials. */
  key: string;
  createBucket(bucket: string): Promise<void>;
  list(bucket: string, prefix: string): Promise<{ name: string; bytes: number }[]>;
  /** How many tokens the key was traded for. */
  tokens(): number;
  stop(): void;
}

export async function startGcs(): Promise<GcsEmulator> {
  const bin = execFileSync("bash", [path.join(REPO, "testbed/gcs/install.sh")], { encoding: "utf8" }).trim();
  const [port, tokenPort] = [await freePort(), await freePort()];
  let output = "";
  const keep = (child: ChildProcess) => {
    child.stdout!.on("data", (c) => (output = (output + c).slice(-20_000)));
    child.stderr!.on("data", (c) => (output = (output + c).slice(-20_000)));
  };
  const server = spawn(
    bin,
    [
      ...["-scheme", "http", "-host", HOST, "-port", String(port), "-backend", "memory"],
      // Object URLs and the redirects' host: the address pods and the host's clients both reach.
      ...["-public-host", `${HOST}:${port}`, "-external-url", `http://${HOST}:${port}`, "-log-level", "warn"],
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  keep(server);
  const tokens = spawn(process.execPath, ["-e", TOKEN_SERVER, HOST, String(tokenPort)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  keep(tokens);
  let handedOut = 0;
  tokens.stdout!.on("data", (c) => (handedOut += String(c).split("TOKEN POST").length - 1));
  await listening("fake-gcs-server", port, server, () => output);
  await listening("token endpoint", tokenPort, tokens, () => output);
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const key = JSON.stringify({
    type: "service_account",
    project_id: "pulp-testbed",
    private_key_id: "testbed",
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    client_email: SERVICE_ACCOUNT,
    client_id: "1",
    token_uri: `http://${HOST}:${tokenPort}/token`,
  });
  const endpointUrl = `http://${HOST}:${port}`;
  const api = `${endpointUrl}/storage/v1`;
  return {
    endpointUrl,
    key,
    createBucket: async (bucket) => {
      const r = await fetch(`${api}/b?project=pulp-testbed`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: bucket }),
      });
      if (!r.ok) throw new Error(`fake-gcs-server: creating bucket ${bucket}: ${r.status} ${await r.text()}`);
    },
    list: async (bucket, prefix) => {
      const r = await fetch(`${api}/b/${bucket}/o?prefix=${encodeURIComponent(prefix)}`);
      if (!r.ok) throw new Error(`fake-gcs-server: listing ${bucket}: ${r.status} ${await r.text()}`);
      const items = ((await r.json()) as { items?: { name: string; size: string }[] }).items ?? [];
      return items.map((o) => ({ name: o.name, bytes: Number(o.size) }));
    },
    tokens: () => handedOut,
    stop: () => {
      server.kill();
      tokens.kill();
    },
  };
}

/** RFC 3986 encoding, as V4 signing's canonical query string takes it. */
const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Whether a V4 signed URL (GOOG4-RSA-SHA256, host the only signed header) was signed with `key`'s private
 * key: the canonical request and string to sign rebuilt as Google's V4 signing process describes them, the
 * signature checked with the key's public half. What Google itself would check, which the emulator does not.
 */
export function signedWith(url: URL, key: string): boolean {
  const params = [...url.searchParams.entries()].filter(([k]) => k !== "X-Goog-Signature");
  const query = params
    .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
    .sort()
    .join("&");
  const canonical = ["GET", url.pathname, query, `host:${url.host}`, "", "host", "UNSIGNED-PAYLOAD"].join(
    "\n",
  );
  const scope = url.searchParams.get("X-Goog-Credential")!.split("/").slice(1).join("/");
  const toSign = [
    "GOOG4-RSA-SHA256",
    url.searchParams.get("X-Goog-Date"),
    scope,
    createHash("sha256").update(canonical).digest("hex"),
  ].join("\n");
  const publicKey = createPublicKey(JSON.parse(key).private_key);
  return verify(
    "sha256",
    Buffer.from(toSign),
    publicKey,
    Buffer.from(url.searchParams.get("X-Goog-Signature")!, "hex"),
  );
}
