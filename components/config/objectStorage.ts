/** Where object storage is configured: storage.s3 or storage.azure. */
export type ObjectStorageKey = "s3" | "azure";

/**
 * The object storage the artifacts live in, with its config key for messages; undefined when they are on a
 * volume. Typed by shape, so the config modules that the schema itself imports can use it.
 */
export function objectStorage(storage: {
  s3?: { workingDirectorySize: string };
  azure?: { workingDirectorySize: string };
}): { key: ObjectStorageKey; workingDirectorySize: string } | undefined {
  if (storage.s3) return { key: "s3", workingDirectorySize: storage.s3.workingDirectorySize };
  if (storage.azure) return { key: "azure", workingDirectorySize: storage.azure.workingDirectorySize };
  return undefined;
}
