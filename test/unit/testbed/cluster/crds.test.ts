// Unit (no cluster, no network): testbed/cluster/crds.sh, which tells the unit tests and the embedded
// cluster where the CRDs are. A clone that stands alone has them in test/fixtures/crds.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO } from "../../helpers/configs";

const SCRIPT = path.join(REPO, "testbed/cluster/crds.sh");
const FIXTURES = path.join(REPO, "test/fixtures/crds");

function crds(args: string[], env: Record<string, string> = {}, input?: string) {
  const base = { ...process.env };
  delete base.PULP_CRD_DIR; // the caller's own override would hide the default
  const r = spawnSync("bash", [SCRIPT, ...args], { encoding: "utf8", env: { ...base, ...env }, input });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test("without $PULP_CRD_DIR the CRDs are the repository's own copy", () => {
  expect(crds(["dir"])).toEqual({ code: 0, out: `${FIXTURES}\n`, err: "" });
  expect(crds(["ensure"]).out).toBe(`${FIXTURES}\n`);
});

describe("$PULP_CRD_DIR", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "crds-"));
    for (const f of fs.readdirSync(FIXTURES).filter((f) => f.endsWith(".yaml"))) {
      fs.symlinkSync(path.join(FIXTURES, f), path.join(dir, f));
    }
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("overrides the repository's copy", () => {
    expect(crds(["dir"], { PULP_CRD_DIR: dir }).out).toBe(`${fs.realpathSync(dir)}\n`);
  });

  test("lacking a file is refused, naming it and the fix", () => {
    fs.rmSync(path.join(dir, "pulumi.com_stacks.yaml"));
    const r = crds(["dir"], { PULP_CRD_DIR: dir });
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toContain(`$PULP_CRD_DIR=${dir} lacks pulumi.com_stacks.yaml.`);
    expect(r.err).toContain("Run: unset PULP_CRD_DIR");
  });
});

test("a CDI CRD is cut whole out of its Go raw string in crds_generated.go, backquotes joined", () => {
  // The shape of kubevirt/containerized-data-importer pkg/operator/resources/crds_generated.go@c07cdb6fbd18.
  const go = [
    "package resources",
    "",
    "var CdiCRDs = map[string]string{",
    '\t"cdiconfig": `apiVersion: apiextensions.k8s.io/v1',
    "kind: CustomResourceDefinition",
    "`,",
    '\t"datavolume": `apiVersion: apiextensions.k8s.io/v1',
    "kind: CustomResourceDefinition",
    "metadata:",
    "  name: datavolumes.cdi.kubevirt.io",
    '            description: the certificate\'s ` + "`" + `notAfter` + "`" + ` time',
    "status:",
    "  storedVersions: null",
    "`,",
    '\t"storageprofile": `apiVersion: apiextensions.k8s.io/v1',
    "`,",
    "}",
    "",
  ].join("\n");
  expect(crds(["cdi-crd", "datavolume"], {}, go)).toEqual({
    code: 0,
    out: [
      "apiVersion: apiextensions.k8s.io/v1",
      "kind: CustomResourceDefinition",
      "metadata:",
      "  name: datavolumes.cdi.kubevirt.io",
      "            description: the certificate's `notAfter` time",
      "status:",
      "  storedVersions: null",
      "",
    ].join("\n"),
    err: "",
  });
});
