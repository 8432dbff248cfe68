// The delivery program's config (`delivery:` keys), validated before anything is created: every problem
// at once, each with the key, the value given and the command that fixes it (like components/config/).
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import {
  dnsLabelProblem,
  dnsSubdomainProblem,
  imageProblem,
  parseQuantity,
  quantityProblem,
} from "../components/config/formats";
import { decode } from "../components/config/load";
import { parseConfig } from "../components/config/parse";
import { ConfigError as PulpConfigError, closest, setCommand } from "../components/config/problems";
import { projectRepoProblem } from "./projectRepo";

/** Where the Stack CRs live unless `delivery:deliveryNamespace` says otherwise (the stack CLI defaults to it). */
export const DEFAULT_DELIVERY_NAMESPACE = "pulp-delivery";

export const DELIVERY_NAMESPACE = "delivery";

function formatted(problem: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const reason = problem(value);
    if (reason) ctx.addIssue({ code: "custom", message: `must be ${reason}` });
  });
}

/** A value held in a Kubernetes Secret of the delivery namespace: the CR names it, never holds it. */
const secretKeyRef = z.strictObject({ secretName: formatted(dnsSubdomainProblem), key: z.string().min(1) });
export type SecretKeyRef = z.output<typeof secretKeyRef>;

const quantity = formatted(quantityProblem);

/** Stack CR names are limited to 42 characters by the CRD (x-kubernetes-validations on metadata.name). */
const stackCrName = formatted((v) => dnsLabelProblem(v, 42));

export const deliverySchema = z.strictObject({
  /** Where Pulp runs; created here with Pod Security labels, so the workspace needs no cluster grant. */
  pulpNamespace: formatted(dnsLabelProblem).default("pulp"),
  /** Where the Stack CRs, the workspace pods and the backend Secrets live (not the Pulp namespace). */
  deliveryNamespace: formatted(dnsLabelProblem).default(DEFAULT_DELIVERY_NAMESPACE),
  /** metadata.name of the Stack CR; the workspace pod is `<stackName>-workspace-0`. */
  stackName: stackCrName.default("pulp"),
  /** The Pulumi stack the workspace runs: `organization/pulp/<stack>` on a DIY (s3, file) backend. */
  pulumiStack: z.string().regex(/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+){0,2}$/, {
    error: 'must be a stack name such as "organization/pulp/prod"',
  }),
  /**
   * Git URL of this repository. No default: a real install names its own fork or mirror. The operator's
   * own rules (https or ssh, owner/repo) are checked in parseDeliveryConfig (./projectRepo.ts).
   */
  projectRepo: z.string().min(1),
  branch: z.string().min(1).optional(),
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/, { error: "must be a full 40-character commit hash" })
    .optional(),
  /** The Pulp program is at the repository root. */
  repoDir: z.string().default("."),
  gitAuth: z.strictObject({ accessToken: secretKeyRef }).optional(),
  /** PULUMI_BACKEND_URL, from a Secret (it may carry credentials, e.g. a postgres:// or s3:// URL). */
  backend: secretKeyRef,
  /** Exactly one: a passphrase in a Secret, or a cloud KMS URL (not secret: it names a key). */
  secretsProvider: z.strictObject({
    passphrase: secretKeyRef.optional(),
    provider: z.string().min(1).optional(),
  }),
  /** Further environment for the workspace from Secrets, e.g. AWS_ACCESS_KEY_ID for an s3:// backend. */
  env: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), secretKeyRef).default({}),
  /** The Pulp stack's config, keys without `pulp:` (checked by the Pulp program's own validator). */
  pulpConfig: z.record(z.string(), z.unknown()).default({}),
  workspace: z
    .strictObject({
      /** The CLI the project is built and tested with; pin it (the operator's default is a floating tag). */
      image: formatted(imageProblem).default("pulumi/pulumi:3.248.0-nonroot"),
      // npm install of this project (@pulumi/kubernetes' 90 MB of typings) peaks above 1 GiB: measured in
      // stacks/README.md. The program itself now runs without ts-node's type check (tsconfig.pulumi.json),
      // about 290 MB less than that measurement; the defaults stand until it is measured again in a pod.
      cpuRequest: quantity.default("500m"),
      memoryRequest: quantity.default("1536Mi"),
      memoryLimit: quantity.default("3Gi"),
      /** Node's heap cap, below the memory limit, so Node collects garbage instead of being OOMKilled. */
      nodeMaxOldSpaceMb: z.number().int().min(256).max(65536).default(2560),
      /** `pulumi -v`: 0 quiet, 3 provider diagnostics, 9-11 gRPC traces (slow; secrets stay masked). */
      pulumiLogLevel: z.number().int().min(0).max(11).default(0),
    })
    .prefault({}),
  /** Branch polling and drift re-runs; the operator treats anything below 60 as 60. */
  resyncFrequencySeconds: z.number().int().min(60).max(86400).default(300),
  /** A second, preview-only Stack (spec.preview) for pull-request branches. */
  preview: z
    .strictObject({ enabled: z.boolean().default(false), branch: z.string().min(1).optional() })
    .prefault({}),
  /**
   * Take over a Pulp namespace that exists already (a stack installed by hand with `pulp:createNamespace`
   * true, e.g. after `npm run up:local`) with the `import` resource option, instead of creating it. Its
   * labels and annotations stay as they are while this is set (an import must match what exists).
   */
  adoptPulpNamespace: z.boolean().default(false),
  /** Cluster-scoped `get storageclasses`: needed only for a WaitForFirstConsumer artifact class. */
  readStorageClasses: z.boolean().default(false),
});

