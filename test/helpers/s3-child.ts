/**
 * s3rver in a process of its own, for tests that make the archive's S3 fail as a server fails:
 * SIGKILL (connections refused), SIGSTOP and SIGCONT (a server that hangs, then wakes). Started
 * by ./s3-process.ts as `node s3-child.js <directory> <bucket>`; prints `{"s3rver_port":N}` once
 * it listens on a free port of 127.0.0.1.
 */
// @ts-expect-error s3rver ships no types; the few calls below are all this uses.
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
if (!directory || !bucket) {
  process.stderr.write('usage: s3-child.js <directory> <bucket>\n');
  process.exit(2);
}
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
const { port } = (await server.run()) as { port: number };
process.stdout.write(`${JSON.stringify({ s3rver_port: port })}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
