// A Pulp install for Pulumi programs in any language (Python, Go, C#, YAML, Java): the same install as
// `Pulp.create`, behind arguments that Pulumi's schema inference for TypeScript components can describe.
// That inference (@pulumi/pulumi's provider/experimental/analyzer) takes only interfaces of strings,
// numbers, booleans, arrays, string-keyed maps, Input<T>/Output<T> of those and string-literal enums; it
// refuses Pulp's own arguments (`secrets` is a Partial<Record<SecretName, Output<string>>>) and its
// outputs (`upgrade` is a union, `workloads` a Record with literal keys, `settings` a component class).
// So: the `pulp:` stack config as one plain object, validated here by parseArgs with the same schema
// and rules as the stack config (docs/configuration.md), one optional string per secret, and the
// cluster as kubeconfig and context. Every property of the class below is an output in the inferred
// schema: keep them Output<string | boolean>. See testbed/langs/FINDINGS.md.
import * as os from "os";
import * as pulumi from "@pulumi/pulumi";
import { SuppliedSecrets } from "../config/load";
import { parseArgs } from "../config/programArgs";
import { SECRET_NAMES, SecretName } from "../config/rules";
import { Pulp } from "../pulp";
import { clusterFrom, providerCluster } from "../upgrade/cluster";
import { KubeTarget } from "../upgrade/kubeApi";

/** The type token: the plugin package is named `pulp` (components/multilang/package.json). */
export const PULP_INSTALL_TYPE = "pulp:index:PulpInstall";

export interface PulpInstallArgs {
  /**
   * The install: the keys of the `pulp:` stack config as one object (docs/configuration.md), e.g.
   * {"contentOrigin": "https://pulp.example.com", "database": {"cloudnativepg": {}}}. Checked with the
   * same schema and rules as the stack config; a problem is named by its path (config.api.replicas).
   * Plain values only: it is validated before anything is created.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the inferred schema's Any: JSON values
  config: { [key: string]: any };
  /** The admin user's password (`pulp:adminPassword`); generated when left out. */
  adminPassword?: pulumi.Input<string>;
  /** Django's SECRET_KEY (`pulp:secretKey`); generated when left out. */
  secretKey?: pulumi.Input<string>;
  /** The key that encrypts database fields (`pulp:dbFieldsEncryptionKey`); generated when left out. */
  dbFieldsEncryptionKey?: pulumi.Input<string>;
  /** The external PostgreSQL password (`pulp:databasePassword`), with `database.external`. */
  databasePassword?: pulumi.Input<string>;
  /** The S3 secret access key of the artifact storage (`pulp:s3SecretAccessKey`), with `storage.s3`. */
  s3SecretAccessKey?: pulumi.Input<string>;
  /** The Azure storage account's key (`pulp:azureAccountKey`), with `storage.azure`. */
  azureAccountKey?: pulumi.Input<string>;
  /** A Google service account's JSON key (`pulp:gcsCredentials`), with `storage.gcs`; left out: the pods' identity. */
  gcsCredentials?: pulumi.Input<string>;
  /** The S3 secret access key of the backups (`pulp:backupS3SecretAccessKey`), with `backup.s3`. */
  backupS3SecretAccessKey?: pulumi.Input<string>;
  /** The S3 secret access key to restore from (`pulp:restoreS3SecretAccessKey`), with `restore.s3`. */
  restoreS3SecretAccessKey?: pulumi.Input<string>;
  /** The signing services' key, one ASCII-armored private key (`pulp:signingKey`), with `signing`. */
  signingKey?: pulumi.Input<string>;
  /** The password of `ldap.bindDn` (`pulp:ldapBindPassword`). */
  ldapBindPassword?: pulumi.Input<string>;
  /**
   * The kubeconfig (a path or the content) of the cluster the Kubernetes provider deploys to: where the
   * upgrade history is read and the stop-the-world step and job guard make their API calls. Left out
   * (with `context`): the `kubernetes:` config, else $KUBECONFIG or ~/.kube/config, as the provider does.
   */
  kubeconfig?: pulumi.Input<string>;
  /** The kubeconfig context (`kubernetes:context`). */
  context?: pulumi.Input<string>;
}

/** A whole Pulp install (the Pulp component), for programs in any Pulumi language. */
export class PulpInstall extends pulumi.ComponentResource {
  /** The namespace Pulp runs in. */
  readonly namespace: pulumi.Output<string>;
  /** The API's in-cluster URL. */
  readonly apiUrl: pulumi.Output<string>;
  /** The content app's in-cluster URL. */
  readonly contentUrl: pulumi.Output<string>;
  /** How this update upgrades Pulp: install, none, rolling, offline or stop-the-world. */
  readonly upgradeKind: pulumi.Output<string>;
  /** The upgrade plan in words ("install pulpcore 3.89.2"). */
  readonly upgradeSummary: pulumi.Output<string>;
  /** The migration Job of this update. */
  readonly migrationJobName: pulumi.Output<string>;
  /** True once every Pulp Deployment has rolled out (never resolves on a failed update). */
  readonly rolledOut: pulumi.Output<boolean>;

  constructor(name: string, args: PulpInstallArgs, opts?: pulumi.ComponentResourceOptions) {
    super(PULP_INSTALL_TYPE, name, {}, opts);
    const secrets: SuppliedSecrets = {};
    for (const key of SECRET_NAMES) {
      const value = (args as unknown as Record<SecretName, pulumi.Input<string> | undefined>)[key];
      if (value !== undefined && value !== null) secrets[key] = pulumi.secret(value);
    }
    // Refuses with every problem, by argument path, before anything is created.
    const config = parseArgs(args.config ?? {}, Object.keys(secrets) as SecretName[]);
    const cluster: pulumi.Output<KubeTarget> =
      args.kubeconfig === undefined && args.context === undefined
        ? providerCluster()
        : pulumi
            .all([args.kubeconfig, args.context])
            .apply(([kubeconfig, context]) => clusterFrom(kubeconfig, context, process.env, os.homedir()));
    // Pulp.create reads the upgrade history first (a promise); outputs follow from it, and a refusal
    // (an unsupported upgrade or restore) fails them with its message.
    const pulp = Pulp.create(
      name,
      { config, secrets, cluster },
      { parent: this, provider: opts?.provider, providers: opts?.providers },
    );
    const from = <T>(f: (p: Pulp) => pulumi.Input<T>): pulumi.Output<T> =>
      pulumi.output(pulp.then((p) => pulumi.output(f(p)))) as pulumi.Output<T>;
    this.namespace = from((p) => p.namespace);
    this.apiUrl = from((p) => p.apiUrl);
    this.contentUrl = from((p) => p.contentUrl);
    this.upgradeKind = from((p) => p.upgrade.kind);
    this.upgradeSummary = from((p) => p.upgrade.summary);
    this.migrationJobName = from((p) => p.migrationJobName);
    this.rolledOut = from((p) => p.rolledOut);
    this.registerOutputs({
      namespace: this.namespace,
      apiUrl: this.apiUrl,
      contentUrl: this.contentUrl,
      upgradeKind: this.upgradeKind,
      upgradeSummary: this.upgradeSummary,
      migrationJobName: this.migrationJobName,
      rolledOut: this.rolledOut,
    });
  }
}
