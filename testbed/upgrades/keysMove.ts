// npm run upgrades:keys-move — a one-off proof on the kwok bed with the real engine (not in CI: it installs
// with commit 568031a, the last version that kept generated keys in dynamic GeneratedSecrets, and needs
// that commit in the clone's history). An install that version made keeps every key when this version
// moves them into Stash resources: the first `up` creates the Stashes from the GeneratedSecrets and
// unprotects those, the second drops them from the state (nothing to delete, and the preview's data-risk
// summary names no risk), and a third preview is a no-op. The key Secrets hold the same values throughout
// (compared as digests; no value is printed).
import { execFileSync, spawnSync } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { dropStack, freshStack, getJson, mustPulumi, pulumi } from "../harness";
import { REPO, STATE } from "../local/environment";
import { runMain } from "../../tools/cli";
import { dataRisks } from "../../tools/plan/dataRisk";
import { PreviewJson } from "../../tools/plan/previewJson";

const OLD = "568031a";
const STACK = "keys-move";
const NS = "pulp-keys-move";
const KEY_SECRETS = [
  "pulp-secret-key",
  "pulp-db-fields-encryption",
  "pulp-admin-password",
  "pulp-container-auth",
];
const GENERATED_SECRET = "pulumi-nodejs:dynamic/pulp:GeneratedSecret";
const STASH = "pulumi:index:Stash";

/** A digest of each key Secret's data, so values are compared and never shown. */
function keyDigests(): Record<string, string> {
  return Object.fromEntries(
    KEY_SECRETS.map((name) => [
      name,
      createHash("sha256")
        .update(JSON.stringify(getJson(["secret", name, "-n", NS]).data))
        .digest("hex")
        .slice(0, 16),
    ]),
  );
}

/** The stack's resources of `type`, with their protect flag. */
function inState(type: string): { name: string; protect: boolean }[] {
  const state = JSON.parse(pulumi(STACK, ["stack", "export"]).stdout);
  return (state.deployment.resources as { type: string; urn: string; protect?: boolean }[])
    .filter((r) => r.type === type)
    .map((r) => ({ name: r.urn.split("::").pop()!, protect: r.protect === true }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function preview(): PreviewJson {
  return JSON.parse(mustPulumi(STACK, ["preview", "--json"]).stdout) as PreviewJson;
}

const opsOf = (p: PreviewJson, type: string) =>
  p.steps.filter((s) => s.urn.includes(`$${type}::`) || s.urn.includes(`::${type}::`)).map((s) => s.op);

let failures = 0;

function check(what: string, ok: boolean, detail: unknown): void {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${ok ? "" : `: ${JSON.stringify(detail)}`}`);
  if (!ok) failures++;
}

runMain(async () => {
  execFileSync("git", ["-C", REPO, "cat-file", "-e", `${OLD}^{commit}`]); // fails first without the history
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-keys-move-"));
  execFileSync("git", ["-C", REPO, "worktree", "add", "--detach", tree, OLD], { stdio: "inherit" });
  try {
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(tree, "node_modules"));
    freshStack(STACK, { namespace: NS, tokenAuth: true }); // the token key pair too
    fs.copyFileSync(path.join(REPO, `Pulumi.${STACK}.yaml`), path.join(tree, `Pulumi.${STACK}.yaml`));
    const old = spawnSync(
      path.join(REPO, "node_modules/.bin/ts-node"),
      [
        "-T",
        "testbed/local/pulumi.ts",
        "up",
        "--yes",
        "--skip-preview",
        "--stack",
        STACK,
        "--non-interactive",
      ],
      { cwd: tree, env: { ...process.env, PULP_STATE_DIR: STATE }, stdio: "inherit" },
    );
    if (old.status !== 0) throw new Error(`the install by ${OLD} failed (exit ${old.status})`);
    const keys = keyDigests();
    const generated = inState(GENERATED_SECRET);
    check(
      `${OLD} keeps its keys in protected GeneratedSecrets`,
      generated.length === 4 && generated.every((g) => g.protect),
      generated,
    );

    const first = preview();
    check(
      "first update: a Stash created per key",
      opsOf(first, STASH).join() === "create,create,create,create",
      opsOf(first, STASH),
    );
    check("first update: no data at risk", dataRisks(first).risks.length === 0, dataRisks(first).risks);
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    check(
      "first update: the key Secrets unchanged",
      JSON.stringify(keyDigests()) === JSON.stringify(keys),
      keyDigests(),
    );
    check(
      "first update: GeneratedSecrets unprotected",
      inState(GENERATED_SECRET).every((g) => !g.protect),
      inState(GENERATED_SECRET),
    );
    const annotations = getJson(["secret", "pulp-secret-key", "-n", NS]).metadata.annotations ?? {};
    check(
      "first update: the key Secret says where the keys are",
      annotations["pulp.pulpproject.org/keys-kept-in"] === "stash",
      annotations,
    );

    const second = preview();
    check(
      "second update: the GeneratedSecrets dropped",
      opsOf(second, GENERATED_SECRET).join() === "delete,delete,delete,delete",
      opsOf(second, GENERATED_SECRET),
    );
    check("second update: no data at risk", dataRisks(second).risks.length === 0, dataRisks(second).risks);
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
    check(
      "second update: the key Secrets unchanged",
      JSON.stringify(keyDigests()) === JSON.stringify(keys),
      keyDigests(),
    );
    const stashes = inState(STASH);
    check(
      "the keys are in four protected Stashes, no GeneratedSecret left",
      stashes.length === 4 && stashes.every((s) => s.protect) && inState(GENERATED_SECRET).length === 0,
      { stashes, left: inState(GENERATED_SECRET) },
    );

    const noop = pulumi(STACK, ["preview", "--expect-no-changes"]);
    check("then a preview is a no-op", noop.code === 0, noop.stdout.slice(-2000));
  } finally {
    pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(STACK, NS);
    execFileSync("git", ["-C", REPO, "worktree", "remove", "--force", tree]);
  }
  return failures === 0 ? 0 : 1;
});
