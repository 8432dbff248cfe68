import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SuppliedSecrets } from "../config/load";
import { DB_FIELDS_KEY_FILE, TOKEN_PRIVATE_KEY_FILE, TOKEN_PUBLIC_KEY_FILE } from "../settings/render";
import { Holding, holds, KEYS_KEPT_IN_ANNOTATION } from "../contract";
import { fixedName, Identity, labels } from "../common/labels";
import { GeneratedSecret } from "./generatedSecret";
import { generateKey, GeneratedValue, SecretKind } from "./keys";

export interface PulpSecretsArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  supplied: SuppliedSecrets;
  tokenAuth: boolean;
  /**
   * The state holds an older version's GeneratedSecrets (upgrade/deployed.ts keysInGeneratedSecrets): each
   * Stash is created from one, and the GeneratedSecret is unprotected so that the next update, which finds
   * the key Secret annotated, drops it from the state (retained: nothing to delete).
   */
  fromGeneratedSecrets: boolean;
}

/** A Kubernetes Secret's name and key, as env `secretKeyRef` and volume items take them. */
export interface SecretKeyRef {
  name: string;
  key: string;
}

/**
 * The secrets Pulp needs, generated once (or taken from the stack config) and kept as Kubernetes Secrets
 * with fixed names. A generated value is kept by a Stash, the engine's own resource: the value it was
 * created with is its output for good (later values are ignored, `ignoreChanges`), in the encrypted state.
 * Both the Stashes and the Secrets are protected and retained on delete: the database-fields key encrypts
 * data in the database, and a new one would make that data unreadable.
 */
export class PulpSecrets extends pulumi.ComponentResource {
  readonly secretKey: SecretKeyRef;
  /** SECRET_KEY's value (supplied or generated): keys the digest that tells a changed admin password. */
  readonly secretKeyValue: pulumi.Output<string>;
  readonly adminPassword: SecretKeyRef;
  readonly dbFieldsKey: SecretKeyRef;
  /** Secret holding the token-signing key pair (container registry auth), when enabled. */
  readonly tokenKeysSecret?: string;
  /** Every Kubernetes Secret made here, for dependsOn. */
  readonly resources: k8s.core.v1.Secret[] = [];
  /** The Stashes that keep the generated keys. */
  readonly stashes: pulumi.Stash[] = [];

  constructor(name: string, args: PulpSecretsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:secrets:PulpSecrets", name, {}, opts);
    const keep = { parent: this, protect: true, retainOnDelete: true };
    // A new value on every run: only the one a Stash is created with is ever used.
    const generated = (suffix: string, kind: SecretKind): pulumi.Output<GeneratedValue> => {
      const old = args.fromGeneratedSecrets
        ? new GeneratedSecret(`${name}-${suffix}`, { kind }, { ...keep, protect: false })
        : undefined;
      // publicKey only where there is one: a property the resource's outputs lack is unknown in a preview.
      const seed: pulumi.Input<GeneratedValue> = !old
        ? generateKey(kind)
        : kind === "ec-p256-keypair"
          ? pulumi.all([old.value, old.publicKey]).apply(([value, publicKey]) => ({ value, publicKey }))
          : old.value.apply((value) => ({ value }));
      const stash = new pulumi.Stash(
        `${name}-${suffix}`,
        { input: pulumi.secret(seed) },
        { ...keep, ignoreChanges: ["input"], additionalSecretOutputs: ["input", "output"] },
      );
      this.stashes.push(stash);
      // While the key moves, the GeneratedSecret's value (the same): a preview knows it, where a Stash it
      // creates has no output yet, and the key Secrets would look changed (and be replaced).
      if (old) return pulumi.secret(seed);
      // The engine always sets `output` (the first input; with ignoreChanges, `input` stays that too). Test
      // mocks that hand a resource its inputs back as its state (a consumer's unit tests) set only `input`.
      return pulumi
        .all([stash.output, stash.input])
        .apply(([kept, first]) => (kept ?? first) as GeneratedValue);
    };
    const valueOf = (
      suffix: string,
      kind: "django-secret-key" | "fernet-key" | "password",
      supplied?: pulumi.Output<string>,
    ) => supplied ?? generated(suffix, kind).apply((g) => g.value);
    // Every Stash first: the key Secret's annotation says the keys are in them (below).
    this.secretKeyValue = valueOf("secret-key", "django-secret-key", args.supplied.secretKey);
    const dbFieldsKey = valueOf("db-fields-key", "fernet-key", args.supplied.dbFieldsEncryptionKey);
    const adminPassword = valueOf("admin-password", "password", args.supplied.adminPassword);
    const pair = args.tokenAuth ? generated("token-keys", "ec-p256-keypair") : undefined;

    const secret = (
      suffix: string,
      holding: Holding,
      data: Record<string, pulumi.Input<string>>,
      options: pulumi.CustomResourceOptions = keep,
      annotations: Record<string, string> = {},
    ) => {
      const resource = new k8s.core.v1.Secret(
        `${name}-${suffix}`,
        {
          metadata: {
            name: fixedName(args.identity, suffix),
            namespace: args.namespace,
            labels: labels(args.identity, "config"),
            annotations: { ...holds(holding), ...annotations },
          },
          type: "Opaque",
          stringData: data,
        },
        options,
      );
      this.resources.push(resource);
      return fixedName(args.identity, suffix);
    };

    // Where the next update finds out that the keys are in Stashes (upgrade/history.ts findInstall): on the
    // Secret the component always makes, once every Stash exists (a metadata change: no replacement).
    this.secretKey = {
      name: secret(
        "secret-key",
        "secret-key",
        { secret_key: this.secretKeyValue },
        { ...keep, dependsOn: this.stashes },
        { [KEYS_KEPT_IN_ANNOTATION]: "stash" },
      ),
      key: "secret_key",
    };
    this.dbFieldsKey = {
      name: secret("db-fields-encryption", "db-fields-key", { [DB_FIELDS_KEY_FILE]: dbFieldsKey }),
      key: DB_FIELDS_KEY_FILE,
    };
    // The admin password changes by design (a new migration Job sets it in Pulp), and the provider replaces
    // a Secret whose data changes (pulumi-kubernetes treats Secrets as immutable): so this one is neither
    // protected nor retained, and goes before its replacement (a fixed name). Its value lives on in the
    // stack config, or in the protected Stash; the Secret is only its copy in the cluster.
    this.adminPassword = {
      name: secret(
        "admin-password",
        "admin-password",
        { password: adminPassword },
        { parent: this, deleteBeforeReplace: true },
      ),
      key: "password",
    };
    if (pair) {
      this.tokenKeysSecret = secret("container-auth", "token-keys", {
        [TOKEN_PRIVATE_KEY_FILE]: pair.apply((p) => p.value),
        [TOKEN_PUBLIC_KEY_FILE]: pair.apply((p) => p.publicKey ?? ""),
      });
    }
    this.registerOutputs({});
  }
}
