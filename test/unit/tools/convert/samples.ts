// The sample pulp-operator CRs of test/fixtures/pulp-operator/, read as pulp-convert reads a file, for the
// converter's unit tests.
import * as fs from "fs";
import * as path from "path";
import { convertPulpCr } from "../../../../tools/convert/convert";
import { Conversion, ConvertOptions } from "../../../../tools/convert/operator";
import { fromDocuments, Input, readDocuments } from "../../../../tools/convert/read";

export const FIXTURES = path.resolve(__dirname, "../../../fixtures/pulp-operator");
export const SAMPLES = [
  "example-2.0.0",
  "ingress-s3",
  "route-file-storage",
  "nginx-ingress",
  "node-port",
  "load-balancer",
  "ldap",
  "azure-blob",
  "gcs",
] as const;
export type Sample = (typeof SAMPLES)[number];

export function sampleText(sample: Sample): string {
  return fs.readFileSync(path.join(FIXTURES, `${sample}.yaml`), "utf8");
}

export function load(sample: Sample): Input {
  return fromDocuments(readDocuments(sampleText(sample), sample), sample);
}

/** The sample converted as pulp-convert would, with `change` applied to its input first. */
export function convertSample(
  sample: Sample,
  change: (input: Input) => void = () => {},
  options: ConvertOptions = {},
): Conversion {
  const input = load(sample);
  change(input);
  return convertPulpCr(input.cr, input.secrets, {
    configMaps: input.configMaps,
    backups: input.backups,
    restores: input.restores,
    ...options,
  });
}

/** Every secret value the samples hold (they start with CANARY), and each as base64. */
export function canaries(): string[] {
  const found = new Set<string>();
  for (const sample of SAMPLES) {
    const text = sampleText(sample);
    for (const m of text.matchAll(/CANARY[-\w]*/g)) found.add(m[0]);
    for (const m of text.matchAll(/:\s*(\S{12,})$/gm)) {
      const decoded = Buffer.from(m[1], "base64").toString("utf8");
      if (decoded.startsWith("CANARY")) found.add(decoded);
    }
  }
  return [...found].flatMap((c) => [c, Buffer.from(c).toString("base64")]);
}
