// Entra ID's token endpoint, as the test bed's stand-in for a workload identity's sign-in: a pod posts its
// projected ServiceAccount token as the client assertion (OAuth 2.0 client credentials), the cluster's
// TokenReview says whose token it is and for which audience, and the answer is a storage token Azurite
// (--oauth basic) accepts: Entra ID's issuer and the storage audience, not signed by Entra ID (Azurite
// checks claims, not signatures). One line per request on stdout: "TOKEN <ok|refused> <who or why>".
//   node entra.js HOST PORT CLIENT_ID TENANT_ID   (env: KUBECTL, KUBECONFIG)
const { execFileSync } = require("child_process");
const crypto = require("crypto");
const http = require("http");

const [host, port, clientId, tenantId] = process.argv.slice(2);
const AUDIENCE = "api://AzureADTokenExchange";
const SCOPE = "https://storage.azure.com/.default";
/** The object ID Azurite derives a user delegation key from (any fixed GUID). */
const OBJECT_ID = "0b5e1c3a-0000-4000-8000-0000000000a1";

/** Who the cluster says a token belongs to, for the audience Entra ID would require. */
function review(token) {
  const body = JSON.stringify({
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token, audiences: [AUDIENCE] },
  });
  const out = execFileSync(
    process.env.KUBECTL,
    ["--kubeconfig", process.env.KUBECONFIG, "create", "-f", "-", "-o", "json"],
    {
      input: body,
      encoding: "utf8",
    },
  );
  const status = JSON.parse(out).status;
  return status.authenticated ? status.user.username : undefined;
}

const b64url = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
function storageToken(subject) {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    aud: "https://storage.azure.com",
    iss: `https://sts.windows.net/${tenantId}/`,
    iat: now - 60,
    nbf: now - 60,
    exp: now + 3600,
    oid: OBJECT_ID,
    tid: tenantId,
    sub: subject,
    appid: clientId,
  };
  const unsigned = `${b64url({ alg: "HS256", typ: "JWT" })}.${b64url(claims)}`;
  const sig = crypto.createHmac("sha256", "pulp-testbed").update(unsigned).digest("base64url");
  return `${unsigned}.${sig}`;
}

http
  .createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const form = new URLSearchParams(body);
      const refuse = (why) => {
        console.log(`TOKEN refused ${why}`);
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "invalid_client", error_description: why }));
      };
      if (req.method !== "POST" || req.url !== `/${tenantId}/oauth2/v2.0/token`)
        return refuse(`${req.method} ${req.url}`);
      if (form.get("grant_type") !== "client_credentials")
        return refuse(`grant_type ${form.get("grant_type")}`);
      if (form.get("client_assertion_type") !== "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        return refuse(`client_assertion_type ${form.get("client_assertion_type")}`);
      if (form.get("client_id") !== clientId) return refuse(`client_id ${form.get("client_id")}`);
      if (form.get("scope") !== SCOPE) return refuse(`scope ${form.get("scope")}`);
      let who;
      try {
        who = review(form.get("client_assertion") || "");
      } catch (e) {
        return refuse(`TokenReview failed: ${String(e.message).split("\n")[0]}`);
      }
      if (!who) return refuse(`the assertion is not a ServiceAccount token for ${AUDIENCE}`);
      console.log(`TOKEN ok ${who}`);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ token_type: "Bearer", expires_in: 3599, access_token: storageToken(who) }));
    });
  })
  .listen(Number(port), host);
