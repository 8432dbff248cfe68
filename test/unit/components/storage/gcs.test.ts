// Unit (Pulumi mocks): artifacts in Google Cloud Storage (storage.gcs). settings.py names the bucket and
// folder and never a key. Without pulp:gcsCredentials the pods use their own identity and the redirects are
// signed by IAM signBlob; with it, the key is a file in api, content, worker and the migration Job
// (GOOGLE_APPLICATION_CREDENTIALS), from the Secret <instance>-gcs, and a new key rolls them. Real Pulp
// against fake-gcs-server: test/e2e/real/gcsStorage.test.ts.
import { renderSettings } from "../../../../components/settings/render";
import { GCS_KEY_DIR } from "../../../../components/storage/gcs";
import { configProblems, MINIMAL, problemsOf } from "../../helpers/configs";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";
import { DEPLOYMENT, pulpProcesses, render, SECRET } from "../../helpers/render";

const GCS = { bucket: "pulp-artifacts", location: "prod/pulp" };
const CONFIG = { ...MINIMAL, storage: { gcs: GCS } };
/** A key's shape, with a private key no one holds. */
const key = (email = "pulp@pulp-project.iam.gserviceaccount.com") =>
  JSON.stringify({
    type: "service_account",
    project_id: "pulp-project",
    client_email: email,
    private_key:
      "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC\n-----END PRIVATE KEY-----\n",
    token_uri: "https://oauth2.googleapis.com/token",
  });

type Env = { name: string; value?: string }[];
const envOf = (pod: { inputs: any }) => pod.inputs.spec.template.spec.containers[0].env as Env;

test("settings.py names the bucket and folder, signs redirects for 60 s, by IAM without a key", () => {
  const keyless = renderSettings({ ...SETTINGS_INPUT, gcs: { ...GCS, keyed: false } });
  expect(keyless).toContain('MEDIA_ROOT = ""');
  expect(keyless).toContain('"BACKEND": "storages.backends.gcloud.GoogleCloudStorage"');
  for (const option of [
    '"bucket_name": "pulp-artifacts"',
    '"location": "prod/pulp"',
    '"expiration": 60',
    '"iam_sign_blob": True',
    '"file_overwrite": True',
  ]) {
    expect(keyless).toContain(option);
  }
  const keyed = renderSettings({
    ...SETTINGS_INPUT,
    gcs: { bucket: "pulp-artifacts", projectId: "pulp-project", keyed: true },
  });
  expect(keyed).toContain('"project_id": "pulp-project"');
  expect(keyed).not.toMatch(/iam_sign_blob|"location"|credentials/);
  expect(
    renderSettings({
      ...SETTINGS_INPUT,
      gcs: { ...GCS, signingServiceAccount: "signer@p.iam.gserviceaccount.com", keyed: false },
    }),
  ).toContain('"sa_email": "signer@p.iam.gserviceaccount.com"');
});

test("without a key: no Secret, no key file; the pods run as pulp:serviceAccount's Workload Identity", async () => {
  const run = await render({
    ...CONFIG,
    serviceAccount: {
      annotations: { "iam.gke.io/gcp-service-account": "pulp@pulp-project.iam.gserviceaccount.com" },
    },
  });
  expect(run.ofType(SECRET).filter((s) => s.inputs.metadata.name === "pulp-gcs")).toEqual([]);
  const pods = pulpProcesses(run);
  expect(pods).toHaveLength(4);
  for (const pod of pods) {
    expect(envOf(pod).map((e) => e.name)).not.toContain("GOOGLE_APPLICATION_CREDENTIALS");
    expect(pod.inputs.spec.template.spec.serviceAccountName).toBe("pulp-pulp");
    expect(pod.inputs.spec.template.spec.volumes).toContainEqual({
      name: "pulp-data",
      emptyDir: { sizeLimit: "20Gi" },
    });
  }
  expect(run.ofType("kubernetes:core/v1:PersistentVolumeClaim")).toEqual([]);
});

test("with a key: a file from the Secret <instance>-gcs in every Pulp pod, never in settings or env", async () => {
  const run = await render(
    { ...CONFIG, storage: { gcs: { ...GCS, endpointUrl: "http://10.0.0.1:4443/" } } },
    { gcsCredentials: key() },
  );
  const secret = run.ofType(SECRET).find((s) => s.inputs.metadata.name === "pulp-gcs")!;
  expect(JSON.parse(secret.inputs.stringData["credentials.json"]).client_email).toBe(
    "pulp@pulp-project.iam.gserviceaccount.com",
  );
  const pods = pulpProcesses(run);
  expect(pods).toHaveLength(4);
  for (const pod of pods) {
    const spec = pod.inputs.spec.template.spec;
    expect(envOf(pod)).toEqual(
      expect.arrayContaining([
        { name: "GOOGLE_APPLICATION_CREDENTIALS", value: `${GCS_KEY_DIR}/credentials.json` },
        { name: "API_ENDPOINT_OVERRIDE", value: "http://10.0.0.1:4443" },
      ]),
    );
    expect(spec.volumes).toContainEqual({
      name: "gcs-key",
      secret: {
        secretName: "pulp-gcs",
        items: [{ key: "credentials.json", path: "credentials.json" }],
        defaultMode: 0o440,
      },
    });
    expect(spec.containers[0].volumeMounts).toContainEqual({
      name: "gcs-key",
      mountPath: GCS_KEY_DIR,
      readOnly: true,
    });
    expect(JSON.stringify(spec)).not.toContain("PRIVATE KEY");
  }
  const settings = run.ofType(SECRET).filter((s) => /^pulp-settings-/.test(s.inputs.metadata.name));
  expect(settings).toHaveLength(1);
  expect(JSON.stringify(settings[0].inputs)).not.toContain("PRIVATE KEY");
});

