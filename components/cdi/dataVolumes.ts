import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PulpConfig } from "../config/parse";
import { holds } from "../contract";
import { Identity, labels } from "../shared/labels";

type DataVolumeConfig = PulpConfig["dataVolumes"][number];

export interface DataVolumeImportsArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  imports: DataVolumeConfig[];
}

/**
 * CDI DataVolumes that unpack an http(s) tar archive into a new PVC of the same name, e.g. to seed
 * `/var/lib/pulp` or to bring a database dump in. Awaited until the import has Succeeded.
 */
export class DataVolumeImports extends pulumi.ComponentResource {
  readonly dataVolumes: Record<string, k8s.apiextensions.CustomResource> = {};

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
            labels: labels(args.identity, "import"),
            annotations: { ...dataVolumeAnnotations(dv), ...holds("import") },
          },
          spec: dataVolumeSpec(dv),
        },
        // The spec is immutable and the PVC holds the imported data: never replaced by a config change.
        { parent: this, protect: true, retainOnDelete: true, customTimeouts: { create: "60m" } },
      );
    }
    this.registerOutputs({});
  }
}

export function dataVolumeAnnotations(dv: DataVolumeConfig): Record<string, string> {
  return {
    "pulumi.com/waitFor": "jsonpath={.status.phase}=Succeeded",
    ...(dv.waitForFirstConsumer ? { "cdi.kubevirt.io/storage.bind.immediate.requested": "true" } : {}),
  };
}

export function dataVolumeSpec(dv: DataVolumeConfig): Record<string, unknown> {
  return {
    // archive: an uncompressed tar unpacked into a Filesystem volume (http and upload sources only).
    contentType: "archive",
    source: { http: { url: dv.url } },
    storage: {
      accessModes: ["ReadWriteMany"],
      volumeMode: "Filesystem",
      resources: { requests: { storage: dv.size } },
      ...(dv.storageClass ? { storageClassName: dv.storageClass } : {}),
    },
  };
}
