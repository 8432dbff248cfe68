/**
 * Deep-merges `overrides` into `base`: objects merge key by key, anything else (arrays included) is
 * replaced. Used for the podSpecOverrides escape hatch.
 */
export function deepMerge<T>(base: T, overrides: Record<string, unknown>): T {
  const result: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(overrides)) {
    const current = result[key];
    result[key] =
      isPlainObject(current) && isPlainObject(value)
        ? deepMerge(current, value as Record<string, unknown>)
        : value;
  }
  return result as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
