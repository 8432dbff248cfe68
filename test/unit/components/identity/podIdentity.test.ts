// Unit (Pulumi mocks): object storage without static keys. With pulp:serviceAccount, Pulp's own pods
// (api, content, worker, the migration Job) run as a ServiceAccount of their own; awsWebIdentity adds the
// projected token and the variables boto3 reads, as EKS's webhook would; no key reaches a Secret, an env
// var or settings.py. Without it, nothing changes (the dev stack snapshot holds that). The config rules
// that pair a key with its secret.
import { renderSettings } from "../../../../components/settings/render";
import { restrictedViolations } from "../../../../components/workload/podSecurity";
import { MINIMAL, problemsOf } from "../../helpers/configs";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";
import { CRONJOB, DEPLOYMENT, pulpProcesses, render, SECRET } from "../../helpers/render";

const KEYLESS = {
  ...MINIMAL,
  storage: { s3: { bucket: "pulp-artifacts", region: "eu-west-1" } },
  serviceAccount: {
    annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/pulp" },
    awsWebIdentity: {
      roleArn: "arn:aws:iam::123456789012:role/pulp",
      stsEndpointUrl: "https://sts.eu-west-1.amazonaws.com",
    },
  },
};

test("Pulp's pods run as <instance>-pulp with the projected token and AWS_ROLE_ARN; no key anywhere", async () => {
  const run = await render(KEYLESS);
  const [account] = run.ofType("kubernetes:core/v1:ServiceAccount");
  expect(account.inputs.metadata).toMatchObject({
    name: "pulp-pulp",
    annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/pulp" },
  });
  expect(account.inputs.automountServiceAccountToken).toBe(false);

  const pulpPods = pulpProcesses(run).map((r) => [
    r.inputs.metadata.name as string,
    r.inputs.spec.template.spec,
  ]);
  expect(pulpPods.map(([name]) => name)).toHaveLength(4);
  for (const [name, spec] of pulpPods) {
    expect({ name, account: spec.serviceAccountName }).toEqual({ name, account: "pulp-pulp" });
    expect(spec.volumes).toContainEqual({
      name: "aws-iam-token",
      projected: {
        defaultMode: 0o440,
        sources: [
          { serviceAccountToken: { audience: "sts.amazonaws.com", expirationSeconds: 86400, path: "token" } },
        ],
      },
    });
    const container = spec.containers[0];
    expect(container.volumeMounts).toContainEqual({
      name: "aws-iam-token",
      mountPath: "/var/run/secrets/eks.amazonaws.com/serviceaccount",
      readOnly: true,
    });
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value?: string }) => [e.name, e.value]),
    );
    expect(env).toMatchObject({
      AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/pulp",
      AWS_WEB_IDENTITY_TOKEN_FILE: "/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
      AWS_REGION: "eu-west-1",
      AWS_ENDPOINT_URL_STS: "https://sts.eu-west-1.amazonaws.com",
    });
    expect(Object.keys(env).filter((k) => /STORAGES__|AWS_ACCESS_KEY|AWS_SECRET/.test(k))).toEqual([]);
    expect({ name, violations: restrictedViolations(spec) }).toEqual({ name, violations: [] });
  }
  // Neither web nor Redis needs the identity.
  for (const d of run.ofType(DEPLOYMENT).filter((d) => /^pulp-(web|redis)$/.test(d.inputs.metadata.name))) {
    expect(d.inputs.spec.template.spec.serviceAccountName).toBeUndefined();
  }
  expect(run.ofType(SECRET).map((s) => s.inputs.metadata.name)).not.toContain("pulp-s3");
});

test("keyless backups: the backup pod runs as pulp-pulp and its upload takes the web identity; no key Secret", async () => {
  const run = await render({
    ...KEYLESS,
    backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:17", s3: { bucket: "pulp-backups" } },
  });
  const [cronJob] = run.ofType(CRONJOB);
  const spec = cronJob.inputs.spec.jobTemplate.spec.template.spec;
  expect(spec.serviceAccountName).toBe("pulp-pulp");
  expect(spec.volumes.map((v: { name: string }) => v.name)).toContain("aws-iam-token");
  const upload = spec.containers.find((c: { name: string }) => c.name === "upload");
  const env = Object.fromEntries(upload.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
  expect(env).toMatchObject({
    AWS_ROLE_ARN: KEYLESS.serviceAccount.awsWebIdentity.roleArn,
    S3_BUCKET: "pulp-backups",
  });
  expect(Object.keys(env).filter((k) => /AWS_ACCESS_KEY|AWS_SECRET/.test(k))).toEqual([]);
  expect(upload.volumeMounts.map((m: { name: string }) => m.name)).toContain("aws-iam-token");
  expect(run.ofType(SECRET).map((s) => s.inputs.metadata.name)).not.toContain("pulp-backup-s3");
  expect({ violations: restrictedViolations(spec) }).toEqual({ violations: [] });
});

test("settings.py names the bucket without a key; with a static key, the key", () => {
  const keyless = renderSettings({ ...SETTINGS_INPUT, s3: { bucket: "pulp-artifacts" } });
  expect(keyless).toContain('"bucket_name": "pulp-artifacts"');
  expect(keyless).not.toContain("access_key");
  expect(
    renderSettings({ ...SETTINGS_INPUT, s3: { bucket: "pulp-artifacts", accessKeyId: "AKIAEXAMPLE" } }),
  ).toContain('"access_key": "AKIAEXAMPLE"');
});

test("a key and its secret come together; keyless is valid alone and refused for a restore", () => {
  const s3 = { bucket: "pulp-artifacts" };
  expect(problemsOf({ storage: { s3 } })).toEqual([]);
  expect(problemsOf({ storage: { s3: { ...s3, accessKeyId: "AKIAEXAMPLE" } } })).toEqual([
    "pulp:storage.s3.accessKeyId: a static key needs its secret, pulp:s3SecretAccessKey (or leave the key out: the pods' identity, pulp:serviceAccount)",
  ]);
  expect(problemsOf({ storage: { s3 }, restore: { backup: "20261124T031500Z" } })).toContain(
    "pulp:storage.s3.accessKeyId: a restore into object storage reads the bucket with a static key, and none is set (a restore does not use pulp:serviceAccount yet)",
  );
  expect(
    problemsOf({ restore: { backup: "20261124T031500Z", s3: { bucket: "pulp-backups", size: "1Gi" } } }),
  ).toContain(
    "pulp:restore.s3.accessKeyId: a restore reads the backup's bucket with a static key (it does not use pulp:serviceAccount yet)",
  );
  expect(problemsOf({ serviceAccount: { awsWebIdentity: { roleArn: "pulp" } } })).toEqual([
    'pulp:serviceAccount.awsWebIdentity.roleArn: must be an IAM role ARN such as "arn:aws:iam::123456789012:role/pulp"',
  ]);
});
