// Unit: the table `npm run backup -- list` prints from the manifests of the volume and of the bucket.
import { backupTable, ListedManifest } from "../../../../tools/backup/volume";

const manifest = (id: string, files = 2): ListedManifest => ({
  id,
  versions: { pulpcore: "3.123.1" },
  database: { bytes: 678976 },
  artifacts: { files, bytes: files * 1024 },
});

test("a volume alone: one line a backup, oldest first, no where column", () => {
  expect(backupTable([manifest("20261125T020000Z"), manifest("20261124T020000Z", 1)])).toBe(
    [
      "id\tpulpcore\tdatabase\tartifacts\tartifact bytes",
      "20261124T020000Z\t3.123.1\t678976 B\t1 files\t1024 B",
      "20261125T020000Z\t3.123.1\t678976 B\t2 files\t2048 B",
      "",
    ].join("\n"),
  );
});

test("with a bucket: each backup once, saying where it is, those only the bucket keeps included", () => {
  const table = backupTable(
    [manifest("20261125T020000Z"), manifest("20261125T030000Z")],
    [manifest("20261124T020000Z"), { ...manifest("20261125T020000Z"), archive: { key: "k", bytes: 9 } }],
  );
  expect(table.split("\n").map((line) => [line.split("\t")[0], line.split("\t")[5]])).toEqual([
    ["id", "where"],
    ["20261124T020000Z", "s3"],
    ["20261125T020000Z", "volume, s3"],
    ["20261125T030000Z", "volume"],
    ["", undefined],
  ]);
});
