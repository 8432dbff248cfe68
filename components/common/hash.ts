import { createHash } from "crypto";

/** JSON with object keys sorted at every level: equal values give equal text, whatever the key order. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** A short, stable content hash for names and annotations. */
export function contentHash(value: unknown, length = 10): string {
  const text = typeof value === "string" ? value : stableJson(value);
  return createHash("sha256").update(text).digest("hex").slice(0, length);
}
