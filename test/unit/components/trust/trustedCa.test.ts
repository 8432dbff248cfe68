// Unit: `pulp:trustedCa` validated as plain parseConfig calls, then rendered under Pulumi mocks
// (test/unit/helpers/pulumiMocks.ts). The real proof (Pulp syncing from an HTTPS server with a
// self-signed CA) is test/e2e/real/trustedCa.test.ts.
import { CONFIG_HASH_ANNOTATION } from "../../../../components/contract";
import { CA, MINIMAL, problemsOf } from "../../helpers/configs";
import { DEPLOYMENT, JOB, podSpecs, render } from "../../helpers/render";

// A throwaway self-signed CA made for this test (its key was never kept).

const problems = (trustedCa: unknown) => problemsOf({ trustedCa });

const byName = (list: any[] | undefined, name: string) => list?.find((x) => x.name === name);

test("certificates: a ConfigMap, and api, content and worker build a bundle and point OpenSSL at it", async () => {
  const run = await render({
    ...MINIMAL,
    web: { enabled: true },
    redis: { enabled: true },
    trustedCa: { certificates: CA },
  });
  const configMap = run.k8s("ConfigMap", "pulp-trusted-ca");
  expect(configMap.inputs.data).toEqual({ "ca.crt": CA });
  for (const [what, spec] of podSpecs(run)) {
    const s = spec as any;
    const trusts = byName(s.initContainers, "ca-bundle") !== undefined;
    expect({ what, trusts }).toEqual({
      what,
      trusts: ["api", "content", "worker"].some((p) => what.endsWith(p)),
    });
    if (!trusts) continue;
    expect(byName(s.volumes, "trusted-ca")).toEqual({
      name: "trusted-ca",
      configMap: { name: "pulp-trusted-ca" },
    });
    const main = s.containers[0];
    expect(byName(main.env, "SSL_CERT_FILE")).toEqual({
      name: "SSL_CERT_FILE",
      value: "/etc/pulp/ca-bundle/ca-bundle.crt",
    });
    expect(byName(main.volumeMounts, "ca-bundle")).toMatchObject({
      mountPath: "/etc/pulp/ca-bundle",
      readOnly: true,
    });
  }
});

test("certificates roll the pods when they change; an install without them keeps its config hash", async () => {
  const hash = async (config: Record<string, unknown>) =>
    (await render(config)).k8s("Deployment", "pulp-api").inputs.spec.template.metadata.annotations[
      CONFIG_HASH_ANNOTATION
    ];
  const without = await hash(MINIMAL);
  const withCa = await hash({ ...MINIMAL, trustedCa: { certificates: CA } });
  const withTwo = await hash({ ...MINIMAL, trustedCa: { certificates: `${CA}\n${CA}` } });
  expect(new Set([without, withCa, withTwo]).size).toBe(3);
  // The migration Job does not fetch anything: its name (and so whether migrations run again) stays.
  const jobName = async (config: Record<string, unknown>) =>
    (await render(config)).ofType(JOB)[0].inputs.metadata.name;
  expect(await jobName({ ...MINIMAL, trustedCa: { certificates: CA } })).toBe(await jobName(MINIMAL));
});

test("configMap: an existing ConfigMap is mounted and none is made", async () => {
  const run = await render({ ...MINIMAL, trustedCa: { configMap: "corporate-ca" } });
  expect(run.ofType("kubernetes:core/v1:ConfigMap").map((c) => c.name)).not.toContain("pulp-trusted-ca");
  const spec = run.k8s("Deployment", "pulp-worker").inputs.spec.template.spec;
  expect(byName(spec.volumes, "trusted-ca")).toEqual({
    name: "trusted-ca",
    configMap: { name: "corporate-ca" },
  });
  expect(run.ofType(DEPLOYMENT).length).toBeGreaterThan(0);
});

test("bad trustedCa values are named, with the reason, and the PEM text is never echoed", () => {
  expect(problems({ certificates: "not a certificate" })).toEqual([
    expect.stringMatching(/^pulp:trustedCa\.certificates: must be PEM certificates/),
  ]);
  const lines = CA.split("\n");
  const broken = [lines[0], `AAAA${lines[1].slice(4, 40)}`, ...lines.slice(2)].join("\n");
  const [problem] = problems({ certificates: broken });
  expect(problem).toMatch(/certificate 1 of 1 does not parse/);
  expect(problem).not.toContain(broken.split("\n")[1]);
  expect(problems({ certificates: CA, configMap: "x" })).toEqual([
    expect.stringMatching(/^pulp:trustedCa: must set one of certificates .* not both/),
  ]);
  expect(problems({ configMap: "Not_A_Name" })).toEqual([
    expect.stringMatching(/^pulp:trustedCa\.configMap: must be/),
  ]);
});
