// Unit (plain calls): the warning for a Pulp image pinned by tag only (runtime review B14), and its fix run
// as printed by a shell, with a stand-in skopeo that answers as the real one does.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { tagOnlyWarning } from "../../../../components/upgrade/pinning";
import { imageProblem } from "../../../../components/config/formats";

const DIGEST = `sha256:${"ab".repeat(32)}`;

test("a tag without a digest is warned about, with the command that pins it; a digest or a local image is not", () => {
  expect(tagOnlyWarning("quay.io/pulp/pulp-minimal:3.123.1")).toBe(
    "pulp:image quay.io/pulp/pulp-minimal:3.123.1 is pinned by tag only: a re-push of that tag (the Pulp images " +
      "rebuild version tags when their plugins change) reaches pods as they restart, without a migration. Pin it " +
      `by digest: pulumi config set pulp:image "quay.io/pulp/pulp-minimal:3.123.1@$(skopeo inspect --format ` +
      `'{{.Digest}}' docker://quay.io/pulp/pulp-minimal:3.123.1)"`,
  );
  expect(tagOnlyWarning(`quay.io/pulp/pulp-minimal:3.123.1@${DIGEST}`)).toBeUndefined();
  expect(tagOnlyWarning(`quay.io/pulp/pulp-minimal@${DIGEST}`)).toBeUndefined();
  expect(tagOnlyWarning("localhost/pulp-minimal:3.123.1")).toBeUndefined();
});

test("the printed fix, run by a shell, sets an image reference the config accepts, with the digest", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinning-"));
  // skopeo inspect --format '{{.Digest}}' prints the digest; pulumi config set is recorded.
  fs.writeFileSync(path.join(dir, "skopeo"), `#!/bin/sh\necho ${DIGEST}\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, "pulumi"), `#!/bin/sh\nprintf '%s\\n' "$@" >"${dir}/set"\n`, {
    mode: 0o755,
  });
  const fix = tagOnlyWarning("quay.io/pulp/pulp-minimal:3.123.1")!.replace(/^.*Pin it by digest: /, "");
  const run = spawnSync("bash", ["-c", fix], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } });
  expect(run.status).toBe(0);
  const [, , key, value] = fs.readFileSync(path.join(dir, "set"), "utf8").trim().split("\n");
  fs.rmSync(dir, { recursive: true, force: true });
  expect(key).toBe("pulp:image");
  expect(value).toBe(`quay.io/pulp/pulp-minimal:3.123.1@${DIGEST}`);
  expect(imageProblem(value)).toBeUndefined();
  expect(tagOnlyWarning(value)).toBeUndefined();
});
