// Certificate authorities Pulp trusts beside its image's own (remotes behind a private CA). Pulp's
// downloader builds its TLS context with ssl.create_default_context() (pulpcore/download/factory.py), which
// reads SSL_CERT_FILE: a bundle of the image's CAs plus these, made by an init container, so the image's
// public CAs stay trusted whatever distribution the image is built on.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SMALL_DIR, TINY } from "../config/ephemeral";
import { PulpConfig } from "../config/parse";
import { contentHash } from "../common/hash";
import { fixedName, Identity, labels } from "../common/labels";

type Container = k8s.types.input.core.v1.Container;

const SOURCE_DIR = "/etc/pulp/trusted-ca";
const BUNDLE_DIR = "/etc/pulp/ca-bundle";
export const CA_BUNDLE_FILE = `${BUNDLE_DIR}/ca-bundle.crt`;

// The image's own bundle first (python's idea of OpenSSL's default file), then every key of the ConfigMap.
const BUNDLE_SCRIPT = `set -eu
out=${CA_BUNDLE_FILE}
system=$(python3 -c 'import ssl; print(ssl.get_default_verify_paths().openssl_cafile)')
: > "$out"
if [ -f "$system" ]; then cat "$system" >> "$out"; else echo "no CA bundle at $system; trusting only ${SOURCE_DIR}" >&2; fi
for f in ${SOURCE_DIR}/*; do cat "$f" >> "$out"; echo >> "$out"; done
`;

export interface TrustedCaArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  trustedCa: PulpConfig["trustedCa"];
}

export class TrustedCa extends pulumi.ComponentResource {
  /** Changes when the program-kept certificates change (part of the pods' config hash); "" otherwise. */
  readonly hash: string;
  /** The ConfigMap and the bundle's emptyDir, for the pod's volumes. */
  readonly volumes: k8s.types.input.core.v1.Volume[];
  /** Builds the bundle before the Pulp container starts. */
  readonly initContainer: (image: string) => Container;

  constructor(name: string, args: TrustedCaArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:trust:TrustedCa", name, {}, opts);
    const { certificates, configMap } = args.trustedCa;
    let configMapName: pulumi.Input<string>;
    if (certificates !== undefined) {
      configMapName = new k8s.core.v1.ConfigMap(
        name,
        {
          metadata: {
            name: fixedName(args.identity, "trusted-ca"),
            namespace: args.namespace,
            labels: labels(args.identity, "config"),
          },
          data: { "ca.crt": certificates },
        },
        { parent: this },
      ).metadata.name;
    } else {
      configMapName = configMap!;
    }
    this.hash = certificates === undefined ? "" : contentHash(certificates);
    this.volumes = [
      { name: "trusted-ca", configMap: { name: configMapName } },
      { name: "ca-bundle", emptyDir: { sizeLimit: SMALL_DIR } },
    ];
    this.initContainer = (image) => ({
      name: "ca-bundle",
      image,
      command: ["/bin/sh", "-c", BUNDLE_SCRIPT],
      volumeMounts: [
        { name: "trusted-ca", mountPath: SOURCE_DIR, readOnly: true },
        { name: "ca-bundle", mountPath: BUNDLE_DIR },
      ],
      resources: {
        requests: { cpu: "10m", memory: "32Mi", "ephemeral-storage": TINY.request },
        limits: { memory: "64Mi", "ephemeral-storage": TINY.limit },
      },
    });
    this.registerOutputs({});
  }
}

/** The Pulp container reading the bundle (unchanged without trusted CAs). */
export function trusting(trust: TrustedCa | undefined, c: Container): Container {
  if (!trust) return c;
  return {
    ...c,
    // requests (used by some plugins) reads its own variable rather than OpenSSL's.
    env: [
      ...((c.env as k8s.types.input.core.v1.EnvVar[] | undefined) ?? []),
      { name: "SSL_CERT_FILE", value: CA_BUNDLE_FILE },
      { name: "REQUESTS_CA_BUNDLE", value: CA_BUNDLE_FILE },
    ],
    volumeMounts: [
      ...((c.volumeMounts as k8s.types.input.core.v1.VolumeMount[] | undefined) ?? []),
      { name: "ca-bundle", mountPath: BUNDLE_DIR, readOnly: true },
    ],
  };
}
