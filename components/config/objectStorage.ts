/** Where object storage is configured: storage.s3, storage.azure or storage.gcs. */
export type ObjectStorageKey = "s3" | "azure" | "gcs";

type Store = { workingDirectorySize: string };

/**
 * The object storage the artifacts live in, with its config key for messages; undefined when they are on a
 * volume. Typed by shape, so the config modules that the schema itself imports can use it.
 */
export function objectStorage(storage: {
  s3?: Store;
  azure?: Store;
  gcs?: Store;
}): { key: ObjectStorageKey; workingDirectorySize: string } | undefined {
  for (const key of ["s3", "azure", "gcs"] as const) {
    const store = storage[key];
    if (store) return { key, workingDirectorySize: store.workingDirectorySize };
  }
  return undefined;
}
