import { z } from 'zod';
import { int, durationMs, type SettingTable } from '../parse.ts';

/** Retention, statistics roll-up, recover and replay tasks, key rotation. */
export const JOB_SETTINGS = {
  keyRotationBatch: {
    env: 'TIDINGS_KEY_ROTATION_BATCH',
    schema: int(1, 10_000),
    defaultValue: '200',
    unit: 'rows',
    description: 'Rows re-encrypted per statement by `tidings keys rotate` (one short transaction each).',
  },
  payloadRetentionMs: {
    env: 'TIDINGS_PAYLOAD_RETENTION',
    schema: durationMs(3_600_000),
    defaultValue: '90d',
    unit: 'duration',
    description:
      'Default payload retention (a message may set payloadRetentionHours / payloadRetentionPeriod): counted ' +
      'from the last final transition of its deliveries, then the payload and stored response bodies are ' +
      'expunged.',
  },
  retentionSucceededAgeMs: {
    env: 'TIDINGS_RETENTION_SUCCEEDED_AGE',
    schema: durationMs(0),
    defaultValue: '30d',
    unit: 'duration',
    description:
      'Succeeded deliveries, with their attempts and timeline rows, are deleted this long after they succeeded ' +
      '(0 = kept forever).',
  },
  retentionIntervalMs: {
    env: 'TIDINGS_RETENTION_INTERVAL',
    schema: durationMs(0),
    defaultValue: '5m',
    unit: 'duration',
    description: 'Period of the retention job in each API process (0 = off; `tidings retention run` runs it once).',
  },
  retentionJitter: {
    env: 'TIDINGS_RETENTION_JITTER',
    schema: z.coerce.number().min(0).max(0.9),
    defaultValue: '0.2',
    unit: 'fraction',
    description: 'Each retention period is drawn from [p·(1−j), p·(1+j)] so that API processes do not run in step.',
  },
  retentionBatch: {
    env: 'TIDINGS_RETENTION_BATCH',
    schema: int(1, 10_000),
    defaultValue: '500',
    unit: 'rows',
    description: 'Rows changed per statement by the retention job and by erasure tasks (one short transaction each).',
  },
  historyPartitionWidthMs: {
    env: 'TIDINGS_HISTORY_PARTITION_WIDTH',
    schema: durationMs(60_000),
    defaultValue: '1d',
    unit: 'duration',
    description:
      'Range of time of one partition of the attempts and of the timeline, aligned to the Unix epoch (UTC); ' +
      'retention drops history a partition at a time. ADR 0030.',
  },
  historyPartitionsAhead: {
    env: 'TIDINGS_HISTORY_PARTITIONS_AHEAD',
    schema: int(1, 1000),
    defaultValue: '3',
    unit: 'partitions',
    description:
      'Partitions the retention job keeps made ahead of the current one; a row whose instant has none lands in ' +
      'the default partition, moved out when its partition is made.',
  },
  historyPartitionLockTimeoutMs: {
    env: 'TIDINGS_HISTORY_PARTITION_LOCK_TIMEOUT',
    schema: durationMs(1),
    defaultValue: '1s',
    unit: 'duration',
    description:
      'Longest wait of the retention job for the table lock that making or dropping a partition needs; past it ' +
      'the step is left to the next run, so writers never queue behind it for longer.',
  },
  statsRollupIntervalMs: {
    env: 'TIDINGS_STATS_ROLLUP_INTERVAL',
    schema: durationMs(0),
    defaultValue: '1s',
    unit: 'duration',
    description:
      'Period of the time-in-state roll-up in each API process: timeline rows newer than its watermark are ' +
      'read raw by every statistics read, so this bounds that tail (0 = off: reads count raw rows only, exact ' +
      'but slower). ADR 0015.',
  },
  statsRollupBatch: {
    env: 'TIDINGS_STATS_ROLLUP_BATCH',
    schema: int(100, 1_000_000),
    defaultValue: '20000',
    unit: 'rows',
    description:
      'Most timeline ids one roll-up step folds into the rollups (one short transaction each); a run takes ' +
      'steps until it has caught up.',
  },
  replayRatePerS: {
    env: 'TIDINGS_REPLAY_RATE',
    schema: int(1, 100_000),
    defaultValue: '50',
    unit: 'requests/s',
    description:
      'Pace of recover, replay-missing and bulk replay: the deliveries they queue are spread over time at this ' +
      'rate per endpoint, so a recovering endpoint is not flooded.',
  },
  taskBatch: {
    env: 'TIDINGS_TASK_BATCH',
    schema: int(1, 10_000),
    defaultValue: '500',
    unit: 'rows',
    description:
      'Rows a recover / replay task examines per step (one short transaction each, progress recorded with it).',
  },
  taskPollIntervalMs: {
    env: 'TIDINGS_TASK_POLL_INTERVAL',
    schema: durationMs(10),
    defaultValue: '5s',
    unit: 'duration',
    description:
      'How often an idle API process looks for recover / replay tasks left running (by itself before a crash, ' +
      'or by another process); a new task starts at once.',
  },
} satisfies SettingTable;
