// The one place unit tests talk to Pulumi's mocks. Sets config before the program runs (a module-level
// `new pulumi.Config()` would otherwise read nothing), names resources the way the engine does
// (logical name + random suffix), records every registration by type, fails on duplicate URNs, and
// never waits forever on an output that does not resolve.
import * as pulumi from "@pulumi/pulumi";
import type { Found } from "../../../components/upgrade/history";

export interface Registered {
  type: string;
  name: string;
  urn: string;
  custom: boolean;
  inputs: Record<string, any>;
  state: Record<string, any>;
  id: string;
  /** URNs this resource was registered as depending on (dependsOn and input dependencies). */
  dependencies: string[];
  protect: boolean;
  retainOnDelete: boolean;
  deleteBeforeReplace: boolean;
  /** The provider reference (`<urn>::<id>`; "" for the default provider). */
  provider: string;
  /** The `import` resource option ("" when none). */
  importId: string;
  ignoreChanges: string[];
  /** The `replacementTrigger` option, as the engine receives it (undefined when none). */
  replacementTrigger?: unknown;
}

export class MockRun {
  readonly resources: Registered[] = [];
  readonly errors: string[] = [];

  ofType(type: string): Registered[] {
    return this.resources.filter((r) => r.type === type);
  }

  /** The one resource of `type` whose logical name is `name` (or ends with `-name`). */
  get(type: string, name: string): Registered {
    const found = this.ofType(type).filter((r) => r.name === name || r.name.endsWith(`-${name}`));
    if (found.length !== 1) {
      const names = this.ofType(type).map((r) => r.name);
      throw new Error(
        `expected one ${type} named ${name}, found ${found.length} among [${names.join(", ")}]`,
      );
    }
    return found[0];
  }

  /** Every URN `resource` depends on, directly or through other resources. */
  dependenciesOf(resource: Registered): Set<string> {
    const byUrn = new Map(this.resources.map((r) => [r.urn, r]));
    const seen = new Set<string>();
    const visit = (r: Registered) => {
      for (const urn of r.dependencies) {
        if (seen.has(urn)) continue;
        seen.add(urn);
        const next = byUrn.get(urn);
        if (next) visit(next);
      }
    };
    visit(resource);
    return seen;
  }

  /** Kubernetes objects by kind and metadata.name (from the state, so auto-names are filled in). */
  k8s(kind: string, metadataName: string): Registered {
    const found = this.resources.filter(
      (r) => r.custom && r.type.endsWith(`:${kind}`) && r.state.metadata?.name === metadataName,
    );
    if (found.length !== 1) throw new Error(`expected one ${kind} ${metadataName}, found ${found.length}`);
    return found[0];
  }
}

const randomSuffix = () => Math.random().toString(36).slice(2, 9);

export interface RunOptions {
  /** Stack config, keys with their namespace (`pulp:image`); objects are JSON-encoded here. */
  config: Record<string, unknown>;
  secretKeys?: string[];
  preview?: boolean;
  stack?: string;
  /** Outputs of the stack's last update, as its StackReference to itself reads them. */
  deployedOutputs?: Record<string, unknown>;
  /** What the cluster holds for the instance (upgrade/history.ts findInstall); default: nothing. */
  cluster?: Found;
}

// Generated keys are recognisable under mocks (`generated-<kind>-...`), so snapshots and comparisons
// between runs can mask them; test/unit/components/secrets/keys.test.ts checks the real ones.
const keys = jest.requireActual("../../../components/secrets/keys");
jest.spyOn(keys, "generateKey").mockImplementation((kind: any) => ({
  value: `generated-${kind}-${randomSuffix()}`,
  ...(kind === "ec-p256-keypair"
    ? { publicKey: "-----BEGIN PUBLIC KEY-----\nmock\n-----END PUBLIC KEY-----\n" }
    : {}),
}));

/** Each Stash's first value, by stack and name: the state of every stack this test file deploys. */
const stashed = new Map<string, unknown>();

// Pulp.history reads the cluster; under mocks it reads `RunOptions.cluster` instead, through the real
// plannedFrom.
let cluster: Found = { deployments: [] };
const history = jest.requireActual("../../../components/upgrade/history");
jest.spyOn(history, "readHistory").mockImplementation(async (args: any) => ({
  ...history.plannedFrom(
    cluster,
    args,
    history.deployedOf(cluster.history) ? undefined : await history.legacyRecord(args.legacy),
  ),
  found: cluster,
}));

/**
 * Runs `program` under mocks with `config` and resolves once every registration has settled.
 * The program must be loaded inside `program` (e.g. `await import("../../index")` after
 * `jest.resetModules()`), so it sees this config.
 */
