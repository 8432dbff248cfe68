// The credential the pods sign in to Azure Storage with when storage.azure has no key: an AKS workload
// identity. azure-identity's WorkloadIdentityCredential would do it, but Pulp's images carry only
// azure-core and azure-storage-blob (pulpcore's `azure` extra), and django-storages takes a credential only
// as an object (AZURE_TOKEN_CREDENTIAL). So settings.py defines the few lines it needs: the projected
// ServiceAccount token the webhook mounts, exchanged at Entra ID for a storage token (OAuth 2.0 client
// credentials with a client assertion), kept until five minutes before it expires.
const CLASS = "_PulpAzureWorkloadIdentity";

/** Program text, never config: the AZURE_* variables come from the pod's env (identity/podIdentity.ts). */
const DEFINITION = `class ${CLASS}:
    """azure-core's TokenCredential for an AKS workload identity (what azure-identity's
    WorkloadIdentityCredential does; Pulp's images lack that package)."""

    def __init__(self):
        self._token = None

    def get_token(self, *scopes, **kwargs):
        if self._token is None or self._token.expires_on - 300 < time.time():
            with open(os.environ["AZURE_FEDERATED_TOKEN_FILE"]) as f:
                assertion = f.read().strip()
            authority = os.environ.get("AZURE_AUTHORITY_HOST", "https://login.microsoftonline.com/")
            url = authority.rstrip("/") + "/" + os.environ["AZURE_TENANT_ID"] + "/oauth2/v2.0/token"
            form = urllib.parse.urlencode({
                "client_id": os.environ["AZURE_CLIENT_ID"],
                "grant_type": "client_credentials",
                "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                "client_assertion": assertion,
                "scope": " ".join(scopes),
            }).encode()
            try:
                with urllib.request.urlopen(urllib.request.Request(url, data=form), timeout=30) as answer:
                    token = json.load(answer)
            except urllib.error.HTTPError as error:
                raise RuntimeError(f"Entra ID refused the workload identity's token at {url}: HTTP {error.code} {error.read()[:500]!r}") from None
            self._token = azure.core.credentials.AccessToken(
                token["access_token"], int(time.time()) + int(token["expires_in"])
            )
        return self._token`;

/** The credential for STORAGES' token_credential: its expression, definition, imports, and why. */
export const AZURE_WORKLOAD_IDENTITY = {
  code: `${CLASS}()`,
  modules: ["azure.core.credentials", "json", "os", "time", "urllib.error", "urllib.parse", "urllib.request"],
  need: "storage.azure without a key needs azure-core (pulpcore's azure extra, in the quay.io/pulp images)",
  definition: DEFINITION,
};
