import { fileURLToPath } from 'node:url';

/** The project's own root (where package.json, routes.yaml and schemas/ live), from dist/ or src/. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');
