// Unit (no engine): both Pulumi programs run under Pulumi's Node.js runtime through program/typescript.js
// (sucrase, with a cache), as their Pulumi.yaml says (`typescript: false`, `nodeargs: --require ...`): the
// entry loads in a plain `node` started there with those arguments and exports the program; a second load
// comes from the cache; and every line of a component stays where it is in the source, so a stack trace
// points at the right line without source maps.
import { execFileSync } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as yaml from "js-yaml";
import * as path from "path";
import { transform } from "sucrase";
import { REPO } from "../helpers/configs";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const SUCRASE = (require("sucrase/package.json") as { version: string }).version;

for (const dir of [".", "stacks"]) {
  test(`${dir === "." ? "the Pulp program" : "the stacks/ program"} loads through the require hook its Pulumi.yaml names`, () => {
    const project = path.join(REPO, dir);
    const file = yaml.load(fs.readFileSync(path.join(project, "Pulumi.yaml"), "utf8")) as {
      runtime: { options: { typescript: boolean; nodeargs: string } };
    };
    expect(file.runtime.options).toEqual({
      typescript: false,
      nodeargs: `--require ${dir === "." ? "./" : "../"}program/typescript.js`,
    });
    const loaded = execFileSync(
      process.execPath,
      [
        ...file.runtime.options.nodeargs.split(" "),
        "-e",
        "console.log(typeof require(process.argv[1]))",
        path.join(project, "index.ts"),
      ],
      { cwd: project, encoding: "utf8" },
    );
    expect(loaded.trim()).toBe("function");
    // What the next run reads instead of transforming again.
    const entry = path.join(project, "index.ts");
    const source = fs.readFileSync(entry, "utf8");
    const key = createHash("sha256").update(`${SUCRASE}\0${entry}\0${source}`).digest("hex");
    expect(fs.readFileSync(path.join(REPO, "node_modules/.cache/pulp-program", `${key}.js`), "utf8")).toBe(
      transform(source, { transforms: ["typescript", "imports"], filePath: entry }).code,
    );
  });
}

test("sucrase keeps each line of the source on its line", () => {
  const file = path.join(REPO, "components/pulp.ts");
  const source = fs.readFileSync(file, "utf8");
  const { code } = transform(source, { transforms: ["typescript", "imports"], filePath: file });
  const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle));
  expect(code.split("\n")).toHaveLength(source.split("\n").length);
  for (const needle of ["class Pulp extends", "static async history(", "`${name}-history`,"]) {
    expect(lineOf(code, needle)).toBe(lineOf(source, needle));
  }
});