export type DeliveryConfig = z.output<typeof deliverySchema>;

export interface DeliveryProblem {
  key: string;
  given: unknown;
  message: string;
  fix: string;
}

export class DeliveryConfigError extends pulumi.RunError {
  constructor(readonly problems: DeliveryProblem[]) {
    const lines = problems.map(
      (p) =>
        `  - ${p.key}: ${p.message}\n      given: ${p.given === undefined ? "(not set)" : JSON.stringify(p.given)}\n      fix:   ${p.fix}`,
    );
    super(
      `Invalid delivery stack config (${problems.length} problem${problems.length === 1 ? "" : "s"}); nothing was created or changed:\n${lines.join("\n")}`,
    );
    this.name = "DeliveryConfigError";
  }
}

const keyOf = (path: readonly PropertyKey[]) =>
  `${DELIVERY_NAMESPACE}:${path.map((p) => (typeof p === "number" ? `[${p}]` : String(p))).join(".")}`.replace(
    /\.\[/g,
    "[",
  );

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const p of path) v = v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  return v;
}

/** Keys the Stack sets itself; the Pulp program must not be told otherwise. */
const OWNED_PULP_KEYS = ["namespace", "createNamespace"];

/** Validates raw `delivery:` config (keys without the prefix) and returns it with every default. */
export function parseDeliveryConfig(raw: Record<string, unknown>): DeliveryConfig {
  const result = deliverySchema.safeParse(raw);
  const problems: DeliveryProblem[] = [];
  // What the operator would refuse, reported with the other problems (a schema failure included).
  const repo =
    typeof raw.projectRepo === "string" && raw.projectRepo ? projectRepoProblem(raw.projectRepo) : undefined;
  if (repo) {
    problems.push({
      key: keyOf(["projectRepo"]),
      // Never the password of a URL with credentials.
      given: repo.shown,
      message: repo.note ? `${repo.message} (${repo.note})` : repo.message,
      fix: `pulumi config set ${keyOf(["projectRepo"])} '${repo.suggestion}'`,
    });
  }
  if (!result.success) {
    for (const issue of result.error.issues) {
      if (issue.code === "unrecognized_keys") {
        const known = issue.path.length === 0 ? Object.keys(deliverySchema.shape) : [];
        for (const name of issue.keys) {
          const hint = closest(name, known);
          problems.push({
            key: keyOf([...issue.path, name]),
            given: valueAt(raw, [...issue.path, name]),
            message: `unknown key "${name}"${hint ? `; did you mean "${hint}"?` : ""}`,
            fix: `pulumi config rm --path '${keyOf([...issue.path, name])}'`,
          });
        }
        continue;
      }
      const given = valueAt(raw, issue.path);
      problems.push({
        key: keyOf(issue.path),
        given,
        message: given === undefined && issue.code === "invalid_type" ? "is required" : issue.message,
        fix: setCommand(keyOf(issue.path)),
      });
    }
    throw new DeliveryConfigError(problems);
  }
  const config = result.data;
  if ((config.branch === undefined) === (config.commit === undefined)) {
    problems.push({
      key: keyOf(["branch"]),
      given: { branch: config.branch, commit: config.commit },
      message: "set exactly one of branch (follow it) or commit (pin it)",
      fix: `${setCommand(keyOf(["branch"]), "main")}  (or pulumi config rm ${keyOf(["branch"])} / ${keyOf(["commit"])})`,
    });
  }
  const sp = config.secretsProvider;
  if ((sp.passphrase === undefined) === (sp.provider === undefined)) {
    problems.push({
      key: keyOf(["secretsProvider"]),
      given: raw.secretsProvider,
      message:
        "set exactly one of passphrase (a Secret holding PULUMI_CONFIG_PASSPHRASE) or provider (a KMS URL)",
      fix: `pulumi config set --path '${keyOf(["secretsProvider", "passphrase"])}' '{"secretName":"pulp-delivery-state","key":"passphrase"}'`,
    });
  }
  if (config.preview.enabled && !config.preview.branch) {
    problems.push({
      key: keyOf(["preview", "branch"]),
      given: undefined,
      message: "is required when preview.enabled is true (the branch pull requests are previewed from)",
      fix: setCommand(keyOf(["preview", "branch"]), "<pr-branch>"),
    });
  }
  if (config.pulpNamespace === config.deliveryNamespace) {
    problems.push({
      key: keyOf(["deliveryNamespace"]),
      given: config.deliveryNamespace,
      message:
        "must differ from pulpNamespace: the workspace may read every Secret in the Pulp namespace, and the state backend's credentials must not be among them",
      fix: setCommand(keyOf(["deliveryNamespace"]), `${config.pulpNamespace}-delivery`),
    });
  }
  if (
    config.workspace.nodeMaxOldSpaceMb * 2 ** 20 >=
    (parseQuantity(config.workspace.memoryLimit) ?? Infinity)
  ) {
    problems.push({
      key: keyOf(["workspace", "nodeMaxOldSpaceMb"]),
      given: config.workspace.nodeMaxOldSpaceMb,
      message: `must be below workspace.memoryLimit (${config.workspace.memoryLimit}), or the kernel kills Node before its GC runs`,
      fix: setCommand(keyOf(["workspace", "nodeMaxOldSpaceMb"])),
    });
  }
  for (const key of OWNED_PULP_KEYS) {
    if (key in config.pulpConfig) {
      problems.push({
        key: keyOf(["pulpConfig", key]),
        given: config.pulpConfig[key],
        message: `is set by the delivery program (${key === "namespace" ? "delivery:pulpNamespace" : '"false": it creates the namespace itself'})`,
        fix: `pulumi config rm --path '${keyOf(["pulpConfig", key])}'`,
      });
    }
  }
  if (problems.length === 0) {
    // The Pulp program's own validator, now rather than in the workspace after a clone and npm install.
    try {
      parseConfig({ ...config.pulpConfig, namespace: config.pulpNamespace, createNamespace: false });
    } catch (e) {
      if (!(e instanceof PulpConfigError)) throw e;
      for (const p of e.problems) {
        problems.push({
          key: p.key.replace(/^pulp:/, `${DELIVERY_NAMESPACE}:pulpConfig.`),
          given: p.given,
          message: p.message,
          fix: p.fix.replace(/pulp:/g, `${DELIVERY_NAMESPACE}:pulpConfig.`),
        });
      }
    }
  }
  if (problems.length > 0) throw new DeliveryConfigError(problems);
  return config;
}

