// Real node: the npm package as a platform team uses it. `npm pack`, then the tarball and its peers
// installed into a new project outside the repository, where examples/two-instances runs as written
// (the real CLI and engine; a provider of the program's own, from the cluster's kubeconfig in secret
// config): two instances on two releases in two namespaces, each answering `pulp status` through its own
// pulp-web; then an upgrade of one, which changes and rolls that one only.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  kubectl,
  kubectlTry,
  mustPulumi,
  pulumi,
  revisions,
  unfinishedRollouts,
} from "../../../testbed/harness";
import { REPO, STATE } from "../../../testbed/local/environment";
import { portForward, pulpCli } from "../../../testbed/real/clients";
import { installPackage } from "../../../testbed/package/install";
import { ensureCnpgOperator } from "../../../testbed/real/cnpg";
import {
  importImages,
  localImages,
  ONE_POD_EACH,
  requireLocalImage,
  SMALL_PODS,
} from "../../../testbed/real/stack";

jest.setTimeout(30 * 60 * 1000);

const STACK = "package";
const FROM = "3.121.3";
const TO = "3.123.1";
/** The instances of the example's stack file, and the release each starts on. */
const STARTS = { "team-a": TO, "team-b": FROM } as const;
type Team = keyof typeof STARTS;
const namespaceOf = (team: Team) => `pulp-${team}`;

let work: string;
let project: string;

/** An instance's keys for the test bed: the bed's images and small pods, its own CloudNativePG cluster. */
function instance(team: Team, release: string): Record<string, unknown> {
  return {
    contentOrigin: `http://${team}-web.${namespaceOf(team)}.svc.cluster.local:8080`,
    image: requireLocalImage(`localhost/pulp-minimal:${release}`),
    web: { enabled: true, replicas: 1, image: requireLocalImage(`localhost/pulp-web:${release}`) },
    ...ONE_POD_EACH,
    migration: { resources: SMALL_PODS },
    database: {
      cloudnativepg: {
        instances: 1,
        storageSize: "1Gi",
        imageName: localImages().postgresql,
        resources: SMALL_PODS,
      },
    },
    storage: { pvc: { size: "1Gi", accessMode: "ReadWriteMany" } },
  };
}

/** The generated admin password of an instance (its Secret), for pulp-cli. */
function adminPassword(team: Team): string {
  const data = kubectl([
    "get",
    "secret",
    "-n",
    namespaceOf(team),
    `${team}-admin-password`,
    "-o",
    "jsonpath={.data.password}",
  ]);
  return Buffer.from(data, "base64").toString("utf8");
}

/** The pulpcore version an instance reports through its own pulp-web. */
async function coreVersionOf(team: Team, port: number): Promise<string> {
  const forward = await portForward(namespaceOf(team), `${team}-web`, port, 8080);
  try {
    const status = pulpCli({ baseUrl: `http://127.0.0.1:${port}`, password: adminPassword(team) }, [
      "status",
    ]);
    return status.versions.find((v: { component: string }) => v.component === "core").version;
  } finally {
    forward.stop();
  }
}

beforeAll(
  () => {
    importImages();
    ensureCnpgOperator();
    for (const team of Object.keys(STARTS) as Team[]) {
      kubectlTry([
        "delete",
        "namespace",
        namespaceOf(team),
        "--ignore-not-found",
        "--wait=true",
        "--timeout=300s",
      ]);
    }

    // The package as npm would publish it, installed where nothing of the repository is in reach.
    work = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-package-e2e-"));
    project = installPackage(work, "platform").project;
    for (const file of ["index.ts", "Pulumi.yaml", "tsconfig.json"]) {
      fs.copyFileSync(path.join(REPO, "examples/two-instances", file), path.join(project, file));
    }

    // The example's stack file, with the bed's instances; the kubeconfig as a user sets it.
    pulumi(STACK, ["stack", "rm", "--force", "--yes"], undefined, project);
    const instances = Object.fromEntries(
      (Object.entries(STARTS) as [Team, string][]).map(([team, release]) => [team, instance(team, release)]),
    );
    fs.writeFileSync(
      path.join(project, `Pulumi.${STACK}.yaml`),
      JSON.stringify({ config: { "pulp-two-instances:instances": instances } }),
    );
    mustPulumi(STACK, ["stack", "init"], project);
    const kubeconfig = fs.readFileSync(path.join(STATE, "cluster", "kubeconfig"), "utf8");
    mustPulumi(STACK, ["config", "set", "--secret", "kubeconfig", kubeconfig], project);
  },
  10 * 60 * 1000,
);

afterAll(() => {
  if (!process.env.PULP_KEEP_STACK && project) {
    pulumi(STACK, ["destroy", "--yes", "--skip-preview"], undefined, project);
    pulumi(STACK, ["stack", "rm", "--force", "--yes"], undefined, project);
    for (const team of Object.keys(STARTS) as Team[])
      kubectlTry(["delete", "namespace", namespaceOf(team), "--wait=false"]);
  }
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test("one `up` of the installed example brings up both instances, each on its release behind its own pulp-web", async () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"], project);
  expect(await coreVersionOf("team-a", 24891)).toBe(TO);
  expect(await coreVersionOf("team-b", 24892)).toBe(FROM);
});

test(`an upgrade of team-b (${FROM} -> ${TO}) changes and rolls team-b only`, async () => {
  const teamA = revisions(namespaceOf("team-a"));
  const teamB = revisions(namespaceOf("team-b"));
  mustPulumi(
    STACK,
    ["config", "set", "--path", "instances.team-b.image", requireLocalImage(`localhost/pulp-minimal:${TO}`)],
    project,
  );
  mustPulumi(
    STACK,
    ["config", "set", "--path", "instances.team-b.web.image", requireLocalImage(`localhost/pulp-web:${TO}`)],
    project,
  );

  // The preview changes nothing of team-a's (every step that is not `same` is under team-b's component).
  const preview = JSON.parse(mustPulumi(STACK, ["preview", "--json"], project).stdout) as {
    steps: { op: string; urn: string }[];
  };
  const changed = preview.steps.filter((s) => s.op !== "same").map((s) => s.urn);
  expect(changed.length).toBeGreaterThan(0);
  // A component's children are named after it: team-b's all start with "team-b".
  expect(changed.filter((urn) => !urn.split("::").pop()!.startsWith("team-b"))).toEqual([]);

  mustPulumi(STACK, ["up", "--yes", "--skip-preview"], project);
  expect(revisions(namespaceOf("team-a"))).toEqual(teamA);
  const after = revisions(namespaceOf("team-b"));
  for (const d of ["team-b-api", "team-b-content", "team-b-worker", "team-b-web"])
    expect(after[d]).not.toBe(teamB[d]);
  expect(unfinishedRollouts(namespaceOf("team-b"))).toEqual([]);
  expect(await coreVersionOf("team-b", 24892)).toBe(TO);
  expect(await coreVersionOf("team-a", 24891)).toBe(TO);
  // Nothing is left to do for either.
  mustPulumi(STACK, ["preview", "--expect-no-changes"], project);
});
