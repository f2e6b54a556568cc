/**
 * The graphile-worker peer of the benchmark: the same service as the BullMQ peer with its queue in PostgreSQL,
 * run as a child process (started by peer.ts with `process.execPath`). Role `api`: the Fastify ingest
 * (peer-common.ts) whose POST calls graphile-worker's `addJob` through a `WorkerUtils` (one `add_job` call and
 * its commit per message, so with `synchronous_commit=on` an accepted job has reached the disk) and answers
 * 202. Role `worker`: graphile-worker's own runner with the settings of its performance guide, whose task
 * signs each job per Standard Webhooks and POSTs it to the receiver; a non-2xx fails the job, which
 * graphile-worker retries with its back-off. Its database is the benchmark's own (`<db-name>_graphile`).
 *
 * It prints nothing on stdout (graphile-worker's own log lines, one per completed job at its default level,
 * go to the log file); once ready it sends `{ type: 'ready', port }` over IPC and stops on SIGTERM.
 */
import { makeWorkerUtils, run } from 'graphile-worker';
import { runPeerChild, signedSender, startPeerApi, type PeerJob } from './peer-common.ts';

/** The child's settings, passed as JSON in argv[2]. */
export interface GraphileInit {
  readonly role: 'api' | 'worker';
  /** URL of the peer's own database. */
  readonly databaseUrl: string;
  /** api: the Bearer token it accepts. */
  readonly token: string;
  /** worker: where every job is POSTed, jobs in flight, sockets per origin, and the signing secret (`whsec_…`). */
  readonly receiverUrl: string;
  readonly concurrency: number;
  readonly connectionsPerOrigin: number;
  readonly secret: string;
}

/** The task every job runs. */
export const TASK = 'deliver';
/** Attempts per job, as the BullMQ peer's (graphile-worker's default is 25). */
const MAX_ATTEMPTS = 5;
/** Connections of the ingest's pool: graphile-worker's (and node-postgres') default. */
const API_POOL_SIZE = 10;

/**
 * The worker's settings, from graphile-worker's performance guide: jobs in flight, a pool of
 * `concurrentJobs + 2` (its advice), a local queue that locks a batch of jobs per fetch, completions and
 * failures batched (delay 0: those of one tick in one statement), prepared statements, and Node's clock in
 * the job queries (this machine's one clock serves both). `pollInterval` stays at its default: new jobs
 * arrive by LISTEN/NOTIFY, the poll only finds jobs due later (retries).
 */
export function workerPreset(init: GraphileInit): GraphileConfig.WorkerOptions {
  return {
    connectionString: init.databaseUrl,
    concurrentJobs: init.concurrency,
    maxPoolSize: init.concurrency + 2,
    pollInterval: 2_000,
    preparedStatements: true,
    useNodeTime: true,
    localQueue: { size: 500 },
    completeJobBatchDelay: 0,
    failJobBatchDelay: 0,
  };
}

async function api(init: GraphileInit): Promise<{ port: number; stop: () => Promise<void> }> {
  const utils = await makeWorkerUtils({ connectionString: init.databaseUrl, maxPoolSize: API_POOL_SIZE });
  const server = await startPeerApi(init.token, async (_eventType, job) => {
    await utils.addJob(TASK, job, { maxAttempts: MAX_ATTEMPTS });
  });
  return {
    port: server.port,
    async stop() {
      await server.close();
      await utils.release();
    },
  };
}

async function worker(init: GraphileInit): Promise<{ port: number; stop: () => Promise<void> }> {
  const sender = signedSender(init.receiverUrl, init.secret, init.connectionsPerOrigin);
  // run() migrates the database (a fresh one per run) before it starts looking for jobs.
  const runner = await run({
    taskList: { [TASK]: async (payload) => sender.send(payload as PeerJob) },
    parsedCronItems: [],
    noHandleSignals: true,
    preset: { worker: workerPreset(init) },
  });
  return {
    port: 0,
    async stop() {
      await runner.stop();
      await sender.close();
    },
  };
}

if (import.meta.main) {
  const init = JSON.parse(process.argv[2] ?? '{}') as GraphileInit;
  await runPeerChild(() => (init.role === 'api' ? api(init) : worker(init)));
}
