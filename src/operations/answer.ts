import type { TaskDeleteRoute, TaskQueryRoute, TaskSubmitRoute } from '../config/snapshot.js';
import type { Mapping } from '../mapping/mapping.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../pipeline/context.js';
import type { TaskRecord } from '../store/store.js';
import { publicTask, type PublicTask } from '../tasks/public-task.js';

/** Runs one of a route's answer mappings; a mapping that fails or gives nothing is our fault, never the client's. */
export async function evaluateAnswer(mapping: Mapping, input: unknown): Promise<unknown> {
  let out: unknown;
  try {
    out = await mapping.evaluate(input);
  } catch (err) {
    throw new GatewayError('internal_error', 'the answer could not be built', { cause: err });
  }
  if (out === undefined) throw new GatewayError('internal_error', 'the answer could not be built', { cause: { mapping: mapping.where } });
  return out;
}

/** A task as the route's answer mappings see it (docs/routes-yaml.md, "Answer mappings"). */
export function taskView(ctx: RequestContext, task: TaskRecord): PublicTask {
  return publicTask(ctx.snapshot, ctx.publicBase, task);
}

/** The public answer of a task route: the route's answer mapping over the public task(s), and the request body as `request`. */
export async function answerFor(
  ctx: RequestContext<TaskSubmitRoute | TaskQueryRoute | TaskDeleteRoute>,
  task: TaskRecord | readonly TaskRecord[],
  request?: unknown,
): Promise<unknown> {
  const now = ctx.now.toISOString();
  const view = (t: TaskRecord) => taskView(ctx, t);
  const input = Array.isArray(task) ? { tasks: task.map(view), request, now } : { task: view(task as TaskRecord), request, now };
  return evaluateAnswer(ctx.route.task.answer, input);
}
