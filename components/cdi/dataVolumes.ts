import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PulpConfig } from "../config/parse";
import { holds } from "../contract";
import { Identity, labels } from "../common/labels";
import { KubeTarget } from "../upgrade/kubeApi";
import { ImportWatch } from "./importWatch";

type DataVolumeConfig = PulpConfig["dataVolumes"][number];

export interface DataVolumeImportsArgs {
  namespace: pulumi.Input<string>;
  /** The namespace's name as configured (known in preview, for the import's checks). */
  namespaceName: string;
  /** The cluster the import watch reads (upgrade/cluster.ts). */
  kube: pulumi.Input<KubeTarget>;
  identity: Identity;
  imports: DataVolumeConfig[];
  /**
   * Protected (the default): the PVC holds data the install uses. A restore's import only carries a copy
   * of its source: not protected, but still kept (retained) when the config drops it.
   */
  protect?: boolean;
  role?: "import" | "backup";
}

/**
 * CDI DataVolumes that unpack an http(s) tar archive into a new PVC of the same name, e.g. to seed
 * `/var/lib/pulp` or to bring a backup in. Each is awaited by an ImportWatch (importWatch.ts): in preview
 * it checks the real quota and storage classes, during the import it ends the update with the cause of
 * a failure instead of a timeout.
 */
export class DataVolumeImports extends pulumi.ComponentResource {
  readonly dataVolumes: Record<string, k8s.apiextensions.CustomResource> = {};
  /** What depends on an import waits for these (done when the import has Succeeded). */
  readonly imported: pulumi.Resource[] = [];

  constructor(name: string, args: DataVolumeImportsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:cdi:DataVolumeImports", name, {}, opts);
    for (const dv of args.imports) {
      this.dataVolumes[dv.name] = new k8s.apiextensions.CustomResource(
        `${name}-${dv.name}`,
        {
          apiVersion: "cdi.kubevirt.io/v1beta1",
          kind: "DataVolume",
          metadata: {
            name: dv.name,
            namespace: args.namespace,
            labels: labels(args.identity, args.role ?? "import"),
            annotations: { ...dataVolumeAnnotations(dv), ...holds("import") },
          },
          // The URL a secret in the state and in previews: a presigned URL is a credential (a backup's
          // always is). Every URL is: a public one loses only its display in a diff.
          spec: dataVolumeSpec(dv, pulumi.secret(dv.url)),
        },
        // The spec is immutable and the PVC holds the imported data: never replaced by a config change.
        { parent: this, protect: args.protect ?? true, retainOnDelete: true },
      );
      this.imported.push(
        new ImportWatch(
          `${name}-${dv.name}-import`,
          {
            namespace: args.namespaceName,
            name: dv.name,
            size: dv.size,
            ...(dv.storageClass ? { storageClass: dv.storageClass } : {}),
            timeoutSeconds: IMPORT_TIMEOUT_SECONDS,
            kube: args.kube,
          },
          { parent: this, dependsOn: [this.dataVolumes[dv.name]] },
        ),
      );
    }
    this.registerOutputs({});
  }
}

/** How long an import may take before the update fails. */
export const IMPORT_TIMEOUT_SECONDS = 3600;

export function dataVolumeAnnotations(dv: DataVolumeConfig): Record<string, string> {
  return {
    // The ImportWatch awaits it, and names a failure's cause.
    "pulumi.com/skipAwait": "true",
    ...(dv.waitForFirstConsumer ? { "cdi.kubevirt.io/storage.bind.immediate.requested": "true" } : {}),
  };
}

/** @param url the URL as the resource gets it: the program passes it as a secret */
export function dataVolumeSpec(
  dv: DataVolumeConfig,
  url: pulumi.Input<string> = dv.url,
): Record<string, unknown> {
  return {
    // archive: an uncompressed tar unpacked into a Filesystem volume (http and upload sources only).
    contentType: "archive",
    source: { http: { url } },
    storage: {
      accessModes: ["ReadWriteMany"],
      volumeMode: "Filesystem",
      resources: { requests: { storage: dv.size } },
      ...(dv.storageClass ? { storageClassName: dv.storageClass } : {}),
    },
  };
}
