// testbed/local/pulumi.ts serves another project with --program-dir; without it, nothing changes.
import * as path from "path";
import { programDir } from "../../../../testbed/local/pulumi";
import { REPO } from "../../helpers/configs";

test("--program-dir stacks serves the pulp-delivery project and is not passed to the CLI", () => {
  expect(programDir(["up", "--program-dir", "stacks", "--yes"])).toEqual({
    dir: path.join(REPO, "stacks"),
    project: "pulp-delivery",
    rest: ["up", "--yes"],
  });
});

test("the default is the pulp program at the repository root, arguments untouched", () => {
  expect(programDir(["preview", "--json"])).toEqual({
    dir: REPO,
    project: "pulp",
    rest: ["preview", "--json"],
  });
});

test("a directory without a Pulumi project is a clear error", () => {
  expect(() => programDir(["up", "--program-dir", "components"])).toThrow(
    /--program-dir components: no Pulumi.yaml with a name in .*components/,
  );
});
