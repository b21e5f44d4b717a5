/**
 * The process's one-of-a-kind objects (the runtime, metrics, export slots, the proposer
 * clock, flags that work started), kept on `globalThis`: Next.js may load a module
 * more than once (development reloads, separate bundles for routes and
 * instrumentation), and each copy must still find the same object.
 */
const holder = globalThis as typeof globalThis & { __keelSingletons?: Map<string, unknown> };

/**
 * The object registered under `name`, made by `create` on first use. A `create` that
 * throws registers nothing, so the next call tries again (a missing setting can be fixed).
 */
export function singleton<T>(name: string, create: () => T): T {
  const registry = (holder.__keelSingletons ??= new Map<string, unknown>());
  if (registry.has(name)) return registry.get(name) as T;
  const value = create();
  registry.set(name, value);
  return value;
}
