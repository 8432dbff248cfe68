// A namespace's events as the shipped tools read them (pulp-stack, pulp-doctor): one shape, oldest first.
import { getJson, Kube } from "./kube";

export interface EventSummary {
  type: string;
  reason: string;
  message: string;
  /** kind/name of the object the event is about. */
  object: string;
  count: number;
  last: string;
}

/** The events of `namespace`, oldest first; with `about`, only those about objects of those names. */
export function namespaceEvents(kube: Kube, namespace: string, about?: Set<string>): EventSummary[] {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Events as kubectl prints them
  const list = getJson(kube, ["events", "-n", namespace]) as { items: any[] } | undefined;
  return (list?.items ?? [])
    .filter((e) => !about || about.has(e.involvedObject?.name))
    .map((e) => ({
      type: e.type ?? "",
      reason: e.reason ?? "",
      message: e.message ?? "",
      object: `${e.involvedObject?.kind}/${e.involvedObject?.name}`,
      count: e.count ?? e.series?.count ?? 1,
      last: e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp,
    }))
    .sort((a, b) => Date.parse(a.last) - Date.parse(b.last));
}
