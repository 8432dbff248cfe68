// The identity Pulp's own pods run as (pulp:serviceAccount): object storage reached without static keys.
// A ServiceAccount of their own carries what a cloud's webhook reads (EKS IRSA, GKE Workload Identity, AKS
// workload identity); `awsWebIdentity` and `azureWorkloadIdentity` do in the pod spec what EKS's and AKS's
// webhooks would, for clusters without them.
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
/** Where AKS's workload identity webhook mounts the token (AZURE_FEDERATED_TOKEN_FILE names it). */
export const AZURE_TOKEN_DIR = "/var/run/secrets/azure/tokens";
const AZURE_TOKEN_VOLUME = "azure-identity-token";
/** The pod label AKS's webhook mutates on (storage.azure without a key sets it). */
export const AZURE_USE_LABEL = "azure.workload.identity/use";

type ServiceAccountConfig = NonNullable<PulpConfig["serviceAccount"]>;

/** What a Pulp pod needs to run as the identity. */
export interface PodIdentityRuntime {
  serviceAccountName: string;
  awsWebIdentity?: ServiceAccountConfig["awsWebIdentity"];
  azureWorkloadIdentity?: ServiceAccountConfig["azureWorkloadIdentity"];
  /** The bucket's region: AWS_REGION, for the STS client boto3 makes. */
  region?: string;
}

/** Whether the config asks for an identity of their own. */
export function wantsIdentity(config: Pick<PulpConfig, "serviceAccount">): boolean {
  const account = config.serviceAccount;
  return (
    account !== undefined &&
    (Object.keys(account.annotations).length > 0 ||
      account.awsWebIdentity !== undefined ||
      account.azureWorkloadIdentity !== undefined)
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
      azureWorkloadIdentity: args.config.serviceAccount?.azureWorkloadIdentity,
      region: args.config.storage.s3?.region,
    };
    this.registerOutputs({});
  }
}

/**
 * AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, as EKS's webhook sets them (boto3 reads both); the AZURE_*
 * variables, as AKS's webhook sets them (the settings' credential reads them: settings/azureIdentity.ts).
 */
export function identityEnv(id: PodIdentityRuntime | undefined): EnvVar[] {
  return [...awsEnv(id), ...azureEnv(id)];
}

function azureEnv(id: PodIdentityRuntime | undefined): EnvVar[] {
  const azure = id?.azureWorkloadIdentity;
  if (!azure) return [];
  return [
    { name: "AZURE_CLIENT_ID", value: azure.clientId },
    { name: "AZURE_TENANT_ID", value: azure.tenantId },
    { name: "AZURE_FEDERATED_TOKEN_FILE", value: `${AZURE_TOKEN_DIR}/${AZURE_TOKEN_VOLUME}` },
    { name: "AZURE_AUTHORITY_HOST", value: azure.authorityHost },
  ];
}

function awsEnv(id: PodIdentityRuntime | undefined): EnvVar[] {
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

/** A projected ServiceAccount token for an audience (the kubelet renews it). */
const tokenVolume = (name: string, audience: string, expirationSeconds: number, file: string): Volume => ({
  name,
  projected: {
    defaultMode: 0o440,
    sources: [{ serviceAccountToken: { audience, expirationSeconds, path: file } }],
  },
});

/** The projected tokens for the audiences AWS and Entra ID trust, with the lifetimes their webhooks give. */
export function identityVolumes(id: PodIdentityRuntime | undefined): Volume[] {
  return [
    ...(id?.awsWebIdentity
      ? [tokenVolume(AWS_TOKEN_VOLUME, id.awsWebIdentity.audience, 86400, "token")]
      : []),
    ...(id?.azureWorkloadIdentity
      ? [tokenVolume(AZURE_TOKEN_VOLUME, id.azureWorkloadIdentity.audience, 3600, AZURE_TOKEN_VOLUME)]
      : []),
  ];
}

export function identityMounts(id: PodIdentityRuntime | undefined): VolumeMount[] {
  return [
    ...(id?.awsWebIdentity ? [{ name: AWS_TOKEN_VOLUME, mountPath: AWS_TOKEN_DIR, readOnly: true }] : []),
    ...(id?.azureWorkloadIdentity
      ? [{ name: AZURE_TOKEN_VOLUME, mountPath: AZURE_TOKEN_DIR, readOnly: true }]
      : []),
  ];
}