test("a new key rolls the pods (google-auth reads the file once per process)", async () => {
  const hash = async (k: string) =>
    (await render(CONFIG, { gcsCredentials: k }))
      .ofType(DEPLOYMENT)
      .find((d) => d.inputs.metadata.name === "pulp-api")!.inputs.spec.template.metadata.annotations[
      "pulp.pulpproject.org/config-hash"
    ];
  expect(await hash(key())).not.toBe(await hash(key("rotated@pulp-project.iam.gserviceaccount.com")));
});

test("storage.gcs: one storage at a time, names Google accepts, a key only with it, and a key that is a key", () => {
  expect(configProblems({ storage: { gcs: GCS } })).toEqual([]);
  expect(configProblems({ storage: { gcs: GCS } }, { gcsCredentials: key() })).toEqual([]);
  expect(configProblems({}, { gcsCredentials: key() }).map((p) => [p.key, p.message, p.fix])).toEqual([
    ["pulp:gcsCredentials", "is set, but pulp:storage.gcs is not", "pulumi config rm pulp:gcsCredentials"],
  ]);
  expect(
    configProblems({ storage: { s3: { bucket: "pulp" }, gcs: GCS } }).map((p) => [
      p.key,
      p.message,
      p.fix,
      p.alternatives,
    ]),
  ).toEqual([
    [
      "pulp:storage",
      "sets storage.s3 and storage.gcs; artifacts live in one place",
      "pulumi config rm --path 'pulp:storage.s3'",
      ["pulumi config rm --path 'pulp:storage.gcs'"],
    ],
  ]);
  expect(
    problemsOf({
      storage: {
        gcs: { bucket: "Pulp_", location: "/x/", projectId: "1x", signingServiceAccount: "nobody" },
      },
    }),
  ).toEqual(
    expect.arrayContaining([
      "pulp:storage.gcs.bucket: must be a bucket name: 3 to 63 lowercase letters, digits, dots, hyphens and underscores, beginning and ending with a letter or digit",
      'pulp:storage.gcs.location: must be a path without a leading or trailing "/", such as "pulp/prod"',
      'pulp:storage.gcs.projectId: must be a project ID such as "my-project-123"',
      'pulp:storage.gcs.signingServiceAccount: must be a service account\'s email such as "pulp@my-project.iam.gserviceaccount.com"',
    ]),
  );
  expect(
    configProblems(
      { storage: { gcs: { ...GCS, signingServiceAccount: "s@p.iam.gserviceaccount.com" } } },
      { gcsCredentials: key() },
    ).map((p) => [p.key, p.message, p.fix]),
  ).toEqual([
    [
      "pulp:storage.gcs.signingServiceAccount",
      "names who signs the redirects without a key, but pulp:gcsCredentials is a key: the redirects are signed with it",
      "pulumi config rm --path 'pulp:storage.gcs.signingServiceAccount'",
    ],
  ]);
  // A restore's check reads the bucket with the key: without one it is refused before anything changes.
  const restore = { backup: "20261129T030000Z", claim: "pulp-backups" };
  expect(problemsOf({ storage: { gcs: GCS }, restore, backup: { image: "postgres:16.4" } })).toContain(
    "pulp:storage.gcs: a restore into object storage reads the bucket with a service account key, and pulp:gcsCredentials is not set (a restore does not use pulp:serviceAccount yet)",
  );
});

test("a key that is not a service account key is refused without showing it", () => {
  for (const [value, says] of [
    ["not json -----BEGIN PRIVATE KEY----- hush", "the value is not JSON"],
    [
      JSON.stringify({ type: "authorized_user", refresh_token: "hush-token" }),
      'its "type" is not "service_account"',
    ],
    [
      JSON.stringify({ type: "service_account", private_key: "hush-pem" }),
      "it has no client_email, token_uri",
    ],
  ]) {
    const problems = configProblems({ storage: { gcs: GCS } }, { gcsCredentials: value });
    expect(problems.map((p) => p.key)).toEqual(["pulp:gcsCredentials"]);
    expect(problems[0].message).toContain(says);
    expect(JSON.stringify(problems)).not.toMatch(/hush/);
    expect(problems[0].fix).toBe("pulumi config set --secret pulp:gcsCredentials < key.json");
  }
});
