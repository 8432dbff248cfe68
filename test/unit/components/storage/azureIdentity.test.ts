// Unit (Pulumi mocks, and the rendered settings.py run by python3): storage.azure without a key. The pods
// sign in as an Azure workload identity: settings.py defines the credential and names the account's endpoint
// by its suffix; every Pulp pod carries the label AKS's webhook mutates on; azureWorkloadIdentity adds what
// the webhook would (the projected token and the AZURE_* variables). The credential itself runs here in
// python3 against a token endpoint of the test's, with azure-core's AccessToken stood in for. No key
// anywhere. Real Pulp against Azurite with OAuth: test/e2e/real/azureStorage.test.ts.
import { execFile } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { renderSettings } from "../../../../components/settings/render";
import { restrictedViolations } from "../../../../components/workload/podSecurity";
import { configProblems, MINIMAL, problemsOf } from "../../helpers/configs";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";
import { DEPLOYMENT, pulpProcesses, render, SECRET } from "../../helpers/render";

const AZURE = { accountName: "pulpartifacts", container: "pulp" };
const IDENTITY = {
  clientId: "4a1c2d3e-0000-4000-8000-00000000abcd",
  tenantId: "72f988bf-0000-4000-8000-00000000abcd",
};
/** As on AKS: the webhook reads the client ID from the ServiceAccount and does the rest. */
const ON_AKS = {
  ...MINIMAL,
  storage: { azure: AZURE },
  serviceAccount: { annotations: { "azure.workload.identity/client-id": IDENTITY.clientId } },
};
/** Without the webhook: the program does what it would. */
const NO_WEBHOOK = {
  ...MINIMAL,
  storage: { azure: { ...AZURE, endpointUrl: "https://pulpartifacts.blob.core.usgovcloudapi.net" } },
  serviceAccount: {
    azureWorkloadIdentity: { ...IDENTITY, authorityHost: "https://login.microsoftonline.us/" },
  },
};

const pulpPods = (run: Awaited<ReturnType<typeof render>>) =>
  pulpProcesses(run).map((r) => [r.inputs.metadata.name as string, r.inputs.spec.template] as const);

test("on AKS: the pods carry the webhook's label and run as pulp-pulp; no key Secret, no key setting", async () => {
  const run = await render(ON_AKS);
  const [account] = run.ofType("kubernetes:core/v1:ServiceAccount");
  expect(account.inputs.metadata.annotations).toEqual({
    "azure.workload.identity/client-id": IDENTITY.clientId,
  });
  const pods = pulpPods(run);
  expect(pods).toHaveLength(4);
  for (const [name, template] of pods) {
    expect({ name, label: template.metadata.labels["azure.workload.identity/use"] }).toEqual({
      name,
      label: "true",
    });
    expect({ name, account: template.spec.serviceAccountName }).toEqual({ name, account: "pulp-pulp" });
    // The webhook adds the token and the variables: the program adds none of its own.
    const env = JSON.stringify(template.spec.containers[0].env);
    expect(env).not.toMatch(/AZURE_|connection_string/);
  }
  for (const d of run.ofType(DEPLOYMENT).filter((d) => /^pulp-(web|redis)$/.test(d.inputs.metadata.name))) {
    expect(d.inputs.spec.template.metadata.labels["azure.workload.identity/use"]).toBeUndefined();
  }
  expect(run.ofType(SECRET).map((s) => s.inputs.metadata.name)).not.toContain("pulp-azure");
  const settings = run.ofType(SECRET).find((s) => /^pulp-settings-/.test(s.inputs.metadata.name))!;
  const text = settings.inputs.stringData["settings.py"] as string;
  expect(text).toContain('"token_credential": _PulpAzureWorkloadIdentity()');
  expect(text).not.toMatch(/endpoint_suffix|azure_protocol/); // Azure's public cloud: django-storages' default
});

