// Unit (no engine): the test bed starts each program's process the way its Pulumi.yaml tells Pulumi's
// Node.js runtime to: nodeargs (paths resolved in the program's directory), else ts-node.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { programLoader } from "../../../../testbed/harness";
import { REPO } from "../../helpers/configs";

test("the Pulp and stacks/ programs through program/typescript.js; the baseline through ts-node", () => {
  const loader = [process.execPath, "--require", path.join(REPO, "program/typescript.js")];
  expect(programLoader()).toEqual(loader);
  expect(programLoader("stacks")).toEqual(loader);
  expect(programLoader("testbed/bench/preview-baseline")).toEqual([
    path.join(REPO, "node_modules/.bin/ts-node"),
    "-T",
  ]);
});

test("a project outside the repository (the package e2e's consumer) is read where it is", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "program-loader-"));
  try {
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: platform\nruntime: nodejs\n");
    expect(programLoader(dir)).toEqual([path.join(REPO, "node_modules/.bin/ts-node"), "-T"]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
