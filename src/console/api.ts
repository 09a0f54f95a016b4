/**
 * The admin API as the console calls it: every action of the console is one of these requests, with
 * the key the operator signed in with. The console has no power the API lacks.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Api {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  del<T>(path: string): Promise<T>;
  /** A non-JSON answer (CSV) as a Blob, with the key like any other call. */
  blob(path: string): Promise<Blob>;
}

export function apiWithKey(key: string): Api {
  const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
    if (!res.ok) {
      let code = 'error';
      let message = `${res.status} ${res.statusText}`;
      try {
        const e = ((await res.json()) as { error?: { code?: string; message?: string } }).error;
        code = e?.code ?? code;
        message = e?.message ?? message;
      } catch {
        // not JSON: the status says it
      }
      throw new ApiError(res.status, code, message);
    }
    return res;
  };
  return {
    get: async <T>(path: string) => (await (await call('GET', path)).json()) as T,
    post: async <T>(path: string, body?: unknown) => (await (await call('POST', path, body)).json()) as T,
    del: async <T>(path: string) => (await (await call('DELETE', path)).json()) as T,
    blob: async (path: string) => (await call('GET', path)).blob(),
  };
}
