/**
 * The deployment files as data, for the tests that keep them true: the Dockerfile's instructions,
 * deploy/gateway.service's settings, compose.yaml. These machines cannot build an image or run
 * systemd, so what can be checked is that the files say what the package test runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/config/paths.js';

/** One instruction of a Dockerfile: its keyword (upper case) and the rest, continuation lines joined. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  /** The stage it belongs to: 0 for the first FROM's, and so on. */
  readonly stage: number;
}

/** The instructions of the repository's Dockerfile, comments left out. */
export function dockerfile(text = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8')): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = pending + line;
    pending = '';
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(whole) ?? [];
    if (keyword.toUpperCase() === 'FROM') stage++;
    out.push({ keyword: keyword.toUpperCase(), args, stage });
  }
  return out;
}

/** The commands of the RUN lines (each split at `&&`), in order, whitespace made single. */
export function runCommands(instructions: readonly Instruction[]): string[] {
  return instructions
    .filter((i) => i.keyword === 'RUN')
    .flatMap((i) => i.args.split('&&'))
    .map((c) => c.trim().replace(/\s+/g, ' '));
}

/** The words of an exec-form instruction (`["a", "b"]`); fails on a shell form, which would not pass signals on. */
export function execForm(args: string): string[] {
  const words: unknown = JSON.parse(args);
  if (!Array.isArray(words) || !words.every((w) => typeof w === 'string')) throw new Error(`not an exec form: ${args}`);
  return words;
}

/** The last instruction with this keyword (the one Docker uses), or undefined. */
export function last(instructions: readonly Instruction[], keyword: string): Instruction | undefined {
  return instructions.filter((i) => i.keyword === keyword).at(-1);
}

/** The ENV values the final stage sets (`ENV A=1 B=2`, one instruction or several). */
export function finalEnv(instructions: readonly Instruction[]): Record<string, string> {
  const stage = Math.max(...instructions.map((i) => i.stage));
  const env: Record<string, string> = {};
  for (const i of instructions.filter((x) => x.keyword === 'ENV' && x.stage === stage))
    for (const [, k = '', v = ''] of i.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S+)/g)) env[k] = v;
  return env;
}

/** The words of the image's HEALTHCHECK command (exec form), for a test to run against a real gateway. */
export function dockerHealthcheck(): string[] {
  const check = last(dockerfile(), 'HEALTHCHECK');
  const form = /\bCMD\s+(\[.*\])\s*$/.exec(check?.args ?? '');
  if (!form?.[1]) throw new Error('the Dockerfile has no HEALTHCHECK … CMD [exec form]');
  return execForm(form[1]);
}

/** The settings of a systemd unit: section → key → every value given (Environment= may repeat). */
export function systemdUnit(path = join(PROJECT_ROOT, 'deploy/gateway.service')): Map<string, Map<string, string[]>> {
  const units = new Map<string, Map<string, string[]>>();
  let section = new Map<string, string[]>();
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head?.[1]) {
      section = new Map();
      units.set(head[1], section);
      continue;
    }
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1)]);
  }
  return units;
}

/** compose.yaml, or another compose file of the repository (compose.demo.yaml), parsed (anchors and `<<` merges resolved). */
export function composeFile(name = 'compose.yaml'): {
  services: Record<string, Record<string, unknown>>;
  volumes?: Record<string, unknown>;
} {
  return parse(readFileSync(join(PROJECT_ROOT, name), 'utf8'), { merge: true }) as ReturnType<typeof composeFile>;
}
