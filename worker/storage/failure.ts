/**
 * The one storage-failure pattern (docs/architecture.md, "Storage failures"):
 * every storage module throws `StorageError` (d1.ts) and nothing else on a
 * fault; a capability turns it into its own failure value in exactly one
 * place, with this helper, because each tool answers a fault differently
 * (`storage_error`, `not_saved`, "best effort"). Any other error is a bug: it
 * is not a storage fault, so it propagates instead of being reported to the
 * caller as one — a swallowed bug would look like a flaky database.
 */
import { StorageError } from "./d1";

export async function onStorageError<T, F>(work: () => Promise<T>, failure: () => F): Promise<T | F> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StorageError) return failure();
    throw error;
  }
}