/**
 * This program was in delivery/ for a while. A stack's Pulumi.<stack>.yaml is not tracked (.gitignore), so
 * a checkout that moved the folder to stacks/ leaves it behind, and every `delivery:` key would read as
 * not set. `programDir` is this program's folder (stacks/).
 */
export function leftBehindStackConfig(programDir: string, stack: string): DeliveryProblem | undefined {
  const file = `Pulumi.${stack}.yaml`;
  const here = path.join(programDir, file);
  const old = path.join(programDir, "..", "delivery", file);
  if (fs.existsSync(here) || !fs.existsSync(old)) return undefined;
  return {
    key: file,
    given: old,
    message:
      "is still in delivery/, the folder this program was in before it moved to stacks/ (git does not move an untracked file); without it no delivery: key is set",
    fix: `mv ${old} ${here}`,
  };
}

/** Reads the `delivery:` keys of the stack config (JSON where the text is JSON). */
export function loadDeliveryConfig(): DeliveryConfig {
  const leftBehind = leftBehindStackConfig(__dirname, pulumi.getStack());
  if (leftBehind) throw new DeliveryConfigError([leftBehind]);
  const prefix = `${DELIVERY_NAMESPACE}:`;
  const raw: Record<string, unknown> = {};
  for (const [key, text] of Object.entries(pulumi.runtime.allConfig())) {
    if (key.startsWith(prefix)) raw[key.slice(prefix.length)] = decode(text);
  }
  return parseDeliveryConfig(raw);
}
