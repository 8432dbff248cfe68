// Unit (plain parseConfig calls; rendering under Pulumi mocks; the shipped scripts run with the host's real
// gpg): pulp:signing and pulp:signingKey. The key reaches only the workers and the Job that registers the
// services; a new key rolls the workers and registers again. On real Pulp: test/e2e/real/signing.test.ts.
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseArgs } from "../../../../components/config/programArgs";
import { parseConfig } from "../../../../components/config/parse";
import { Pulp } from "../../../../components/pulp";
import { FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { runWithMocks } from "../../helpers/pulumiMocks";
import { SECRET_GIVEN } from "../../../../components/config/problems";
import { SET_SIGNING_KEY } from "../../../../components/config/rules";
import { SIGNING_GNUPGHOME } from "../../../../components/signing/signing";
import { configProblems, MINIMAL } from "../../helpers/configs";
import { DEPLOYMENT, JOB, render } from "../../helpers/render";

const SCRIPTS = path.join(__dirname, "../../../../components/signing");
const SERVICES = [
  { name: "rpm-metadata", kind: "detached" },
  { name: "deb-release", kind: "apt" },
];
const KEY = (n: number) =>
  `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nkey-${n}\n-----END PGP PRIVATE KEY BLOCK-----`;

const problemsOf = configProblems;

describe("config", () => {
  test("services without the key, or the key without services, are refused with the command that sets the other", () => {
    const [noKey] = problemsOf({ signing: { services: SERVICES } });
    expect(noKey).toMatchObject({ key: "pulp:signing", fix: SET_SIGNING_KEY });
    expect(noKey.alternatives).toEqual(["pulumi config rm pulp:signing"]);
    const [noServices] = problemsOf({}, { signingKey: KEY(1) });
    expect(noServices).toMatchObject({ key: "pulp:signingKey", given: SECRET_GIVEN });
    expect(noServices.fix).toMatch(/pulp:signing\.services\[0\]\.kind' detached/);
    expect(problemsOf({ signing: { services: SERVICES } }, { signingKey: KEY(1) })).toEqual([]);
    expect(parseConfig({ ...MINIMAL, signing: {} }).signing).toBeUndefined();
  });

  test("a public key, a bare fingerprint or two keys are refused without showing the value; the fix pipes gpg's export", () => {
    const secretOf = (signingKey: string) =>
      problemsOf({ signing: { services: SERVICES } }, { signingKey }).find(
        (p) => p.key === "pulp:signingKey",
      );
    const pub =
      "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nsecret-looking-material\n-----END PGP PUBLIC KEY BLOCK-----";
    for (const [value, reason] of [
      [pub, /the private key .*not the public key/],
      ["0123456789ABCDEF0123456789ABCDEF01234567", /one ASCII-armored private key/],
      [`${KEY(1)}\n${KEY(2)}`, /one private key block, not several/],
    ] as const) {
      const problem = secretOf(value)!;
      expect(problem.message).toMatch(reason);
      expect(problem.given).toBe(SECRET_GIVEN);
      expect(problem.fix).toBe(SET_SIGNING_KEY);
      expect(JSON.stringify(problem)).not.toContain(
        value.includes("secret-looking") ? "secret-looking" : value,
      );
    }
  });

  test("a service name used twice, an unknown kind or a name with a space is refused, naming the path", () => {
    const key = { signingKey: KEY(1) };
    const twice = { services: [SERVICES[0], { ...SERVICES[1], name: "rpm-metadata" }] };
    expect(problemsOf({ signing: twice }, key)[0]).toMatchObject({ key: "pulp:signing.services" });
    expect(problemsOf({ signing: { services: [{ name: "x", kind: "container" }] } }, key)[0]).toMatchObject({
      key: "pulp:signing.services[0].kind",
      message: expect.stringMatching(/"detached", "apt"/),
    });
    expect(problemsOf({ signing: { services: [{ name: "a b", kind: "apt" }] } }, key)[0].key).toBe(
      "pulp:signing.services[0].name",
    );
    expect(problemsOf({ signing: { services: [] } }, key)[0].message).toMatch(/names no service/);
  });
});

test("a program that sets config.signing without passing secrets.signingKey is refused, not installed without signing", async () => {
  const config = parseArgs({ ...MINIMAL, signing: { services: SERVICES } }, ["signingKey"]);
  let thrown: unknown;
  await runWithMocks({ config: {} }, () => {
    try {
      new Pulp("pulp", { config, secrets: {}, deployed: FIRST_INSTALL, cluster: {} });
    } catch (e) {
      thrown = e;
    }
  });
  expect(String(thrown)).toMatch(
    /config\.signing names signing services, but secrets\.signingKey was not passed/,
  );
});

describe("rendered", () => {
  const config = { ...MINIMAL, signing: { services: SERVICES } };

  test("the workers import the key at start and sign with their own keyring; api and content never see it", async () => {
    const run = await render(config, { signingKey: KEY(1) });
    expect(run.k8s("Secret", "pulp-signing-key").inputs.stringData).toEqual({ "signing.asc": KEY(1) });
    const scripts = run.k8s("ConfigMap", "pulp-signing-scripts").inputs.data;
    expect(Object.keys(scripts).sort()).toEqual(["apt.sh", "detached.sh", "import-key.sh", "register.py"]);

    const spec = (name: string) =>
      run.ofType(DEPLOYMENT).find((d) => d.inputs.metadata.name === name)!.inputs.spec.template.spec;
    const worker = spec("pulp-worker");
    const init = worker.initContainers.find((c: { name: string }) => c.name === "signing-key");
    expect(init.command).toEqual([
      "/bin/sh",
      "/etc/pulp/signing/scripts/import-key.sh",
      "/etc/pulp/signing/key/signing.asc",
    ]);
    const container = worker.containers[0];
    expect(container.env).toContainEqual({ name: "GNUPGHOME", value: SIGNING_GNUPGHOME });
    // The container has the keyring and the scripts, not the key's Secret.
    const mounts = container.volumeMounts.map((m: { name: string }) => m.name);
    expect(mounts).toEqual(expect.arrayContaining(["signing-gnupg", "signing-scripts"]));
    expect(mounts).not.toContain("signing-key");
    const gnupg = worker.volumes.find((v: { name: string }) => v.name === "signing-gnupg");
    expect(gnupg.emptyDir.medium).toBe("Memory");

    for (const name of ["pulp-api", "pulp-content"]) {
      const volumes = spec(name).volumes.map((v: { name: string }) => v.name);
      expect({ name, volumes: volumes.filter((v: string) => v.startsWith("signing")) }).toEqual({
        name,
        volumes: [],
      });
    }
  });

  test("a Job registers the services after the migration; a new key replaces it, rolls the workers only, and migrates nothing", async () => {
    const first = await render(config, { signingKey: KEY(1) });
    const job = first.k8s("Job", "pulp-signing-services");
    const env = Object.fromEntries(
      job.inputs.spec.template.spec.containers[0].env.map((e: { name: string; value?: string }) => [
        e.name,
        e.value,
      ]),
    );
    expect(JSON.parse(env.SIGNING_SERVICES)).toEqual([
      {
        name: "rpm-metadata",
        class: "core:AsciiArmoredDetachedSigningService",
        script: "/etc/pulp/signing/scripts/detached.sh",
      },
      {
        name: "deb-release",
        class: "deb:AptReleaseSigningService",
        script: "/etc/pulp/signing/scripts/apt.sh",
      },
    ]);
    expect(job.inputs.spec.template.spec.containers[0].command[2]).toMatch(
      /pulpcore-manager shell -c .*register\.py/,
    );
    const migration = first.ofType(JOB).find((j) => j.inputs.metadata.name.startsWith("pulp-migrate-"))!;
    expect(job.dependencies).toContain(migration.urn);

    const second = await render(config, { signingKey: KEY(2) });
    const annotation = (run: typeof first, name: string) =>
      run.k8s("Deployment", name).inputs.spec.template.metadata.annotations[
        "pulp.pulpproject.org/config-hash"
      ];
    expect(annotation(second, "pulp-worker")).not.toBe(annotation(first, "pulp-worker"));
    expect(annotation(second, "pulp-api")).toBe(annotation(first, "pulp-api"));
    const trigger = (run: typeof first) => run.k8s("Job", "pulp-signing-services").replacementTrigger;
    expect(trigger(second)).toBeDefined();
    expect(trigger(second)).not.toEqual(trigger(first));
    const migrationName = (run: typeof first) =>
      run
        .ofType(JOB)
        .map((j) => j.inputs.metadata.name)
        .filter((n) => n.startsWith("pulp-migrate-"));
    expect(migrationName(second)).toEqual(migrationName(first));
    // Without signing, the migration Job is the same one: turning signing on migrates nothing either.
    expect(migrationName(await render(MINIMAL))).toEqual(migrationName(first));
  });
});

describe("the shipped scripts, with the host's gpg", () => {
  let dir: string;
  const gpg = (home: string, ...args: string[]) =>
    execFileSync("gpg", ["--batch", "--homedir", home, ...args], {
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
    });
  const newKey = (home: string, uid: string, passphrase = "") => {
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
    gpg(
      home,
      "--pinentry-mode",
      "loopback",
      "--passphrase",
      passphrase,
      "--quick-gen-key",
      uid,
      "ed25519",
      "sign",
      "never",
    );
    return gpg(
      home,
      "--armor",
      "--pinentry-mode",
      "loopback",
      "--passphrase",
      passphrase,
      "--export-secret-keys",
      uid,
    );
  };
  const run = (script: string, args: string[], env: Record<string, string>) =>
    spawnSync("/bin/sh", [path.join(SCRIPTS, script), ...args], {
      encoding: "utf8",
      env: { ...process.env, ...env },
    });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "signing-"));
  });
  afterAll(() => {
    spawnSync("gpgconf", ["--homedir", path.join(dir, "pod"), "--kill", "gpg-agent"]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("import-key, then detached.sh and apt.sh make signatures gpg --verify accepts, and print what pulpcore reads", () => {
    const key = newKey(path.join(dir, "owner"), "Pulp Signing <signing@example.com>");
    fs.writeFileSync(path.join(dir, "key.asc"), key);
    const home = path.join(dir, "pod", "home");
    const imported = run("importKey.sh", [path.join(dir, "key.asc")], { GNUPGHOME: home });
    expect({ status: imported.status, stderr: imported.stderr }).toEqual({ status: 0, stderr: "" });

    const file = path.join(dir, "repomd.xml");
    fs.writeFileSync(file, "<repomd/>\n");
    const detached = run("detached.sh", [file], { GNUPGHOME: home });
    expect(detached.status).toBe(0);
    expect(JSON.parse(detached.stdout)).toEqual({ file, signature: `${file}.asc` });
    // Verified in the owner's keyring, not the pod's: the signature is the owner's key's.
    gpg(path.join(dir, "owner"), "--verify", `${file}.asc`, file);

    const out = path.join(dir, "apt");
    fs.mkdirSync(out);
    const release = path.join(dir, "Release");
    fs.writeFileSync(release, "Origin: test\n");
    const apt = run("apt.sh", [release], { GNUPGHOME: home, PULP_TEMP_WORKING_DIR: out });
    expect(apt.status).toBe(0);
    expect(JSON.parse(apt.stdout)).toEqual({
      signatures: { inline: path.join(out, "InRelease"), detached: path.join(out, "Release.gpg") },
    });
    gpg(path.join(dir, "owner"), "--verify", path.join(out, "Release.gpg"), release);
    gpg(path.join(dir, "owner"), "--verify", path.join(out, "InRelease"));
    // A change to the file breaks its signature: the check above can fail.
    fs.appendFileSync(file, "tampered\n");
    expect(() => gpg(path.join(dir, "owner"), "--verify", `${file}.asc`, file)).toThrow();
  });

  test("import-key refuses a key with a passphrase, and a file with two keys, saying what to do", () => {
    const locked = newKey(path.join(dir, "locked"), "Locked <locked@example.com>", "hunter2");
    fs.writeFileSync(path.join(dir, "locked.asc"), locked);
    const withPassphrase = run("importKey.sh", [path.join(dir, "locked.asc")], {
      GNUPGHOME: path.join(dir, "p1", "home"),
    });
    expect(withPassphrase.status).toBe(1);
    expect(withPassphrase.stderr).toMatch(/has a passphrase.*\n.*--passwd/);

    const other = newKey(path.join(dir, "other"), "Other <other@example.com>");
    fs.writeFileSync(path.join(dir, "two.asc"), fs.readFileSync(path.join(dir, "key.asc"), "utf8") + other);
    const two = run("importKey.sh", [path.join(dir, "two.asc")], { GNUPGHOME: path.join(dir, "p2", "home") });
    expect(two.status).toBe(1);
    expect(two.stderr).toMatch(/exactly one secret key; it holds 2/);
    for (const p of ["p1", "p2", "locked", "other", "owner"]) {
      spawnSync("gpgconf", [
        "--homedir",
        path.join(dir, p, p.startsWith("p") ? "home" : ""),
        "--kill",
        "gpg-agent",
      ]);
    }
  });
});
