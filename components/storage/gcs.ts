// What a Pulp pod needs for storage.gcs beyond settings.py: the service account key as a file (google-auth
// reads the file GOOGLE_APPLICATION_CREDENTIALS names, never a setting) and the JSON API's endpoint.
import * as k8s from "@pulumi/kubernetes";
import { SecretKeyRef } from "../secrets/pulpSecrets";

/** The key's directory. google-auth reads the file once per process, so a new key rolls the pods (pulp.ts). */
export const GCS_KEY_DIR = "/etc/pulp/gcs";
export const GCS_KEY_FILE = "credentials.json";

export interface GcsRuntime {
  /** pulp:gcsCredentials in the Secret `<instance>-gcs`; unset: the pods' own identity. */
  key?: SecretKeyRef;
  /** storage.gcs.endpointUrl. */
  endpointUrl?: string;
}

export function gcsEnv(gcs: GcsRuntime | undefined): k8s.types.input.core.v1.EnvVar[] {
  if (!gcs) return [];
  return [
    ...(gcs.key ? [{ name: "GOOGLE_APPLICATION_CREDENTIALS", value: `${GCS_KEY_DIR}/${GCS_KEY_FILE}` }] : []),
    // google-cloud-storage's own override: django-storages passes no client options. It keeps
    // authentication on (STORAGE_EMULATOR_HOST would drop it) and the signed URLs name it too.
    ...(gcs.endpointUrl
      ? [{ name: "API_ENDPOINT_OVERRIDE", value: gcs.endpointUrl.replace(/\/+$/, "") }]
      : []),
  ];
}

export function gcsVolumes(gcs: GcsRuntime | undefined): k8s.types.input.core.v1.Volume[] {
  if (!gcs?.key) return [];
  return [
    {
      name: "gcs-key",
      secret: {
        secretName: gcs.key.name,
        items: [{ key: gcs.key.key, path: GCS_KEY_FILE }],
        defaultMode: 0o440,
      },
    },
  ];
}

export function gcsMounts(gcs: GcsRuntime | undefined): k8s.types.input.core.v1.VolumeMount[] {
  return gcs?.key ? [{ name: "gcs-key", mountPath: GCS_KEY_DIR, readOnly: true }] : [];
}
