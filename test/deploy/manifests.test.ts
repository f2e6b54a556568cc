/**
 * The Compose file and the Helm chart (deploy/compose/, deploy/helm/tidings/) without Docker or a cluster: they parse
 * as YAML, start the roles in the right order, and name only settings of the configuration schema. The chart is
 * rendered by test/deploy/helm-render.ts (Helm's template semantics for the constructs the chart uses).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseDurationMs, SETTINGS } from '../../src/config/config.ts';
import { renderChart } from './helm-render.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHART = `${ROOT}deploy/helm/tidings`;
const SETTING_NAMES = new Set(Object.values(SETTINGS).map((s) => s.env));
const read = (path: string): string => readFileSync(`${ROOT}${path}`, 'utf8');
/** Every TIDINGS_* name a text mentions. */
const tidingsNames = (text: string): string[] => [
  ...new Set([...text.matchAll(/\bTIDINGS_[A-Z0-9_]+\b/g)].map((m) => m[0])),
];
const REQUIRED = {
  secret: { databaseUrl: 'postgresql://tidings:pw@postgres:5432/tidings', encryptionKeys: 'k1:AAAA' },
};

type Doc = {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
};
type Container = {
  name: string;
  args: string[];
  env: { name: string; value?: string }[];
  envFrom: { secretRef: { name: string } }[];
  resources: { requests: Record<string, string> };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop: { exec: { command: string[] } } };
};
type Probe = { httpGet: { path: string; port: string } };
type PodSpec = {
  terminationGracePeriodSeconds?: number;
  containers: Container[];
  securityContext: { runAsNonRoot: boolean };
};

/** Renders the chart and parses every document (none may have a YAML error). */
function render(values: Record<string, unknown> = {}): Doc[] {
  const docs: Doc[] = [];
  for (const [file, text] of renderChart(CHART, { ...REQUIRED, ...values })) {
    if (!file.endsWith('.yaml')) continue;
    for (const doc of parseAllDocuments(text)) {
      assert.deepEqual(doc.errors, [], `${file} parses`);
      const value = doc.toJS() as Doc | null;
      if (value !== null) docs.push(value);
    }
  }
  return docs;
}
const podOf = (doc: Doc): PodSpec => (doc.spec.template as { spec: PodSpec }).spec;

describe('docker compose', () => {
  const compose = parse(read('deploy/compose/docker-compose.yml'), { merge: true }) as {
    services: Record<
      string,
      {
        command?: string[];
        depends_on?: Record<string, { condition: string }>;
        env_file?: string;
        build?: { context: string; dockerfile: string };
        stop_grace_period?: string;
        restart?: string;
        environment?: Record<string, string>;
      }
    >;
  };

  test('PostgreSQL, then a one-shot migrate, then the API and a dispatcher, from one image and one .env', () => {
    const { postgres, migrate, api, dispatcher } = compose.services;
    assert.ok(postgres && migrate && api && dispatcher);
    assert.deepEqual(migrate.command, ['migrate']);
    assert.deepEqual(migrate.depends_on, { postgres: { condition: 'service_healthy' } });
    assert.equal(migrate.restart, 'no');
    for (const [name, service] of [
      ['api', api],
      ['dispatcher', dispatcher],
    ] as const) {
      assert.deepEqual(service.command, [name]);
      assert.deepEqual(service.depends_on, { migrate: { condition: 'service_completed_successfully' } });
    }
    for (const service of [migrate, api, dispatcher]) {
      assert.equal(service.env_file, '.env');
      assert.match(service.environment?.DATABASE_URL ?? '', /@postgres:5432\//);
      assert.ok(
        existsSync(`${ROOT}deploy/compose/${service.build!.context}/${service.build!.dockerfile}`),
        'the Dockerfile is found',
      );
    }
  });

  test(
    'every setting the compose file and .env.example name is in the ' +
      'configuration schema; the stop is never cut short',
    () => {
      const example = read('deploy/compose/.env.example');
      const assigned = [...example.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!] as const);
      for (const [name] of assigned)
        assert.ok(name === 'POSTGRES_PASSWORD' || SETTING_NAMES.has(name), `${name} is a setting`);
      for (const name of tidingsNames(read('deploy/compose/docker-compose.yml') + example))
        assert.ok(SETTING_NAMES.has(name), `${name} is a setting`);
      const env = new Map(assigned);
      const stopMs =
        parseDurationMs(env.get('TIDINGS_SHUTDOWN_GRACE')!) + parseDurationMs(env.get('TIDINGS_SHUTDOWN_TIMEOUT')!);
      for (const name of ['api', 'dispatcher']) {
        assert.ok(
          parseDurationMs(compose.services[name]!.stop_grace_period!) > stopMs,
          `${name}: stop_grace_period above grace + timeout`,
        );
      }
    },
  );
});

