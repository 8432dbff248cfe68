// Unit (no engine): both Pulumi programs run transpiled only under Pulumi's Node.js runtime. Their Pulumi.yaml
// names tsconfig.pulumi.json, and the runtime's own reader (@pulumi/pulumi's tsutils, as cmd/run calls it)
// finds `noCheck` in it, which the runtime passes to ts-node as transpileOnly. ts-node then compiles each
// program's entry with that project file (its `extends` resolved).
import * as fs from "fs";
import * as yaml from "js-yaml";
import * as path from "path";
import * as tsnode from "ts-node";
import { REPO } from "../helpers/configs";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tsutils = require("@pulumi/pulumi/tsutils") as {
  loadTypeScriptCompilerOptions(p: string): Record<string, unknown>;
};

for (const dir of [".", "stacks"]) {
  test(`${dir === "." ? "the Pulp program" : "the stacks/ program"} compiles without a type check under pulumi`, () => {
    const project = path.join(REPO, dir);
    const file = yaml.load(fs.readFileSync(path.join(project, "Pulumi.yaml"), "utf8")) as {
      runtime: { options: { typescript: boolean; tsconfig: string } };
    };
    expect(file.runtime.options.typescript).toBe(true);
    // The runtime resolves the path from the program's directory (its working directory).
    const tsconfig = path.resolve(project, file.runtime.options.tsconfig);
    expect(tsutils.loadTypeScriptCompilerOptions(tsconfig)).toEqual({ noCheck: true });

    const service = tsnode.create({ project: tsconfig, transpileOnly: true });
    const entry = path.join(project, "index.ts");
    expect(service.compile(fs.readFileSync(entry, "utf8"), entry)).toContain("module.exports = async () =>");
  });
}
