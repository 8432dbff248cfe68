// storage.azure without a key: django-storages then builds the account's endpoint itself, as
// https://<account>.blob.<suffix> (it reads a connection string only with a key, and takes no URL),
// and azure-core sends a bearer token over https only.

/** The ServiceAccount annotation AKS's workload identity webhook reads the client ID from. */
export const AZURE_CLIENT_ID_ANNOTATION = "azure.workload.identity/client-id";

type AzureStorage = { accountName: string; endpointUrl?: string };

/**
 * The endpoint's suffix for settings.py (django-storages takes https, its `azure_ssl` default), or undefined
 * when django-storages cannot build the endpoint (rules.ts).
 */
export function azureEndpointParts(azure: AzureStorage): { suffix?: string } | undefined {
  if (azure.endpointUrl === undefined) return {}; // https://<account>.blob.core.windows.net, its default
  const url = new URL(azure.endpointUrl);
  const prefix = `${azure.accountName}.blob.`;
  if (
    url.protocol !== "https:" ||
    !url.hostname.startsWith(prefix) ||
    url.pathname.replace(/\/+$/, "") !== ""
  )
    return undefined;
  return { suffix: url.host.slice(prefix.length) };
}