export async function runWithMocks(
  options: RunOptions,
  program: () => Promise<unknown> | unknown,
): Promise<MockRun> {
  const run = new MockRun();
  const stack = options.stack ?? "test";
  cluster = options.cluster ?? { deployments: [] };
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const inputs = args.inputs as Registered["inputs"];
        const state = { ...inputs };
        let id = `${args.name}-id`;
        if (args.type.startsWith("kubernetes:")) {
          const metadata = { ...(inputs.metadata ?? {}) };
          metadata.name ??= `${args.name}-${randomSuffix()}`;
          metadata.uid = `uid-${randomSuffix()}`;
          state.metadata = metadata;
          id = metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name;
        } else if (args.type === "pulumi:pulumi:StackReference") {
          state.outputs = options.deployedOutputs ?? {};
          state.secretOutputNames = [];
        } else if (args.type === "pulumi:index:Stash") {
          // The engine's builtin provider keeps what a Stash was created with (the component ignores
          // later inputs): the stack's first run's value, in every later run of the same stack.
          const key = `${stack}::${args.name}`;
          if (!stashed.has(key)) stashed.set(key, inputs.input);
          state.output = stashed.get(key);
        } else if (args.type.includes("GeneratedSecret")) {
          state.value = `generated-${args.name}-${randomSuffix()}`;
          state.publicKey = "-----BEGIN PUBLIC KEY-----\nmock\n-----END PUBLIC KEY-----\n";
        }
        return { id, state };
      },
      call: (args) => args.inputs,
    },
    "pulp",
    stack,
    options.preview ?? false,
    "organization", // what a file:// backend calls its only organization
  );

  // Duplicate URNs are only rejected by the real engine; make the mocks reject them too.
  const monitor = pulumi.runtime.getMonitor() as any;
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, callback: (err: unknown, res?: any) => void) => {
    const urn = monitor.newUrn(req.getParent(), req.getType(), req.getName());
    if (monitor.resources.has(urn)) {
      run.errors.push(`duplicate URN ${urn}`);
      callback(new Error(`duplicate URN ${urn}`));
      return;
    }
    register(req, (err: unknown, res?: any) => {
      if (!err) {
        run.resources.push({
          type: req.getType(),
          name: req.getName(),
          urn,
          custom: req.getCustom(),
          inputs: revealSecrets(pulumi.runtime.deserializeProperties(req.getObject())),
          state: revealSecrets(pulumi.runtime.deserializeProperties(res.getObject())),
          id: res.getId(),
          dependencies: req.getDependenciesList(),
          protect: req.getProtect() === true,
          retainOnDelete: req.getRetainondelete() === true,
          deleteBeforeReplace: req.getDeletebeforereplace() === true,
          importId: req.getImportid() ?? "",
          ignoreChanges: req.getIgnorechangesList() ?? [],
          provider: req.getProvider() ?? "",
          replacementTrigger: req.getReplacementTrigger()?.toJavaScript(),
        });
      }
      callback(err, res);
    });
  };

  const encoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.config)) {
    encoded[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  pulumi.runtime.setAllConfig(encoded, options.secretKeys ?? []);

  await program();
  await settle(run);
  if (run.errors.length > 0) throw new Error(run.errors.join("\n"));
  return run;
}

const SECRET_SIG = "4dabf18193072939515e22adb298388d"; // pulumi.runtime's marker of a secret value

/** Replaces the wire form of secret values with the values, so tests can compare them. */
function revealSecrets(value: any): any {
  if (Array.isArray(value)) return value.map(revealSecrets);
  if (value && typeof value === "object") {
    if (value[SECRET_SIG] === "1b47061264138c4ac30d75fd1eb44270") return revealSecrets(value.value);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revealSecrets(v)]));
  }
  return value;
}

/** Waits until no registration has arrived for a while; fails instead of hanging. */
async function settle(run: MockRun, timeoutMs = 20000): Promise<void> {
  const started = Date.now();
  let last = -1;
  let quiet = 0;
  while (quiet < 5) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(`registrations did not settle within ${timeoutMs} ms (${run.resources.length} so far)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
    quiet = run.resources.length === last ? quiet + 1 : 0;
    last = run.resources.length;
  }
}

/** The value of an output, or a clear failure if it never resolves (unknown in a preview). */
export function promiseOf<T>(output: pulumi.Output<T>, timeoutMs = 5000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`output did not resolve within ${timeoutMs} ms`)),
      timeoutMs,
    );
    output.apply((value) => {
      clearTimeout(timer);
      resolve(value);
      return value;
    });
  });
}
