import type { Store } from '../../src/store/store.js';

/** Calls of one store method: how many, and the time from call to answer, summed. */
export interface MethodCalls {
  calls: number;
  ms: number;
}

/**
 * The store as the gateway of bench/tasks uses it, with every method call counted and timed (call
 * to answer, the wait for a pooled connection included): what the poller asks of the store per
 * look, and how long it waits for it. A Proxy, so the store itself is untouched.
 */
export function countedStore(store: Store): { store: Store; calls: Map<string, MethodCalls> } {
  const calls = new Map<string, MethodCalls>();
  const wrapped = new Map<PropertyKey, unknown>();
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      let fn = wrapped.get(key);
      if (!fn) {
        const method = value as (...args: unknown[]) => unknown;
        fn = (...args: unknown[]) => {
          const t0 = performance.now();
          const out = method.apply(target, args);
          if (!(out instanceof Promise)) return out;
          const c = calls.get(key) ?? { calls: 0, ms: 0 };
          calls.set(key, c);
          c.calls++;
          return out.finally(() => {
            c.ms += performance.now() - t0;
          });
        };
        wrapped.set(key, fn);
      }
      return fn;
    },
  });
  return { store: proxy, calls };
}
