// A pulp-operator PulpBackup's keys, from the Secrets it copies as YAML files (PULP_BACKUP_KEYS says which
// file and key; restoreCheck.py reads the same ones to check a restore).
import * as yaml from "js-yaml";
import { PULP_BACKUP_KEYS } from "../../components/backup/backupIds";

/**
 * The keys' values by stack config key, from the files' texts (`read` gives one, or undefined when the
 * backup has no such file). Throws naming the file and key that is missing; never a value.
 */
export function operatorKeys(id: string, read: (file: string) => string | undefined): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, { file, key }] of Object.entries(PULP_BACKUP_KEYS)) {
    const text = read(file);
    if (text === undefined) throw new Error(`PulpBackup ${id} has no ${file}: it is incomplete`);
    const doc = (yaml.load(text) ?? {}) as Record<string, unknown>;
    let value: unknown;
    if (doc.kind === "Secret") {
      const stringData = (doc.stringData ?? {}) as Record<string, string>;
      const data = (doc.data ?? {}) as Record<string, string>;
      value =
        stringData[key] ??
        (data[key] === undefined ? undefined : Buffer.from(data[key], "base64").toString("utf8"));
    } else value = doc[key];
    if (value === undefined || value === null || value === "") {
      throw new Error(`PulpBackup ${id} has no ${key} in ${file}: it is incomplete`);
    }
    values[name] = String(value);
  }
  return values;
}
