// The Stack custom resource (pulumi.com/v1, PKO v2) as a plain object: pure, so unit tests check it
// against the real CRD schema without a cluster. Every field name here is in test/fixtures/crds.
import { parseConfig } from "../components/config/parse";
import { DeliveryConfig, SecretKeyRef } from "./config";

export const STACK_API_VERSION = "pulumi.com/v1";

export interface StackVariant {
  /** metadata.name of the CR (at most 42 characters: the CRD's own rule). */
  name: string;
  /** Only `pulumi preview`, never an update (spec.preview). */
  preview: boolean;
  branch?: string;
  commit?: string;
}

const secretRef = (ref: SecretKeyRef) => ({ type: "Secret", secret: { name: ref.secretName, key: ref.key } });

/**
 * Stack config for the Pulp program: the delivery program owns the namespace, so the workspace never
 * creates one. Objects and arrays stay structured (PKO >= 2.3 "structured configuration"): Pulumi.yaml
 * declares e.g. `database` as `type: object`, and the CLI refuses a JSON string there ("must be of type
 * 'object'", found by the e2e test). Scalars are strings, as `pulumi config set` writes them.
 */
export function pulpStackConfig(config: DeliveryConfig): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config.pulpConfig)) {
    result[`pulp:${key}`] = value !== null && typeof value === "object" ? value : String(value);
  }
  result["pulp:namespace"] = config.pulpNamespace;
  result["pulp:createNamespace"] = "false";
  // The workspace may not grant anything (no Roles); the delivery program grants the router's access.
  if (routeCertificate(config)) {
    result["pulp:ingress"] = { ...(config.pulpConfig.ingress as object), routerAccess: false };
  }
  return result;
}

/**
 * The Secret OpenShift's router must read when the Pulp program's Routes carry a certificate of their own
 * (`ingress.kind: Route` with `tlsSecretName`), and the instance whose Routes they are.
 */
export function routeCertificate(
  config: DeliveryConfig,
): { secretName: string; instance: string } | undefined {
  const pulp = parseConfig({ ...config.pulpConfig, namespace: config.pulpNamespace, createNamespace: false });
  const { ingress } = pulp;
  if (!ingress.enabled || ingress.kind !== "Route" || typeof ingress.tlsSecretName !== "string")
    return undefined;
  return { secretName: ingress.tlsSecretName, instance: pulp.instanceName };
}

export function stackSpec(
  config: DeliveryConfig,
  variant: StackVariant,
  serviceAccountName: string,
  labels: Record<string, string>,
) {
  const envRefs: Record<string, unknown> = { PULUMI_BACKEND_URL: secretRef(config.backend) };
  if (config.secretsProvider.passphrase) {
    envRefs.PULUMI_CONFIG_PASSPHRASE = secretRef(config.secretsProvider.passphrase);
  }
  for (const [name, ref] of Object.entries(config.env)) envRefs[name] = secretRef(ref);
  const ws = config.workspace;
  return {
    apiVersion: STACK_API_VERSION,
    kind: "Stack",
    metadata: { name: variant.name, namespace: config.deliveryNamespace, labels },
    spec: {
      stack: config.pulumiStack,
      projectRepo: config.projectRepo,
      ...(variant.commit ? { commit: variant.commit } : { branch: variant.branch }),
      repoDir: config.repoDir,
      ...(config.gitAuth ? { gitAuth: { accessToken: secretRef(config.gitAuth.accessToken) } } : {}),
      envRefs,
      ...(config.secretsProvider.provider ? { secretsProvider: config.secretsProvider.provider } : {}),
      config: pulpStackConfig(config),
      serviceAccountName,
      resyncFrequencySeconds: config.resyncFrequencySeconds,
      // Deleting the CR must never delete Pulp (its volumes and database): destroy is a deliberate act.
      destroyOnFinalize: false,
      // A held lock stops with Stalled/UpdateConflict and a clear status instead of silent retries.
      retryOnUpdateConflict: false,
      // The pod stays after an update: `kubectl exec` into it is the seed's troubleshooting path.
      workspaceReclaimPolicy: "Retain",
      ...(variant.preview ? { preview: true } : {}),
      workspaceTemplate: {
        metadata: { labels },
        spec: {
          image: ws.image,
          securityProfile: "restricted",
          // The CRD has no spec.pulumiLogLevel (the troubleshooting page's example is rejected): it is here.
          pulumiLogLevel: ws.pulumiLogLevel,
          resources: {
            requests: { cpu: ws.cpuRequest, memory: ws.memoryRequest },
            limits: { memory: ws.memoryLimit },
          },
          env: [{ name: "NODE_OPTIONS", value: `--max-old-space-size=${ws.nodeMaxOldSpaceMb}` }],
        },
      },
    },
  };
}

/** The production Stack and, when enabled, the preview-only Stack for pull requests. */
export function stackVariants(config: DeliveryConfig): StackVariant[] {
  const variants: StackVariant[] = [
    { name: config.stackName, preview: false, branch: config.branch, commit: config.commit },
  ];
  if (config.preview.enabled) {
    variants.push({ name: previewName(config.stackName), preview: true, branch: config.preview.branch });
  }
  return variants;
}

/** `<name>-preview`, kept within the CRD's 42 characters. */
export function previewName(stackName: string): string {
  return `${stackName.slice(0, 42 - "-preview".length).replace(/-+$/, "")}-preview`;
}
