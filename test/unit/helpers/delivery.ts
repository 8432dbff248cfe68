// Delivery configs and a render of the delivery program under mocks, shared by the operator tests.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import Ajv from "ajv";
import { loadDeliveryConfig } from "../../../stacks/config";
import { StackDeployment } from "../../../stacks/stackDeployment";
import { REPO } from "./configs";
import { MockRun, runWithMocks } from "./pulumiMocks";

/** The CRDs the test bed installs, from where testbed/cluster/crds.sh finds them ($PULP_CRD_DIR first). */
export const CRDS = execFileSync("bash", [path.join(REPO, "testbed/cluster/crds.sh"), "dir"], {
  encoding: "utf8",
}).trim();

/** The smallest valid `delivery:` config (keys without the prefix). */
export const DELIVERY: Record<string, unknown> = {
  pulumiStack: "organization/pulp/prod",
  projectRepo: "https://git.example.com/infra/pulp-pulumi.git",
  branch: "main",
  backend: { secretName: "pulp-state", key: "url" },
  secretsProvider: { passphrase: { secretName: "pulp-state", key: "passphrase" } },
  pulpConfig: { contentOrigin: "https://pulp.example.com", database: { cloudnativepg: {} } },
};

/** The committed stacks/Pulumi.dev.yaml, keys without `delivery:`. */
export function devDelivery(): Record<string, unknown> {
  const doc = yaml.load(fs.readFileSync(path.join(REPO, "stacks/Pulumi.dev.yaml"), "utf8")) as {
    config: Record<string, unknown>;
  };
  return Object.fromEntries(Object.entries(doc.config).map(([k, v]) => [k.replace(/^delivery:/, ""), v]));
}

export async function renderDelivery(raw: Record<string, unknown>): Promise<MockRun> {
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) config[`delivery:${k}`] = v;
  return runWithMocks({ config }, () => {
    const loaded = loadDeliveryConfig();
    new StackDeployment(loaded.stackName, { config: loaded });
  });
}

export const STACK_TYPE = "kubernetes:pulumi.com/v1:Stack";

type Schema = Record<string, any>;

export function crdSchema(file: string, version: string): Schema {
  const crd = yaml.load(fs.readFileSync(path.join(CRDS, file), "utf8")) as {
    spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
  };
  return crd.spec.versions.find((v) => v.name === version)!.schema.openAPIV3Schema;
}

/**
 * The API server's strict field validation (`kubectl --validate=strict`, and what the default `Warn`
 * prunes): an object schema with `properties` accepts no other key unless it preserves unknown fields.
 * JSON schema allows extra keys by default, so this closes each such object.
 */
export function strict(schema: Schema): Schema {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== "object") return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] =
      k === "properties"
        ? Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, strict(s)]))
        : strict(v);
  }
  if (
    out.type === "object" &&
    out.properties &&
    out.additionalProperties === undefined &&
    !out["x-kubernetes-preserve-unknown-fields"]
  ) {
    // metadata is validated by the API server itself, not by the CRD schema.
    out.additionalProperties = false;
  }
  return out;
}

export function validator(schema: Schema) {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  return ajv.compile(schema);
}
