/**
 * The parts of a compiled route as one flat view, for tests that look at every route alike: a
 * compiled route is a variant by kind (src/config/snapshot-routes.ts), and a part its kind does
 * not have reads here as empty or null.
 */
import type { CompiledRoute, LinkPlaces, ModelSet, ModelSource, TaskIdSource } from '../../src/config/snapshot.js';
import type { Mapping } from '../../src/mapping/mapping.js';

const NO_MODELS: ModelSet = { exact: new Set(), prefixes: [] };

/** The models a route lists (sync and task-submit routes); none for other kinds. */
export function modelsOf(r: CompiledRoute): ModelSet {
  return r.kind === 'sync' || r.kind === 'task-submit' ? r.models : NO_MODELS;
}

/** Where a route reads its model (sync, task-submit, model-get); null for other kinds and for a remix that names none. */
export function modelOf(r: CompiledRoute): ModelSource | null {
  return 'model' in r ? r.model : null;
}

/** The profile operation a route calls; '' for routes that call none. */
export function operationOf(r: CompiledRoute): string {
  return r.kind === 'sync' || r.kind === 'task-submit' ? r.operation : '';
}

/** The mode mapping of a sync or task-submit route; null for other kinds. */
export function modeOf(r: CompiledRoute): Mapping | null {
  return r.kind === 'sync' || r.kind === 'task-submit' ? r.mode : null;
}

/** Where a sync route's answers carry files; null for other kinds. */
export function linksOf(r: CompiledRoute): LinkPlaces | null {
  return r.kind === 'sync' ? r.links : null;
}

/** A route's task block, with the parts its kind lacks as null; null for routes of no task. */
export function taskOf(r: CompiledRoute): {
  kinds: readonly string[];
  id: TaskIdSource | null;
  source: TaskIdSource | null;
  maxIds: number;
  answer: Mapping | null;
} | null {
  switch (r.kind) {
    case 'task-submit':
      return { kinds: r.task.kinds, id: null, source: r.task.source, maxIds: 0, answer: r.task.answer };
    case 'task-query':
      return { kinds: r.task.kinds, id: r.task.id, source: null, maxIds: r.task.maxIds, answer: r.task.answer };
    case 'task-content':
      return { kinds: r.task.kinds, id: r.task.id, source: null, maxIds: 0, answer: null };
    case 'task-list':
      return { kinds: r.task.kinds, id: null, source: null, maxIds: 0, answer: r.task.answer };
    case 'task-delete':
      return { kinds: r.task.kinds, id: r.task.id, source: null, maxIds: 0, answer: r.task.answer };
    default:
      return null;
  }
}
