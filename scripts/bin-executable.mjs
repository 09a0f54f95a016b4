#!/usr/bin/env node
// Run by `npm run build` after tsc. tsc writes its files without the execute bit, so on a clean
// build the package's bins (package.json `bin`) could not be run by path, nor by `npx gateway`
// ("Permission denied"). Reading the list from package.json keeps the two from drifting apart.
import { chmodSync, readFileSync, statSync } from 'node:fs';

const { bin } = JSON.parse(readFileSync('package.json', 'utf8'));
const files = typeof bin === 'string' ? [bin] : Object.values(bin ?? {});
for (const file of files) chmodSync(file, statSync(file).mode | 0o111);
