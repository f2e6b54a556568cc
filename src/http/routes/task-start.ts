import type { FastifyReply, FastifyRequest } from 'fastify';
import { taskStartedAnswer } from '../../app/answers.ts';
import type { Principal } from '../../app/credentials.ts';
import { writeOnce } from '../../app/write-once.ts';
import type { TaskRecord } from '../../ports/task-store.ts';
import type { Tx } from '../../ports/unit-of-work.ts';
import type { HttpDeps } from '../deps.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';

/**
 * Answers a request that starts a background task (a replay, a recovery): `start` inserts the task in the
 * request's transaction as its principal, once per Idempotency-Key (a repeated request answers the same task);
 * then the task runner is woken and the answer is 202 with the task.
 */
export async function startTask(
  deps: Pick<HttpDeps, 'taskRunner' | 'idempotency' | 'unitOfWork' | 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  start: (tx: Tx, principal: Principal) => Promise<TaskRecord>,
): Promise<FastifyReply> {
  const principal = principalOf(request);
  const answer = await writeOnce(deps, keyScope(deps, request), async (tx) =>
    taskStartedAnswer(await start(tx, principal)),
  );
  deps.taskRunner.kick();
  return sendAnswer(reply, answer);
}
