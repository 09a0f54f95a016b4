/**
 * An S3-protocol server for tests: s3rver (an implementation not written here), on 127.0.0.1 and a
 * free port, keeping its objects in a temporary directory, with one bucket made. The archive's S3
 * backend is tested against it through the official AWS SDK, as it would talk to a real bucket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types; the few calls below are all this uses.
import S3rver from 's3rver';
import type { S3ClientConfig } from '@aws-sdk/client-s3';

/** A running s3rver with one bucket. */
export interface S3Server {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  readonly bucket: string;
  /** The client settings that reach it (s3rver's fixed credentials, path-style). */
  readonly client: S3ClientConfig;
  /** The AWS environment a gateway process reaches it with. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts s3rver with bucket `bucket`. */
export async function startS3Server(bucket = 'archive-test'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  return {
    endpoint,
    bucket,
    client: { endpoint, region: 'us-east-1', credentials, forcePathStyle: true },
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      GATEWAY_ARCHIVE_S3_PATH_STYLE: '1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
