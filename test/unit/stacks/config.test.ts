// The delivery config is refused with every problem at once, each naming the key, the value and the fix.
import { DeliveryConfigError, parseDeliveryConfig } from "../../../stacks/config";
import { DELIVERY, devDelivery } from "../helpers/delivery";

function problems(raw: Record<string, unknown>) {
  try {
    parseDeliveryConfig(raw);
  } catch (e) {
    if (e instanceof DeliveryConfigError) return e.problems;
    throw e;
  }
  throw new Error("accepted");
}

test("the committed dev delivery stack and the smallest config are valid", () => {
  expect(parseDeliveryConfig(devDelivery()).stackName).toBe("pulp-dev");
  expect(parseDeliveryConfig(DELIVERY).workspace.memoryLimit).toBe("3Gi");
});

test("required keys are named with the command that sets them", () => {
  const found = problems({});
  expect(found.map((p) => p.key).sort()).toEqual(
    ["delivery:backend", "delivery:projectRepo", "delivery:pulumiStack", "delivery:secretsProvider"].sort(),
  );
  const repo = found.find((p) => p.key === "delivery:projectRepo")!;
  expect(repo.message).toBe("is required");
  expect(repo.fix).toBe("pulumi config set delivery:projectRepo <value>");
});

test("an unknown key gets a did-you-mean", () => {
  const [p] = problems({ ...DELIVERY, projetRepo: "x" });
  expect(p).toMatchObject({
    key: "delivery:projetRepo",
    message: expect.stringMatching(/did you mean "projectRepo"/),
  });
});

test.each([
  [{ branch: undefined }, "delivery:branch", /exactly one of branch/],
  [{ commit: "0123456789abcdef0123456789abcdef01234567" }, "delivery:branch", /exactly one of branch/],
  [{ commit: "abc", branch: undefined }, "delivery:commit", /40-character/],
  [{ stackName: "x".repeat(43) }, "delivery:stackName", /at most 42/],
  [{ deliveryNamespace: "pulp" }, "delivery:deliveryNamespace", /must differ from pulpNamespace/],
  [{ secretsProvider: {} }, "delivery:secretsProvider", /exactly one of passphrase/],
  [{ preview: { enabled: true } }, "delivery:preview.branch", /required when preview.enabled/],
  [{ resyncFrequencySeconds: 30 }, "delivery:resyncFrequencySeconds", /60/],
  [
    { workspace: { memoryLimit: "2Gi", nodeMaxOldSpaceMb: 2560 } },
    "delivery:workspace.nodeMaxOldSpaceMb",
    /below workspace.memoryLimit/,
  ],
  [{ projectRepo: "not a url" }, "delivery:projectRepo", /https:\/\/ or ssh:\/\//],
  [
    { pulpConfig: { ...(DELIVERY.pulpConfig as object), createNamespace: true } },
    "delivery:pulpConfig.createNamespace",
    /set by the delivery program/,
  ],
])("%j is refused at %s", (change, key, message) => {
  const found = problems({ ...DELIVERY, ...change });
  expect(found.find((p) => p.key === key)).toMatchObject({ message: expect.stringMatching(message) });
});

test("the Pulp config is checked by the Pulp program's own validator, with delivery keys", () => {
  const found = problems({
    ...DELIVERY,
    pulpConfig: { database: { cloudnativepg: {} }, api: { replica: 2 } },
  });
  expect(found.map((p) => p.key)).toEqual(
    expect.arrayContaining(["delivery:pulpConfig.contentOrigin", "delivery:pulpConfig.api.replica"]),
  );
  expect(found.find((p) => p.key === "delivery:pulpConfig.api.replica")!.message).toMatch(
    /did you mean "replicas"/,
  );
});

test("the error message lists every problem with given and fix", () => {
  expect(() =>
    parseDeliveryConfig({ ...DELIVERY, resyncFrequencySeconds: 10, stackName: "Bad_Name" }),
  ).toThrow(
    /2 problems[\s\S]*delivery:stackName[\s\S]*given: "Bad_Name"[\s\S]*fix: +pulumi config set delivery:stackName/,
  );
});
