// Unit (Pulumi mocks for the render; plain Outputs for the rest): what a program may pass as an Output
// of another resource. Storage classes, the ingress host, its TLS Secret and annotation values reach the
// resources; a value that resolves badly fails with its argument path, without showing the value; values
// the plan is decided from (namespace, image, ...) are refused as Outputs before anything is created.
import * as pulumi from "@pulumi/pulumi";
import { asSecrets } from "../../../../components/config/load";
import { ArgsError, parseArgs } from "../../../../components/config/programArgs";
import { Pulp } from "../../../../components/pulp";
import { MINIMAL } from "../../helpers/configs";
import { runWithMocks } from "../../helpers/pulumiMocks";

type Inside<T> = { promise(): Promise<T>; isKnown: Promise<boolean>; isSecret: Promise<boolean> };
/** An Output's value, as the engine would resolve it (a rejection is the caller's, not left unhandled). */
const valueOf = <T>(value: pulumi.Input<T> | undefined) => {
  const output = pulumi.output(value) as unknown as Inside<T>;
  for (const side of [output.isKnown, output.isSecret]) side.catch(() => undefined);
  return output.promise();
};

const refusal = (run: () => unknown): ArgsError => {
  try {
    run();
  } catch (e) {
    if (e instanceof ArgsError) return e;
    throw e;
  }
  throw new Error("not refused");
};

test("Outputs are taken where a value only flows into resources, and resolve unchanged", async () => {
  const config = parseArgs({
    ...MINIMAL,
    ingress: {
      enabled: true,
      host: pulumi.output("pulp.team.example.com"),
      tlsSecretName: pulumi.output("pulp-tls"),
      annotations: { "cert-manager.io/cluster-issuer": pulumi.output("letsencrypt") },
    },
    storage: { pvc: { storageClass: pulumi.output("cephfs") } },
    dataVolumes: [
      { name: "seed", url: "https://example.com/seed.tar", size: "1Gi", storageClass: pulumi.output("ceph") },
    ],
  });
  expect(await valueOf(config.ingress.host)).toBe("pulp.team.example.com");
  expect(await valueOf(config.ingress.tlsSecretName)).toBe("pulp-tls");
  expect(await valueOf(config.ingress.annotations["cert-manager.io/cluster-issuer"])).toBe("letsencrypt");
  expect(await valueOf(config.storage.pvc?.storageClass)).toBe("cephfs");
  expect(await valueOf(config.dataVolumes[0].storageClass)).toBe("ceph");
});

test("an Output that resolves to a bad value fails with its argument path and the same rule, not the value", async () => {
  const config = parseArgs({
    ...MINIMAL,
    ingress: { enabled: true, host: pulumi.output("Not_A_Host") },
    storage: { pvc: { storageClass: pulumi.output("cephfs") } },
  });
  const error = await valueOf(config.ingress.host).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ArgsError);
  const [problem] = (error as ArgsError).problems;
  expect(problem.key).toBe("config.ingress.host");
  expect(problem.message).toMatch(/^must be a DNS-1123 subdomain/);
  expect((error as ArgsError).message).not.toContain("Not_A_Host");
  expect((error as ArgsError).message).toContain("given: (an Output's value, not shown)");
  expect((error as ArgsError).message).toContain("what takes this value was not created or changed");
  // The same rule as a plain value meets.
  expect(
    refusal(() => parseArgs({ ...MINIMAL, ingress: { enabled: true, host: "Not_A_Host" } })).problems[0]
      .message,
  ).toBe(problem.message.replace(/ \(the Output given .*\)$/, ""));
});

test.each([
  ["namespace", { namespace: pulumi.output("team-pulp") }, "config.namespace"],
  ["image", { image: pulumi.output("quay.io/pulp/pulp-minimal:3.123.1") }, "config.image"],
  [
    "ingress class",
    { ingress: { enabled: true, host: "pulp.example.com", className: pulumi.output("nginx") } },
    "config.ingress.className",
  ],
])("an Output where the plan needs the value (%s) is refused before anything is created", (_, raw, key) => {
  const error = refusal(() => parseArgs({ ...MINIMAL, ...raw }));
  expect(error.message).toContain("given: (an Output's value, not shown)");
  expect(error.problems.map((p) => [p.key, p.message])).toEqual([
    [key, expect.stringMatching(/^must be a plain value, not an Output/)],
  ]);
});

test("secrets: any Input<string>, each kept secret; those given as undefined are generated", async () => {
  const secrets = asSecrets({
    adminPassword: "from-a-string",
    secretKey: pulumi.output("from-an-output"),
    dbFieldsEncryptionKey: undefined,
  });
  expect(Object.keys(secrets).sort()).toEqual(["adminPassword", "secretKey"]);
  for (const value of Object.values(secrets)) {
    expect(await (value as unknown as { isSecret: Promise<boolean> }).isSecret).toBe(true);
  }
  expect(await valueOf(secrets.secretKey)).toBe("from-an-output");
});

test("rendered: the Ingress, its TLS and the artifact volume get the Outputs' values", async () => {
  const run = await runWithMocks({ config: {} }, async () => {
    const config = parseArgs({
      ...MINIMAL,
      ingress: {
        enabled: true,
        host: pulumi.output("pulp.team.example.com"),
        tlsSecretName: pulumi.output("pulp-tls"),
      },
      storage: { pvc: { storageClass: pulumi.output("cephfs") } },
    });
    await Pulp.create("pulp", {
      config,
      secrets: { adminPassword: pulumi.output("a-long-admin-password") },
      cluster: {},
    });
  });
  const [ingress] = run.ofType("kubernetes:networking.k8s.io/v1:Ingress");
  expect(ingress.inputs.spec.rules[0].host).toBe("pulp.team.example.com");
  expect(ingress.inputs.spec.tls).toEqual([{ hosts: ["pulp.team.example.com"], secretName: "pulp-tls" }]);
  const [artifacts] = run.ofType("kubernetes:core/v1:PersistentVolumeClaim");
  expect(artifacts.inputs.spec.storageClassName).toBe("cephfs");
  const [admin] = run
    .ofType("kubernetes:core/v1:Secret")
    .filter((s) => s.inputs.metadata.name === "pulp-admin-password");
  expect(admin.inputs.stringData.password).toBe("a-long-admin-password");
});
