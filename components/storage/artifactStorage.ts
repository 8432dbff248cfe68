import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PulpConfig } from "../config/parse";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import { holds } from "../contract";
import { objectStorage } from "../config/objectStorage";
import { fixedName, Identity, labels } from "../common/labels";
import { GCS_KEY_FILE, GcsRuntime } from "./gcs";

export interface ArtifactStorageArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  storage: PulpConfig["storage"];
  /** The object storage secret key, from the stack config. */
  s3SecretAccessKey?: pulumi.Output<string>;
  /** The Azure storage account's key (pulp:azureAccountKey), with storage.azure. */
  azureAccountKey?: pulumi.Output<string>;
  /** A service account's JSON key (pulp:gcsCredentials), with storage.gcs; unset: the pods' identity. */
  gcsCredentials?: pulumi.Output<string>;
}

/**
 * How pods reach an Azure storage account with its key: one connection string, which names the blob
 * endpoint too (django-storages builds `https://<account>.blob.core.windows.net` otherwise, with no way to
 * name a sovereign cloud's, a private endpoint's or an emulator's). The key is base64 (validators.ts), so it
 * cannot end a field early.
 */
export function azureConnectionString(
  azure: Pick<NonNullable<PulpConfig["storage"]["azure"]>, "accountName" | "endpointUrl">,
  accountKey: string,
): string {
  const endpoint = (azure.endpointUrl ?? `https://${azure.accountName}.blob.core.windows.net`).replace(
    /\/+$/,
    "",
  );
  const protocol = new URL(endpoint).protocol.slice(0, -1);
  return (
    `DefaultEndpointsProtocol=${protocol};AccountName=${azure.accountName};AccountKey=${accountKey};` +
    `BlobEndpoint=${endpoint}`
  );
}

/**
 * `/var/lib/pulp`: a ReadWriteMany PVC shared by api, content and worker pods, or, with object storage,
 * a per-pod scratch directory (artifacts then live in the bucket).
 */
export class ArtifactStorage extends pulumi.ComponentResource {
  /** The pod volume that mounts at /var/lib/pulp. */
  readonly volume: k8s.types.input.core.v1.Volume;
  /** The claim the program made (undefined for the user's own, storage.pvc.existingClaim). */
  readonly claim?: k8s.core.v1.PersistentVolumeClaim;
  /** Whether artifacts live in a volume (a claim, the program's or the user's) rather than a bucket. */
  readonly onVolume: boolean;
  readonly s3SecretKey?: SecretKeyRef;
  /** The Azure connection string, with its key (storage.azure). */
  readonly azureConnection?: SecretKeyRef;
  /** storage.gcs: where pods find the key (when there is one) and the endpoint. */
  readonly gcs?: GcsRuntime;
  /** What pods need to exist before they start (for dependsOn). */
  readonly resources: pulumi.Resource[] = [];

  constructor(name: string, args: ArtifactStorageArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:storage:ArtifactStorage", name, {}, opts);
    const pvc = args.storage.pvc;
    const store = objectStorage(args.storage);
    this.onVolume = !store && pvc !== undefined;
    if (store || !pvc) {
      // Pulp's working directory: on the node, as large as storage.<s3|azure|gcs>.workingDirectorySize allows.
      this.volume = { name: "pulp-data", emptyDir: { sizeLimit: store?.workingDirectorySize } };
    } else if (pvc.existingClaim) {
      // Checked against the cluster before anything is declared (existingClaim.ts, from Pulp.history).
      this.volume = { name: "pulp-data", persistentVolumeClaim: { claimName: pvc.existingClaim } };
    } else {
      this.claim = new k8s.core.v1.PersistentVolumeClaim(
        name,
        {
          metadata: {
            name: fixedName(args.identity, "artifacts"),
            namespace: args.namespace,
            labels: labels(args.identity, "storage"),
            annotations: holds("artifacts"),
          },
          spec: {
            accessModes: [pvc.accessMode],
            storageClassName: pvc.storageClass,
            resources: { requests: { storage: pvc.size } },
          },
        },
        // Every artifact lives here: a change that would replace it fails instead, and destroy keeps it.
        { parent: this, protect: true, retainOnDelete: true },
      );
      this.resources.push(this.claim);
      this.volume = { name: "pulp-data", persistentVolumeClaim: { claimName: this.claim.metadata.name } };
    }
    /** A Secret `<instance>-<suffix>` holding one credential, and where pods read it. */
    const credential = (suffix: string, key: string, value: pulumi.Input<string>): SecretKeyRef => {
      const secretName = fixedName(args.identity, suffix);
      this.resources.push(
        new k8s.core.v1.Secret(
          `${name}-${suffix}`,
          {
            metadata: {
              name: secretName,
              namespace: args.namespace,
              labels: labels(args.identity, "storage"),
            },
            type: "Opaque",
            stringData: { [key]: value },
          },
          { parent: this },
        ),
      );
      return { name: secretName, key };
    };
    // The static key's secret; without a key, the pods' identity reaches the bucket (pulp:serviceAccount).
    if (args.storage.s3?.accessKeyId !== undefined) {
      this.s3SecretKey = credential("s3", "secret_key", args.s3SecretAccessKey ?? pulumi.secret(""));
    }
    // Without the account's key, the pods' workload identity (pulp:serviceAccount) reaches the account.
    const azure = args.storage.azure;
    if (azure && args.azureAccountKey) {
      this.azureConnection = credential(
        "azure",
        "connection_string",
        pulumi.secret(pulumi.output(args.azureAccountKey).apply((key) => azureConnectionString(azure, key))),
      );
    }
    const gcs = args.storage.gcs;
    if (gcs) {
      this.gcs = {
        key: args.gcsCredentials ? credential("gcs", GCS_KEY_FILE, args.gcsCredentials) : undefined,
        endpointUrl: gcs.endpointUrl,
      };
    }
    this.registerOutputs({});
  }
}
