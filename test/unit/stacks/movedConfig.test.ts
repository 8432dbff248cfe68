// Unit, no mocks: this program moved from delivery/ to stacks/, and a stack's own Pulumi.<stack>.yaml is
// untracked, so a pull leaves it in delivery/. The program then says so and how to move it, instead of
// reporting every `delivery:` key as not set.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DeliveryConfigError, leftBehindStackConfig } from "../../../stacks/config";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "moved-config-"));
const stacks = path.join(root, "stacks");
const delivery = path.join(root, "delivery");
fs.mkdirSync(stacks);
fs.mkdirSync(delivery);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test("a stack file left in delivery/ is a problem naming both paths, and its fix moves it", () => {
  fs.writeFileSync(path.join(delivery, "Pulumi.prod.yaml"), "config: {}\n");
  const problem = leftBehindStackConfig(stacks, "prod");
  expect(problem).toEqual({
    key: "Pulumi.prod.yaml",
    given: path.join(delivery, "Pulumi.prod.yaml"),
    message: expect.stringMatching(/still in delivery\/.*moved to stacks\//),
    fix: `mv ${path.join(delivery, "Pulumi.prod.yaml")} ${path.join(stacks, "Pulumi.prod.yaml")}`,
  });
  expect(new DeliveryConfigError([problem!]).message).toMatch(/Pulumi\.prod\.yaml: .*\n.*\n +fix: +mv /);
});

test("nothing to say when the file is in stacks/ already, or nowhere, or for another stack", () => {
  fs.writeFileSync(path.join(delivery, "Pulumi.dev.yaml"), "config: {}\n");
  fs.writeFileSync(path.join(stacks, "Pulumi.dev.yaml"), "config: {}\n");
  expect(leftBehindStackConfig(stacks, "dev")).toBeUndefined();
  expect(leftBehindStackConfig(stacks, "staging")).toBeUndefined();
});
