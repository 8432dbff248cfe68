// Unit (Pulumi mocks): artifacts in Azure Blob Storage (storage.azure). settings.py names the account and
// container and never the key; the key reaches api, content, worker and the migration Job in a connection
// string from the Secret <instance>-azure, as a dynaconf setting; a new key rolls them; the config rules
// pair storage.azure with pulp:azureAccountKey or an identity (azureIdentity.test.ts). Real Pulp against
// Azurite: test/e2e/real/azureStorage.test.ts.
import { azureConnectionString } from "../../../../components/storage/artifactStorage";
import { renderSettings } from "../../../../components/settings/render";
import { configProblems, MINIMAL, problemsOf } from "../../helpers/configs";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";
import { DEPLOYMENT, pulpProcesses, render, SECRET } from "../../helpers/render";

// The storage emulator's published key (Azurite's devstoreaccount1): a valid key, no one's secret.
const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const AZURE = { accountName: "pulpartifacts", container: "pulp", location: "prod/pulp" };
const CONFIG = { ...MINIMAL, storage: { azure: AZURE } };

test("settings.py names the account, container and folder, signs redirects for 60 s, and holds no key", () => {
  const text = renderSettings({ ...SETTINGS_INPUT, azure: AZURE });
  expect(text).toContain('MEDIA_ROOT = ""');
  expect(text).toContain('"BACKEND": "storages.backends.azure_storage.AzureStorage"');
  for (const option of [
    '"account_name": "pulpartifacts"',
    '"azure_container": "pulp"',
    '"location": "prod/pulp"',
    '"expiration_secs": 60',
    '"overwrite_files": True',
  ]) {
    expect(text).toContain(option);
  }
  expect(text).not.toMatch(/account_key|connection_string|AccountKey/);
  expect(
    renderSettings({ ...SETTINGS_INPUT, azure: { accountName: "a1b", container: "pulp" } }),
  ).not.toContain('"location"');
});

test("the connection string names the endpoint: Azure's public one by default, or the one configured", () => {
  expect(azureConnectionString(AZURE, KEY)).toBe(
    `DefaultEndpointsProtocol=https;AccountName=pulpartifacts;AccountKey=${KEY};` +
      "BlobEndpoint=https://pulpartifacts.blob.core.windows.net",
  );
  expect(
    azureConnectionString({ ...AZURE, endpointUrl: "http://10.0.0.1:10000/devstoreaccount1/" }, KEY),
  ).toBe(
    `DefaultEndpointsProtocol=http;AccountName=pulpartifacts;AccountKey=${KEY};` +
      "BlobEndpoint=http://10.0.0.1:10000/devstoreaccount1",
  );
});

test("the key reaches Pulp's pods from the Secret <instance>-azure as a setting, and nowhere else", async () => {
  const run = await render(CONFIG, { azureAccountKey: KEY });
  const secret = run.ofType(SECRET).find((s) => s.inputs.metadata.name === "pulp-azure")!;
  expect(secret.inputs.stringData.connection_string).toContain(`AccountKey=${KEY};`);
  const pods = pulpProcesses(run);
  expect(pods).toHaveLength(4);
  for (const pod of pods) {
    const env = pod.inputs.spec.template.spec.containers[0].env as {
      name: string;
      value?: string;
      valueFrom?: { secretKeyRef: { name: string; key: string } };
    }[];
    expect(env).toContainEqual({
      name: "SECRET_STORAGES__default__OPTIONS__connection_string",
      valueFrom: { secretKeyRef: { name: "pulp-azure", key: "connection_string" } },
    });
    expect(env).toContainEqual({
      name: "PULP_STORAGES__default__OPTIONS__connection_string",
      value: "@str $(SECRET_STORAGES__default__OPTIONS__connection_string)",
    });
    expect(JSON.stringify(env)).not.toContain(KEY);
    // The working directory is the pod's own scratch space: nothing to share once artifacts are in the container.
    expect(pod.inputs.spec.template.spec.volumes).toContainEqual({
      name: "pulp-data",
      emptyDir: { sizeLimit: "20Gi" },
    });
  }
  expect(run.ofType("kubernetes:core/v1:PersistentVolumeClaim")).toEqual([]);
  const settings = run.ofType(SECRET).filter((s) => /^pulp-settings-/.test(s.inputs.metadata.name));
  expect(settings).toHaveLength(1);
  expect(JSON.stringify(settings[0].inputs)).not.toContain(KEY);
});

test("a new key rolls the pods (the connection string is read when a container starts)", async () => {
  const hash = async (key: string) =>
    (await render(CONFIG, { azureAccountKey: key }))
      .ofType(DEPLOYMENT)
      .find((d) => d.inputs.metadata.name === "pulp-api")!.inputs.spec.template.metadata.annotations[
      "pulp.pulpproject.org/config-hash"
    ];
  const rotated = Buffer.from("another-account-key-".repeat(4).slice(0, 64)).toString("base64");
  expect(await hash(KEY)).not.toBe(await hash(rotated));
});

test("storage.azure and its key come together, one storage at a time, with names Azure accepts", () => {
  expect(configProblems({ storage: { azure: AZURE } }, { azureAccountKey: KEY })).toEqual([]);
  expect(problemsOf({ storage: { azure: AZURE } })).toEqual([
    "pulp:storage.azure: has no key (pulp:azureAccountKey), and the pods have no Azure workload identity to sign in with: set the key, or name the identity AKS's webhook gives them (its client ID, in pulp:serviceAccount's annotations)",
  ]);
  expect(configProblems({}, { azureAccountKey: KEY }).map((p) => [p.key, p.message, p.fix])).toEqual([
    [
      "pulp:azureAccountKey",
      "is set, but pulp:storage.azure is not",
      "pulumi config rm pulp:azureAccountKey",
    ],
  ]);
  const both = configProblems(
    { storage: { s3: { bucket: "pulp" }, azure: AZURE } },
    { azureAccountKey: KEY },
  );
  expect(both.map((p) => [p.key, p.message, p.fix, p.alternatives])).toEqual([
    [
      "pulp:storage",
      "sets storage.s3 and storage.azure; artifacts live in one place",
      "pulumi config rm --path 'pulp:storage.s3'",
      ["pulumi config rm --path 'pulp:storage.azure'"],
    ],
  ]);
  expect(
    problemsOf({ storage: { azure: { accountName: "Pulp_Store", container: "-pulp", location: "/x/" } } }),
  ).toEqual(
    expect.arrayContaining([
      "pulp:storage.azure.accountName: must be a storage account name: 3 to 24 lowercase letters and digits",
      "pulp:storage.azure.container: must be a container name: 3 to 63 lowercase letters, digits and single hyphens, beginning and ending with a letter or digit",
      'pulp:storage.azure.location: must be a path without a leading or trailing "/", such as "pulp/prod"',
    ]),
  );
});

test("a key that is not an account key is refused without showing it", () => {
  const problems = configProblems({ storage: { azure: AZURE } }, { azureAccountKey: "abc;AccountName=evil" });
  expect(problems.map((p) => p.key)).toEqual(["pulp:azureAccountKey"]);
  expect(JSON.stringify(problems)).not.toContain("evil");
  expect(problems[0].message).toContain("88 characters of base64");
});
