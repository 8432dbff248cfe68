// Unit under Pulumi mocks: the pulp-web Deployment as the program renders it from `pulp:web` config.
import { MINIMAL } from "../../helpers/configs";
import { render } from "../../helpers/render";

const webContainer = async (web: Record<string, unknown>) =>
  (await render({ ...MINIMAL, web: { enabled: true, ...web } })).k8s("Deployment", "pulp-web").inputs.spec
    .template.spec.containers[0];

test("web.probes.startup takes effect: a startup probe on /healthz with the tuning given", async () => {
  const web = await webContainer({ probes: { startup: { failureThreshold: 90, periodSeconds: 5 } } });
  expect(web.startupProbe).toEqual({
    httpGet: { path: "/healthz", port: 8080 },
    periodSeconds: 5,
    timeoutSeconds: 5,
    failureThreshold: 90,
  });
  // The other probes keep theirs.
  expect(web.readinessProbe).toMatchObject({ httpGet: { path: "/healthz" }, periodSeconds: 10 });
  expect(web.livenessProbe).toMatchObject({ httpGet: { path: "/healthz" }, failureThreshold: 5 });
});

test("without startup tuning pulp-web has no startup probe (nginx answers at once; pods unchanged)", async () => {
  const web = await webContainer({ probes: { readiness: { periodSeconds: 3 } } });
  expect(web.startupProbe).toBeUndefined();
  expect(web.readinessProbe).toMatchObject({ periodSeconds: 3 });
});
