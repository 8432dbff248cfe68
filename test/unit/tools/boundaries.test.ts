// Unit, no mocks: the shipped tools stand alone. tools/ never imports the test bed, and the stack CLI
// finds its cluster as kubectl does, never the throwaway cluster's kubeconfig.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { resolveKube } from "../../../tools/kube";

const REPO = path.resolve(__dirname, "../../..");

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.(ts|mjs|js|sh)$/.test(e.name) ? [p] : [];
  });
}

test("no file under tools/ imports or runs anything under testbed/", () => {
  const offenders: string[] = [];
  for (const file of sources(path.join(REPO, "tools"))) {
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from|require\()\s*["']([^"']+)["']/g)) {
      if (!m[1].startsWith(".")) continue;
      const target = path.resolve(path.dirname(file), m[1]);
      if (target.startsWith(path.join(REPO, "testbed")))
        offenders.push(`${path.relative(REPO, file)} -> ${m[1]}`);
    }
    if (/testbed\//.test(text.replace(/^\s*\/\/.*$/gm, "")))
      offenders.push(`${path.relative(REPO, file)} names testbed/`);
  }
  expect(offenders).toEqual([]);
});

describe("the stack CLI's kubeconfig", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stack-kube-"));
  const file = path.join(dir, "config");
  fs.writeFileSync(file, "apiVersion: v1\nkind: Config\n");
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("with $KUBECONFIG unset, none is passed: kubectl reads ~/.kube/config", () => {
    expect(resolveKube(undefined, {})).toEqual({ kubectl: "kubectl", kubeconfig: undefined });
    expect(resolveKube(undefined, { KUBECONFIG: "" }).kubeconfig).toBeUndefined();
  });

  test("--kubeconfig wins over $KUBECONFIG; a missing file is refused with the way out", () => {
    expect(resolveKube(file, { KUBECONFIG: "/nowhere" }).kubeconfig).toBe(file);
    expect(resolveKube(undefined, { KUBECONFIG: file }).kubeconfig).toBe(file);
    expect(() => resolveKube(undefined, { KUBECONFIG: "/nowhere/config" })).toThrow(/does not exist/);
  });

  test("PULP_KUBECTL names the kubectl binary", () => {
    expect(resolveKube(undefined, { PULP_KUBECTL: "/opt/kubectl" }).kubectl).toBe("/opt/kubectl");
  });
});
