import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SuppliedSecrets } from "../config/load";
import { DB_FIELDS_KEY_FILE, TOKEN_PRIVATE_KEY_FILE, TOKEN_PUBLIC_KEY_FILE } from "../settings/render";
import { Holding, holds } from "../contract";
import { fixedName, Identity, labels } from "../common/labels";
import { GeneratedSecret } from "./generatedSecret";

export interface PulpSecretsArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  supplied: SuppliedSecrets;
  tokenAuth: boolean;
}

/** A Kubernetes Secret's name and key, as env `secretKeyRef` and volume items take them. */
export interface SecretKeyRef {
  name: string;
  key: string;
}

/**
 * The secrets Pulp needs, generated once (or taken from the stack config) and kept as Kubernetes Secrets
 * with fixed names. Both the generated values and the Secrets are protected and retained on delete: the
 * database-fields key encrypts data in the database, and a new one would make that data unreadable.
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

  constructor(name: string, args: PulpSecretsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:secrets:PulpSecrets", name, {}, opts);
    const keep = { parent: this, protect: true, retainOnDelete: true };
    const valueOf = (
      suffix: string,
      kind: "django-secret-key" | "fernet-key" | "password",
      supplied?: pulumi.Output<string>,
    ) => supplied ?? new GeneratedSecret(`${name}-${suffix}`, { kind }, keep).value;

    const secret = (
      suffix: string,
      holding: Holding,
      data: Record<string, pulumi.Input<string>>,
      options: pulumi.CustomResourceOptions = keep,
    ) => {
      const resource = new k8s.core.v1.Secret(
        `${name}-${suffix}`,
        {
          metadata: {
            name: fixedName(args.identity, suffix),
            namespace: args.namespace,
            labels: labels(args.identity, "config"),
            annotations: holds(holding),
          },
          type: "Opaque",
          stringData: data,
        },
        options,
      );
      this.resources.push(resource);
      return fixedName(args.identity, suffix);
    };

    this.secretKeyValue = valueOf("secret-key", "django-secret-key", args.supplied.secretKey);
    this.secretKey = {
      name: secret("secret-key", "secret-key", { secret_key: this.secretKeyValue }),
      key: "secret_key",
    };
    this.dbFieldsKey = {
      name: secret("db-fields-encryption", "db-fields-key", {
        [DB_FIELDS_KEY_FILE]: valueOf("db-fields-key", "fernet-key", args.supplied.dbFieldsEncryptionKey),
      }),
      key: DB_FIELDS_KEY_FILE,
    };
    // The admin password changes by design (the reset Job sets a new one in Pulp), and the provider replaces
    // a Secret whose data changes (pulumi-kubernetes treats Secrets as immutable): so this one is neither
    // protected nor retained, and goes before its replacement (a fixed name). Its value lives on in the
    // stack config, or in the protected GeneratedSecret; the Secret is only its copy in the cluster.
    this.adminPassword = {
      name: secret(
        "admin-password",
        "admin-password",
        { password: valueOf("admin-password", "password", args.supplied.adminPassword) },
        { parent: this, deleteBeforeReplace: true },
      ),
      key: "password",
    };
    if (args.tokenAuth) {
      const pair = new GeneratedSecret(`${name}-token-keys`, { kind: "ec-p256-keypair" }, keep);
      this.tokenKeysSecret = secret("container-auth", "token-keys", {
        [TOKEN_PRIVATE_KEY_FILE]: pair.value,
        [TOKEN_PUBLIC_KEY_FILE]: pair.publicKey.apply((k) => k ?? ""),
      });
    }
    this.registerOutputs({});
  }
}
