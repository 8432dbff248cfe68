// Signing keys for the tests, made and checked with the host's gpg (Debian's `gpg`, which
// testbed/clients/install.sh installs), each in a keyring of its own.
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export interface TestKey {
  /** The keyring that holds it (and only it). */
  home: string;
  fingerprint: string;
  /** `gpg --armor --export-secret-keys`: what pulp:signingKey takes. */
  secretKey: string;
}

const gpg = (home: string, args: string[], input?: string) =>
  execFileSync("gpg", ["--batch", "--homedir", home, ...args], {
    encoding: "utf8",
    input,
    stdio: ["pipe", "pipe", "pipe"],
  });

/** A new ed25519 signing key without a passphrase. */
export function newSigningKey(uid: string): TestKey {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "gpg-"));
  fs.chmodSync(home, 0o700);
  gpg(home, [
    "--pinentry-mode",
    "loopback",
    "--passphrase",
    "",
    "--quick-gen-key",
    uid,
    "ed25519",
    "sign",
    "never",
  ]);
  const fingerprint = gpg(home, ["--with-colons", "--list-secret-keys"])
    .split("\n")
    .find((l) => l.startsWith("fpr:"))!
    .split(":")[9];
  return { home, fingerprint, secretKey: gpg(home, ["--armor", "--export-secret-keys", fingerprint]) };
}

/** Whether `signature` is a good signature of `data` by the key in `key`'s keyring (gpg's own verdict). */
export function verifies(key: TestKey, data: Buffer, signature: Buffer): { ok: boolean; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verify-"));
  fs.writeFileSync(path.join(dir, "data"), data);
  fs.writeFileSync(path.join(dir, "data.asc"), signature);
  const r = spawnSync("gpg", ["--batch", "--homedir", key.home, "--verify", "data.asc", "data"], {
    cwd: dir,
    encoding: "utf8",
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim() };
}

/** Stops the keyring's agent and removes it. */
export function dropKey(key: TestKey): void {
  spawnSync("gpgconf", ["--homedir", key.home, "--kill", "gpg-agent"]);
  fs.rmSync(key.home, { recursive: true, force: true });
}
