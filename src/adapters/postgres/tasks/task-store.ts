import type { TaskRecord, TaskStatus, TaskStore } from '../../../ports/task-store.ts';
import { keyset, toPage } from '../paging.ts';
import { nowSql, on } from '../sql.ts';
import type { Db } from '../db.ts';
import { runTx } from '../tx.ts';

interface TaskRow {
  id: string;
  app_id: string | null;
  kind: string;
  status: TaskStatus;
  params: Record<string, unknown>;
  progress: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, app_id, kind, status, params, progress, created_at, updated_at';

/*
 * PICK_TASK — the running task of one of $1 kinds touched least recently whose row no other transaction
 * holds (index background_tasks_running). Locks it for the step.
 */
const PICK_TASK = `
SELECT ${COLUMNS} FROM background_tasks
WHERE status = 'running' AND kind = ANY ($1::text[])
ORDER BY updated_at, id
LIMIT 1
FOR UPDATE SKIP LOCKED`;

function toRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    appId: row.app_id,
    kind: row.kind,
    status: row.status,
    params: row.params,
    progress: row.progress,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The PostgreSQL {@link TaskStore} (table background_tasks). */
export function createPgTaskStore(db: Db): TaskStore {
  return {
    async insertTask(tx, task, now) {
      const res = await on(db, tx).query<TaskRow>(
        `INSERT INTO background_tasks (id, app_id, kind, status, params, progress, created_at, updated_at)
         VALUES ($1, $2, $3, 'running', $4::jsonb, $5::jsonb, ${nowSql(6)}, ${nowSql(6)}) RETURNING ${COLUMNS}`,
        [task.id, task.appId, task.kind, JSON.stringify(task.params), JSON.stringify(task.progress), now],
      );
      return toRecord(res.rows[0]!);
    },

    async findTask(id, appId) {
      const res = await db.query<TaskRow>(
        `SELECT ${COLUMNS} FROM background_tasks WHERE id = $1 AND ($2::text IS NULL OR app_id = $2)`,
        [id, appId],
      );
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async listTasks(query) {
      const k = keyset(query, 'id', 5);
      const res = await db.query<TaskRow>(
        `SELECT ${COLUMNS} FROM background_tasks
         WHERE ($2::text IS NULL OR app_id = $2) AND ($3::text IS NULL OR status = $3)
           AND ($4::text IS NULL OR kind = $4) AND ${k.where}
         ORDER BY ${k.orderBy} LIMIT $1`,
        [k.fetch, query.appId, query.status, query.kind, ...k.params],
      );
      return toPage(res.rows, query, (r) => r.id, toRecord);
    },

    async stepNext(kinds, now, step) {
      return runTx(db, async (tx, client) => {
        const picked = await client.query<TaskRow>(PICK_TASK, [kinds]);
        const row = picked.rows[0];
        if (row === undefined) return false;
        const result = await step(tx, toRecord(row));
        await client.query(
          `UPDATE background_tasks SET status = $2, progress = $3::jsonb, updated_at = ${nowSql(4)} WHERE id = $1`,
          [row.id, result.status, JSON.stringify(result.progress), now],
        );
        return true;
      });
    },
  };
}