test("without the webhook: the projected token for Entra ID and the AZURE_* variables, as the webhook sets them", async () => {
  const run = await render(NO_WEBHOOK);
  for (const [name, template] of pulpPods(run)) {
    const spec = template.spec;
    expect(spec.volumes).toContainEqual({
      name: "azure-identity-token",
      projected: {
        defaultMode: 0o440,
        sources: [
          {
            serviceAccountToken: {
              audience: "api://AzureADTokenExchange",
              expirationSeconds: 3600,
              path: "azure-identity-token",
            },
          },
        ],
      },
    });
    const container = spec.containers[0];
    expect(container.volumeMounts).toContainEqual({
      name: "azure-identity-token",
      mountPath: "/var/run/secrets/azure/tokens",
      readOnly: true,
    });
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value?: string }) => [e.name, e.value]),
    );
    expect(env).toMatchObject({
      AZURE_CLIENT_ID: IDENTITY.clientId,
      AZURE_TENANT_ID: IDENTITY.tenantId,
      AZURE_FEDERATED_TOKEN_FILE: "/var/run/secrets/azure/tokens/azure-identity-token",
      AZURE_AUTHORITY_HOST: "https://login.microsoftonline.us/",
    });
    expect({ name, violations: restrictedViolations(spec) }).toEqual({ name, violations: [] });
  }
  const settings = run.ofType(SECRET).find((s) => /^pulp-settings-/.test(s.inputs.metadata.name))!;
  const text = settings.inputs.stringData["settings.py"] as string;
  expect(text).toContain('"endpoint_suffix": "core.usgovcloudapi.net"');
  // https is django-storages' default (azure_ssl); it takes no protocol option.
  expect(text).not.toContain("azure_protocol");
});

test("with the key, nothing of the identity: no label, no credential in settings.py", async () => {
  const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
  const run = await render({ ...MINIMAL, storage: { azure: AZURE } }, { azureAccountKey: KEY });
  for (const [, template] of pulpPods(run)) {
    expect(template.metadata.labels["azure.workload.identity/use"]).toBeUndefined();
  }
  const settings = run.ofType(SECRET).find((s) => /^pulp-settings-/.test(s.inputs.metadata.name))!;
  expect(settings.inputs.stringData["settings.py"]).not.toContain("token_credential");
});

/** azure-core's AccessToken (a NamedTuple of token and expires_on), for python3 without azure-core. */
function azureCoreStandIn(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "azure-core-"));
  fs.mkdirSync(path.join(root, "azure", "core"), { recursive: true });
  fs.writeFileSync(path.join(root, "azure", "__init__.py"), "");
  fs.writeFileSync(path.join(root, "azure", "core", "__init__.py"), "");
  fs.writeFileSync(
    path.join(root, "azure", "core", "credentials.py"),
    'import collections\nAccessToken = collections.namedtuple("AccessToken", ["token", "expires_on"])\n',
  );
  return root;
}

