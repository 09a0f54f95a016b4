/**
 * How the gateway is made into a package and run from it, once, for everything that does it: the
 * Dockerfile runs these commands (test/package/deploy-files.test.ts reads its RUN, ENTRYPOINT and
 * CMD lines and fails when they are not these, in this order), deploy/gateway.service starts the
 * gateway with `start`, and test/package/package.test.ts runs them for real from `npm pack` on.
 *
 * Placeholders: {pack} the folder npm pack writes the tarball to, {tarball} that tarball,
 * {config} the config directory.
 */
export const STEPS = {
  /** In a clone of the repository (npm pack refuses a folder that does not exist). The package test starts after `npm run build`: the suite built dist/ already. */
  build: ['npm ci', 'npm run build', 'mkdir -p {pack}', 'npm pack --pack-destination {pack}'],
  /** In an empty directory: the package without its development tools, then a config directory of its own. */
  install: ['npm install --omit=dev --no-audit --no-fund --prefer-offline {tarball}', 'gateway init {config}'],
  /** What serves. */
  start: 'gateway start --config {config}',
} as const;

/** A step with its placeholders filled in. */
export function fill(step: string, values: { pack?: string; tarball?: string; config?: string }): string {
  return step.replace(/\{(pack|tarball|config)\}/g, (m, name: keyof typeof values) => values[name] ?? m);
}

/** A step as the words a process is started with (no step quotes anything). */
export const words = (step: string): string[] => step.split(/\s+/).filter(Boolean);

/** Where the image and the service unit put things; the Dockerfile and deploy/gateway.service must agree with these. */
export const LAYOUT = {
  /** Where the package is installed: its bin is `<install>/node_modules/.bin/gateway`. */
  install: '/opt/gateway',
  config: '/etc/gateway',
  data: '/var/lib/gateway',
  store: '/var/lib/gateway/gateway.db',
  user: 'gateway',
} as const;
