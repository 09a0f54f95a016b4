import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../pipeline/context.js';
import type { TaskRecord } from '../store/store.js';
import { publicTask } from '../tasks/public-task.js';

/** The public answer of a task route: the route's answer mapping over the public task(s), and the request body as `request`. */
export async function answerFor(ctx: RequestContext, task: TaskRecord | readonly TaskRecord[], request?: unknown): Promise<unknown> {
  const answer = ctx.route.task!.answer!;
  const base = ctx.publicBase;
  const view = (t: TaskRecord) => publicTask(ctx.snapshot, base, t);
  const now = ctx.now.toISOString();
  const input = Array.isArray(task) ? { tasks: task.map(view), request, now } : { task: view(task as TaskRecord), request, now };
  let out: unknown;
  try {
    out = await answer.evaluate(input);
  } catch (err) {
    throw new GatewayError('internal_error', 'the answer could not be built', { cause: err });
  }
  if (out === undefined) throw new GatewayError('internal_error', 'the answer could not be built', { cause: { mapping: answer.where } });
  return out;
}