test("the credential in settings.py exchanges the projected token at Entra ID, once until it nears expiry", async () => {
  const text = renderSettings({
    ...SETTINGS_INPUT,
    azure: { ...AZURE, identity: { suffix: "core.windows.net" } },
  });
  // One definition, after the imports, and the imports in the try that names what is missing.
  expect(text.match(/^class _PulpAzureWorkloadIdentity:/gm)).toHaveLength(1);
  expect(text.indexOf("    import azure.core.credentials")).toBeLessThan(text.indexOf("class _Pulp"));
  expect(text).toContain("storage.azure without a key needs azure-core");

  const requests: { path: string; form: URLSearchParams }[] = [];
  let expiresIn = 3600;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const form = new URLSearchParams(body);
      requests.push({ path: req.url!, form });
      if (form.get("client_assertion") !== "projected-token") {
        res.writeHead(401).end('{"error":"invalid_client"}');
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ access_token: `storage-token-${requests.length}`, expires_in: expiresIn }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "azure-identity-"));
  fs.writeFileSync(path.join(dir, "settings.py"), text);
  fs.writeFileSync(path.join(dir, "token"), "projected-token\n");
  const run = (script: string) =>
    new Promise<string>((resolve, reject) => {
      // Asynchronously: the token endpoint answers from this process's event loop.
      execFile(
        "python3",
        ["-c", `exec(open(${JSON.stringify(path.join(dir, "settings.py"))}).read())\n${script}`],
        {
          env: {
            PATH: process.env.PATH,
            PYTHONPATH: azureCoreStandIn(),
            AZURE_CLIENT_ID: IDENTITY.clientId,
            AZURE_TENANT_ID: IDENTITY.tenantId,
            AZURE_FEDERATED_TOKEN_FILE: path.join(dir, "token"),
            AZURE_AUTHORITY_HOST: `http://127.0.0.1:${port}/`,
          },
        },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
  try {
    const credential = 'c = STORAGES["default"]["OPTIONS"]["token_credential"]\n';
    const twice = await run(
      `${credential}a = c.get_token("https://storage.azure.com/.default")\nb = c.get_token("https://storage.azure.com/.default")\nprint(a.token, b.token)`,
    );
    expect(twice.trim()).toBe("storage-token-1 storage-token-1");
    expect(requests).toHaveLength(1);
    expect(requests[0].path).toBe(`/${IDENTITY.tenantId}/oauth2/v2.0/token`);
    expect(Object.fromEntries(requests[0].form)).toEqual({
      client_id: IDENTITY.clientId,
      grant_type: "client_credentials",
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: "projected-token",
      scope: "https://storage.azure.com/.default",
    });

    // A token within five minutes of its end is fetched again.
    expiresIn = 200;
    const renewed = await run(
      `${credential}a = c.get_token("s")\nb = c.get_token("s")\nprint(a.token, b.token)`,
    );
    expect(renewed.trim()).toBe("storage-token-2 storage-token-3");

    // A refusal names the endpoint and the answer, not a bare HTTPError.
    fs.writeFileSync(path.join(dir, "token"), "someone-else's-token\n");
    await expect(run(`${credential}c.get_token("s")`)).rejects.toThrow(
      /Entra ID refused the workload identity's token at http:\/\/127\.0\.0\.1:\d+\/72f988bf-[^ ]+\/oauth2\/v2\.0\/token: HTTP 401/,
    );
  } finally {
    server.close();
  }
});

test("keyless storage.azure needs an identity, an endpoint django-storages can build, and no restore", () => {
  expect(configProblems(ON_AKS)).toEqual([]);
  expect(configProblems(NO_WEBHOOK)).toEqual([]);
  const none = configProblems({ storage: { azure: AZURE } });
  expect(none.map((p) => [p.key, p.message, p.fix, p.alternatives])).toEqual([
    [
      "pulp:storage.azure",
      "has no key (pulp:azureAccountKey), and the pods have no Azure workload identity to sign in with: set the key, or name the identity AKS's webhook gives them (its client ID, in pulp:serviceAccount's annotations)",
      "pulumi config set --secret pulp:azureAccountKey",
      [
        `pulumi config set --path 'pulp:serviceAccount.annotations["azure.workload.identity/client-id"]' 4a1c2d3e-0000-4000-8000-00000000abcd`,
      ],
    ],
  ]);
  for (const endpointUrl of [
    "http://pulpartifacts.blob.core.windows.net", // a token goes over https only
    "https://10.0.0.1:10000/pulpartifacts", // path-style: django-storages builds host-style
    "https://other.blob.core.windows.net",
  ]) {
    expect(
      problemsOf({ ...ON_AKS, storage: { azure: { ...AZURE, endpointUrl } } }).map(
        (p) => `${endpointUrl} ${p}`,
      ),
    ).toEqual([
      `${endpointUrl} pulp:storage.azure.endpointUrl: must be https://pulpartifacts.blob.<suffix> without a key: django-storages then builds the endpoint from the account's name and a suffix, and a token is sent over https only`,
    ]);
  }
  // An emulator's or private endpoint's port is part of the suffix.
  expect(
    problemsOf({
      ...ON_AKS,
      storage: { azure: { ...AZURE, endpointUrl: "https://pulpartifacts.blob.svc.cluster.local:8443/" } },
    }),
  ).toEqual([]);
  const restore = { backup: "20261129T030000Z", claim: "pulp-backups" };
  expect(problemsOf({ ...ON_AKS, restore, backup: { image: "postgres:16.4" } })).toContain(
    "pulp:storage.azure: a restore into object storage reads the container with the account's key, and pulp:azureAccountKey is not set (a restore does not use pulp:serviceAccount yet)",
  );
  expect(configProblems({ serviceAccount: NO_WEBHOOK.serviceAccount }).map((p) => [p.key, p.fix])).toEqual([
    [
      "pulp:serviceAccount.azureWorkloadIdentity",
      "pulumi config rm --path 'pulp:serviceAccount.azureWorkloadIdentity'",
    ],
  ]);
  const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
  expect(
    configProblems({ ...NO_WEBHOOK, storage: { azure: AZURE } }, { azureAccountKey: KEY }).map(
      (p) => p.message,
    ),
  ).toEqual(["is set, but so is pulp:azureAccountKey, and the pods sign in with the key"]);
  expect(
    problemsOf({
      ...NO_WEBHOOK,
      serviceAccount: { azureWorkloadIdentity: { clientId: "me", tenantId: IDENTITY.tenantId } },
    }),
  ).toEqual([
    'pulp:serviceAccount.azureWorkloadIdentity.clientId: must be a client ID such as "4a1c2d3e-0000-4000-8000-00000000abcd"',
  ]);
});
