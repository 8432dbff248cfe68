// Pulp's signing services (pulp:signing), with the key in pulp:signingKey: the key reaches only the workers,
// which sign publications in tasks, and the Job that registers the services. Each pod imports it into a
// keyring of its own at start (importKey.sh), so a new key rolls the workers, and the Job updates the
// services in place (register.py), so repositories keep them (pulp-operator #1608).
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { TINY } from "../config/ephemeral";
import { SIGNING_KINDS, SigningConfig } from "../config/schema";
import { contentHash } from "../common/hash";
import { fixedName, Identity, labels } from "../common/labels";

type Container = k8s.types.input.core.v1.Container;

const SCRIPTS_DIR = "/etc/pulp/signing/scripts";
const KEY_DIR = "/etc/pulp/signing/key";
const KEY_FILE = "signing.asc";
/** The pod's own keyring: a directory the init container makes (gpg wants 0700) in an emptyDir. */
export const SIGNING_GNUPGHOME = "/etc/pulp/signing/gnupg/home";

const read = (file: string) => fs.readFileSync(path.join(__dirname, file), "utf8");

/** The scripts the services run, what imports the key, and what registers the services. */
export const SIGNING_FILES: Record<string, string> = {
  "detached.sh": read("detached.sh"),
  "apt.sh": read("apt.sh"),
  "import-key.sh": read("importKey.sh"),
  "register.py": read("register.py"),
};

/** Where each kind's script is, as the services record it. */
export const signingScript = (kind: keyof typeof SIGNING_KINDS) => `${SCRIPTS_DIR}/${kind}.sh`;

/** What the registering Job reads (SIGNING_SERVICES): each service's name, class and script. */
export function servicesSpec(config: SigningConfig): { name: string; class: string; script: string }[] {
  return config.services.map((s) => ({
    name: s.name,
    class: SIGNING_KINDS[s.kind],
    script: signingScript(s.kind),
  }));
}

/** What a pod that signs needs: the volumes, the init container that imports the key, the container's mounts. */
export interface SigningRuntime {
  /** The services as register.py reads them. */
  services: string;
  volumes: k8s.types.input.core.v1.Volume[];
  /** Imports the key into the pod's keyring before the Pulp container starts. */
  initContainer: (image: string) => Container;
  /** The keyring and the scripts (not the key itself) for the container that signs. */
  mounts: k8s.types.input.core.v1.VolumeMount[];
  env: k8s.types.input.core.v1.EnvVar[];
  /** Changes with the key, the services or the scripts: rolls the workers, and registers again. */
  hash: pulumi.Output<string>;
  /** The Secret and the ConfigMap, which the pods must not start before. */
  resources: pulumi.Resource[];
}

export interface SigningArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  signing: SigningConfig;
  /** pulp:signingKey. */
  key: pulumi.Output<string>;
}

export class Signing extends pulumi.ComponentResource {
  readonly runtime: SigningRuntime;

  constructor(name: string, args: SigningArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:signing:Signing", name, {}, opts);
    const meta = (suffix: string) => ({
      name: fixedName(args.identity, suffix),
      namespace: args.namespace,
      labels: labels(args.identity, "config"),
    });
    // The value lives in the stack config: this Secret is only its copy in the cluster.
    const secret = new k8s.core.v1.Secret(
      `${name}-key`,
      { metadata: meta("signing-key"), stringData: { [KEY_FILE]: args.key } },
      { parent: this },
    );
    const scripts = new k8s.core.v1.ConfigMap(
      `${name}-scripts`,
      { metadata: meta("signing-scripts"), data: SIGNING_FILES },
      { parent: this },
    );
    const services = JSON.stringify(servicesSpec(args.signing));
    this.runtime = {
      services,
      volumes: [
        { name: "signing-key", secret: { secretName: secret.metadata.name, defaultMode: 0o440 } },
        { name: "signing-scripts", configMap: { name: scripts.metadata.name, defaultMode: 0o555 } },
        // In memory: the imported private key never reaches the node's disk.
        { name: "signing-gnupg", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } },
      ],
      initContainer: (image) => ({
        name: "signing-key",
        image,
        command: ["/bin/sh", `${SCRIPTS_DIR}/import-key.sh`, `${KEY_DIR}/${KEY_FILE}`],
        env: [{ name: "GNUPGHOME", value: SIGNING_GNUPGHOME }],
        volumeMounts: [
          { name: "signing-key", mountPath: KEY_DIR, readOnly: true },
          { name: "signing-scripts", mountPath: SCRIPTS_DIR, readOnly: true },
          { name: "signing-gnupg", mountPath: path.posix.dirname(SIGNING_GNUPGHOME) },
        ],
        terminationMessagePolicy: "FallbackToLogsOnError",
        resources: {
          requests: { cpu: "10m", memory: "32Mi", "ephemeral-storage": TINY.request },
          limits: { memory: "64Mi", "ephemeral-storage": TINY.limit },
        },
      }),
      mounts: [
        { name: "signing-scripts", mountPath: SCRIPTS_DIR, readOnly: true },
        { name: "signing-gnupg", mountPath: path.posix.dirname(SIGNING_GNUPGHOME) },
      ],
      env: [{ name: "GNUPGHOME", value: SIGNING_GNUPGHOME }],
      // A digest of a private key gives nothing away (unlike one of a password), so a plain one will do.
      hash: pulumi.unsecret(args.key.apply((key) => contentHash({ key, services, files: SIGNING_FILES }))),
      resources: [secret, scripts],
    };
    this.registerOutputs({});
  }
}

/** The container with the keyring and the scripts mounted, and GNUPGHOME set. */
export function signing(rt: SigningRuntime | undefined, c: Container): Container {
  if (!rt) return c;
  return {
    ...c,
    env: [...((c.env as k8s.types.input.core.v1.EnvVar[]) ?? []), ...rt.env],
    volumeMounts: [...((c.volumeMounts as k8s.types.input.core.v1.VolumeMount[]) ?? []), ...rt.mounts],
  };
}
