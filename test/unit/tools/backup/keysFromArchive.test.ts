// Unit: `npm run backup -- keys <id> --archive <file>` reads a restore's keys from the archive `export`
// wrote, with the system's tar (no cluster needed before the first `up`).
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseArgs } from "../../../../tools/backup/args";
import { keysFromArchive } from "../../../../tools/backup/volume";

const ID = "20261124T031500Z";

function archive(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keys-archive-"));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const tar = path.join(dir, "backup.tar");
  execFileSync("tar", ["-cf", tar, "-C", dir, ID]);
  return tar;
}

test("the three keys come out of <id>/keys/ of the archive, byte for byte", () => {
  const tar = archive({
    [`${ID}/manifest.json`]: "{}",
    [`${ID}/keys/secret_key`]: "s".repeat(50),
    [`${ID}/keys/database_fields.symmetric.key`]: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
    [`${ID}/keys/admin_password`]: "-starts-with-a-dash\n",
  });
  const values = keysFromArchive(tar, ID);
  const text = Object.fromEntries(
    Object.entries(values).map(([f, b64]) => [f, Buffer.from(b64, "base64").toString()]),
  );
  expect(text).toEqual({
    secret_key: "s".repeat(50),
    "database_fields.symmetric.key": "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
    admin_password: "-starts-with-a-dash\n",
  });
});

test("another backup's archive, or a missing file, is an error naming what is missing", () => {
  const tar = archive({ [`${ID}/keys/secret_key`]: "x" });
  expect(() => keysFromArchive(tar, ID)).toThrow(`${tar} has no ${ID}/keys/database_fields.symmetric.key`);
  expect(() => keysFromArchive(tar, "20261201T000000Z")).toThrow(/is it backup 20261201T000000Z's export\?/);
  expect(() => keysFromArchive("/nonexistent.tar", ID)).toThrow("no archive at /nonexistent.tar");
  expect(parseArgs(["keys", ID, "--archive", tar])).toMatchObject({ command: "keys", id: ID, archive: tar });
});
