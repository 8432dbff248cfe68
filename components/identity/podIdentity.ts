// The identity Pulp's own pods run as (pulp:serviceAccount): object storage reached without static keys.
// A ServiceAccount of their own carries what a cloud's webhook reads (EKS IRSA, GKE Workload Identity);
// `awsWebIdentity` does in the pod spec what EKS's webhook would, for clusters without it.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PulpConfig } from "../config/parse";
import { fixedName, Identity, labels } from "../common/labels";

type EnvVar = k8s.types.input.core.v1.EnvVar;
type Volume = k8s.types.input.core.v1.Volume;
type VolumeMount = k8s.types.input.core.v1.VolumeMount;

/** Where EKS's webhook mounts the token (AWS_WEB_IDENTITY_TOKEN_FILE names it): the same path here. */
export const AWS_TOKEN_DIR = "/var/run/secrets/eks.amazonaws.com/serviceaccount";
const AWS_TOKEN_VOLUME = "aws-iam-token";

/** What a Pulp pod needs to run as the identity. */
export interface PodIdentityRuntime {
  serviceAccountName: string;
  awsWebIdentity?: NonNullable<NonNullable<PulpConfig["serviceAccount"]>["awsWebIdentity"]>;
  /** The bucket's region: AWS_REGION, for the STS client boto3 makes. */
  region?: string;
}

/** Whether the config asks for an identity of their own. */
export function wantsIdentity(config: Pick<PulpConfig, "serviceAccount">): boolean {
  const account = config.serviceAccount;
  return (
    account !== undefined &&
    (Object.keys(account.annotations).length > 0 || account.awsWebIdentity !== undefined)
  );
}

/** The ServiceAccount `<instance>-pulp`, when pulp:serviceAccount asks for one. */
export class PodIdentity extends pulumi.ComponentResource {
  readonly runtime: PodIdentityRuntime;
  readonly serviceAccount: k8s.core.v1.ServiceAccount;

  constructor(
    name: string,
    args: { namespace: pulumi.Input<string>; identity: Identity; config: PulpConfig },
    opts?: pulumi.ComponentResourceOptions,
  ) {
    super("pulp:identity:PodIdentity", name, {}, opts);
    const serviceAccountName = fixedName(args.identity, "pulp");
    this.serviceAccount = new k8s.core.v1.ServiceAccount(
      name,
      {
        metadata: {
          name: serviceAccountName,
          namespace: args.namespace,
          labels: labels(args.identity, "identity"),
          annotations: args.config.serviceAccount?.annotations,
        },
        // Pods mount only the tokens they are given (the projected one below), never the API's.
        automountServiceAccountToken: false,
      },
      { parent: this },
    );
    this.runtime = {
      serviceAccountName,
      awsWebIdentity: args.config.serviceAccount?.awsWebIdentity,
      region: args.config.storage.s3?.region,
    };
    this.registerOutputs({});
  }
}

/** AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, as EKS's webhook sets them (boto3 reads both). */
export function identityEnv(id: PodIdentityRuntime | undefined): EnvVar[] {
  const web = id?.awsWebIdentity;
  if (!web) return [];
  return [
    { name: "AWS_ROLE_ARN", value: web.roleArn },
    { name: "AWS_WEB_IDENTITY_TOKEN_FILE", value: `${AWS_TOKEN_DIR}/token` },
    { name: "AWS_STS_REGIONAL_ENDPOINTS", value: "regional" },
    ...(id.region
      ? [
          { name: "AWS_REGION", value: id.region },
          { name: "AWS_DEFAULT_REGION", value: id.region },
        ]
      : []),
    ...(web.stsEndpointUrl ? [{ name: "AWS_ENDPOINT_URL_STS", value: web.stsEndpointUrl }] : []),
  ];
}

/** The projected ServiceAccount token for the audience AWS trusts (the kubelet renews it). */
export function identityVolumes(id: PodIdentityRuntime | undefined): Volume[] {
  const web = id?.awsWebIdentity;
  if (!web) return [];
  return [
    {
      name: AWS_TOKEN_VOLUME,
      projected: {
        defaultMode: 0o440,
        sources: [
          { serviceAccountToken: { audience: web.audience, expirationSeconds: 86400, path: "token" } },
        ],
      },
    },
  ];
}

export function identityMounts(id: PodIdentityRuntime | undefined): VolumeMount[] {
  return id?.awsWebIdentity ? [{ name: AWS_TOKEN_VOLUME, mountPath: AWS_TOKEN_DIR, readOnly: true }] : [];
}
