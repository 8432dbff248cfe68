// Unit (plain parseConfig calls; rendering under Pulumi mocks): pulp:secretSettings, Pulp settings read from
// keys of the user's own Secrets. On real Pulp: test/e2e/real/pulp.test.ts, the settings-change test.
import { configProblems, MINIMAL } from "../../helpers/configs";
import { DEPLOYMENT, JOB, render, SECRET } from "../../helpers/render";

const KEYCLOAK = { SOCIAL_AUTH_KEYCLOAK_SECRET: { secretName: "keycloak", key: "client-secret" } };

test("a setting the program sets, or one also in extraSettings, is refused; names and keys are checked", () => {
  const problems = (secretSettings: object, extra: object = {}) =>
    configProblems({ secretSettings, extraSettings: extra }).map((p) => [
      p.key,
      p.fix,
      ...(p.alternatives ?? []),
    ]);
  expect(problems({ DATABASES__default__PASSWORD: { secretName: "db", key: "password" } })).toEqual([
    [
      "pulp:secretSettings.DATABASES__default__PASSWORD",
      "pulumi config rm --path 'pulp:secretSettings.DATABASES__default__PASSWORD'",
    ],
  ]);
  expect(problems(KEYCLOAK, { SOCIAL_AUTH_KEYCLOAK_SECRET: "plain" })).toEqual([
    [
      "pulp:secretSettings.SOCIAL_AUTH_KEYCLOAK_SECRET",
      "pulumi config rm --path 'pulp:secretSettings.SOCIAL_AUTH_KEYCLOAK_SECRET'",
      "pulumi config rm --path 'pulp:extraSettings.SOCIAL_AUTH_KEYCLOAK_SECRET'",
    ],
  ]);
  expect(problems({ lower: { secretName: "s", key: "k" } })[0][0]).toBe("pulp:secretSettings.lower");
  expect(problems({ X: { secretName: "Not_A_Name", key: "k" } })[0][0]).toBe(
    "pulp:secretSettings.X.secretName",
  );
  expect(problems({ X: { secretName: "s", key: "a/b" } })[0][0]).toBe("pulp:secretSettings.X.key");
  expect(problems({ STORAGES__default__OPTIONS__sas_token: { secretName: "s", key: "k" } })).toEqual([
    [
      "pulp:secretSettings.STORAGES__default__OPTIONS__sas_token",
      "pulumi config rm --path 'pulp:secretSettings.STORAGES__default__OPTIONS__sas_token'",
    ],
  ]);
  expect(problems(KEYCLOAK)).toEqual([]);
});

test("every Pulp process and the migration Job read it from the Secret as a string; settings.py never holds it", async () => {
  const run = await render({ ...MINIMAL, secretSettings: KEYCLOAK });
  const expected = [
    {
      name: "SECRET_SOCIAL_AUTH_KEYCLOAK_SECRET",
      valueFrom: { secretKeyRef: { name: "keycloak", key: "client-secret" } },
    },
    { name: "PULP_SOCIAL_AUTH_KEYCLOAK_SECRET", value: "@str $(SECRET_SOCIAL_AUTH_KEYCLOAK_SECRET)" },
  ];
  for (const d of run
    .ofType(DEPLOYMENT)
    .filter((x) => /pulp-(api|content|worker)$/.test(x.inputs.metadata.name))) {
    const env = d.inputs.spec.template.spec.containers[0].env;
    expect({
      name: d.inputs.metadata.name,
      env: env.filter((e: { name: string }) => /KEYCLOAK/.test(e.name)),
    }).toEqual({
      name: d.inputs.metadata.name,
      env: expected,
    });
  }
  const migration = run.ofType(JOB).find((j) => j.inputs.metadata.name.startsWith("pulp-migrate-"))!;
  expect(migration.inputs.spec.template.spec.containers[0].env).toEqual(expect.arrayContaining(expected));
  const settings = run.ofType(SECRET).find((x) => x.inputs.metadata.name.startsWith("pulp-settings-"))!.inputs
    .stringData["settings.py"];
  expect(settings).toMatch(/^CONTENT_ORIGIN = /m);
  expect(settings).not.toMatch(/KEYCLOAK/);
});

test("a new setting from a Secret is a new migration Job; an install without any keeps its Job", async () => {
  const jobName = async (raw: Record<string, unknown>) =>
    (await render(raw)).ofType(JOB).find((j) => j.inputs.metadata.name.startsWith("pulp-migrate-"))!.inputs
      .metadata.name;
  const plain = await jobName(MINIMAL);
  expect(await jobName({ ...MINIMAL, secretSettings: {} })).toBe(plain);
  expect(await jobName({ ...MINIMAL, secretSettings: KEYCLOAK })).not.toBe(plain);
});