describe('helm chart', () => {
  test(
    'renders API and dispatcher Deployments, a pre-install/pre-upgrade ' +
      'migration Job after its Secret, Services and PodDisruptionBudgets',
    () => {
      const docs = render();
      const byKind = (kind: string): Doc[] => docs.filter((d) => d.kind === kind);
      assert.deepEqual(
        byKind('Deployment').map((d) => d.metadata.name),
        ['hooks-tidings-api', 'hooks-tidings-dispatcher'],
      );
      assert.deepEqual(
        byKind('PodDisruptionBudget').map((d) => d.metadata.name),
        ['hooks-tidings-api', 'hooks-tidings-dispatcher'],
      );
      assert.equal(byKind('Service').length, 2);
      assert.equal(byKind('HorizontalPodAutoscaler').length, 0, 'autoscaling is off by default');
      const [job] = byKind('Job');
      const [secret] = byKind('Secret');
      assert.equal(job!.metadata.annotations!['helm.sh/hook'], 'pre-install,pre-upgrade');
      assert.equal(secret!.metadata.annotations!['helm.sh/hook'], 'pre-install,pre-upgrade');
      assert.ok(
        Number(secret!.metadata.annotations!['helm.sh/hook-weight']) <
          Number(job!.metadata.annotations!['helm.sh/hook-weight']),
        'the Secret exists before the Job that reads it',
      );
      assert.deepEqual(
        podOf(job!).containers.map((c) => c.args),
        [['migrate']],
      );
      for (const key of Object.keys((secret as unknown as { stringData: object }).stringData))
        assert.ok(SETTING_NAMES.has(key), `${key} is a setting`);
    },
  );

  test(
    'probes on /livez and /readyz; terminationGracePeriodSeconds ' +
      'above the whole graceful stop; requests; non-root',
    () => {
      for (const doc of render().filter((d) => d.kind === 'Deployment' || d.kind === 'Job')) {
        const pod = podOf(doc);
        assert.equal(pod.securityContext.runAsNonRoot, true);
        for (const container of pod.containers) {
          assert.ok(
            container.resources.requests.cpu && container.resources.requests.memory,
            `${doc.metadata.name}: requests`,
          );
          if (doc.kind === 'Job') continue;
          assert.equal(container.livenessProbe!.httpGet.path, '/livez');
          assert.equal(container.startupProbe!.httpGet.path, '/livez');
          assert.equal(container.readinessProbe!.httpGet.path, '/readyz');
          const env = new Map(container.env.map((e) => [e.name, e.value]));
          const stopMs =
            parseDurationMs(env.get('TIDINGS_SHUTDOWN_GRACE')!) +
            parseDurationMs(env.get('TIDINGS_SHUTDOWN_TIMEOUT')!) +
            Number(container.lifecycle?.preStop.exec.command[1] ?? 0) * 1000;
          assert.ok(
            pod.terminationGracePeriodSeconds! * 1000 > stopMs,
            `${doc.metadata.name}: ${pod.terminationGracePeriodSeconds} s > ${stopMs} ms`,
          );
        }
      }
    },
  );

  test(
    'every environment variable of every container, and every ' +
      'TIDINGS_* name in the chart, is a setting of the schema',
    () => {
      const docs = render({
        config: { TIDINGS_PUBLIC_URL: 'https://hooks.example.com' },
        secret: { ...REQUIRED.secret, apiToken: 'x'.repeat(20) },
      });
      for (const doc of docs.filter((d) => d.kind === 'Deployment' || d.kind === 'Job')) {
        for (const container of podOf(doc).containers) {
          const names = container.env.map((e) => e.name);
          assert.equal(new Set(names).size, names.length, `${doc.metadata.name}: no variable twice`);
          for (const name of names) assert.ok(SETTING_NAMES.has(name), `${doc.metadata.name}: ${name} is a setting`);
        }
      }
      const texts =
        readdirSync(`${CHART}/templates`)
          .map((f) => readFileSync(`${CHART}/templates/${f}`, 'utf8'))
          .join('\n') + read('deploy/helm/tidings/values.yaml');
      for (const name of tidingsNames(texts)) assert.ok(SETTING_NAMES.has(name), `${name} is a setting`);
    },
  );

  test(
    'every .Values path the templates use is declared in ' + 'values.yaml, and every top-level value is documented',
    () => {
      const valuesText = read('deploy/helm/tidings/values.yaml');
      const values = parse(valuesText) as Record<string, unknown>;
      const templates = readdirSync(`${CHART}/templates`)
        .map((f) => readFileSync(`${CHART}/templates/${f}`, 'utf8'))
        .join('\n');
      for (const [, path] of templates.matchAll(/\.Values((?:\.\w+)+)/g)) {
        let node: unknown = values;
        for (const key of path!.slice(1).split('.')) {
          assert.ok(node !== null && typeof node === 'object' && key in node, `values.yaml declares ${path}`);
          node = (node as Record<string, unknown>)[key];
        }
      }
      const lines = valuesText.split('\n');
      lines.forEach((line, i) => {
        if (/^[a-zA-Z]\w*:/.test(line)) assert.match(lines[i - 1] ?? '', /^#/, `values.yaml: a comment above ${line}`);
      });
      const chart = parse(read('deploy/helm/tidings/Chart.yaml')) as { apiVersion: string; appVersion: string };
      assert.equal(chart.apiVersion, 'v2');
      assert.equal(chart.appVersion, (JSON.parse(read('package.json')) as { version: string }).version);
    },
  );

  test(
    'the optional autoscalers: the API on CPU, the dispatchers on the ' +
      "backlog gauge; an existing Secret replaces the chart's",
    () => {
      const docs = render({
        api: { autoscaling: { enabled: true } },
        dispatcher: { autoscaling: { enabled: true } },
        secret: { existingSecret: 'tidings-prod' },
      });
      const hpas = docs.filter((d) => d.kind === 'HorizontalPodAutoscaler');
      assert.equal(hpas.length, 2);
      const external = (
        hpas[1]!.spec.metrics as {
          type: string;
          external: { metric: { name: string; selector: { matchLabels: object } } };
        }[]
      )[0]!;
      assert.equal(external.type, 'External');
      assert.match(
        read('docs/reference/metrics.md'),
        new RegExp(`\\| \`${external.external.metric.name}\` \\|`),
        'a metric Tidings exports',
      );
      assert.deepEqual(external.external.metric.selector.matchLabels, { kind: 'due' });
      assert.ok(
        docs.filter((d) => d.kind === 'Deployment').every((d) => !('replicas' in d.spec)),
        'the autoscaler owns the replica count',
      );
      assert.equal(docs.filter((d) => d.kind === 'Secret').length, 0);
      for (const doc of docs.filter((d) => d.kind === 'Deployment' || d.kind === 'Job')) {
        assert.deepEqual(podOf(doc).containers[0]!.envFrom, [{ secretRef: { name: 'tidings-prod' } }]);
      }
      assert.throws(() => renderChart(CHART, {}), /required: secret\.databaseUrl/);
    },
  );
});
