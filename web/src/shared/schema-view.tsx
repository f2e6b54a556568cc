import { DataTable } from './table.tsx';
import { Pre } from './ui.tsx';

/** The parts of a JSON Schema the view reads (anything else is in the raw text). */
interface Schema {
  type?: string | string[];
  format?: string;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  examples?: unknown[];
  additionalProperties?: unknown;
}
interface Field {
  path: string;
  depth: number;
  type: string;
  required: boolean;
  notes: string;
}

const asSchema = (v: unknown): Schema =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Schema) : {};

/** "string (email)", "array of integer", "one of a, b". */
function typeText(s: Schema): string {
  if (s.enum !== undefined) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (s.const !== undefined) return `exactly ${JSON.stringify(s.const)}`;
  const type = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  if (type === 'array' && s.items !== undefined) return `array of ${typeText(asSchema(s.items))}`;
  return s.format === undefined ? type : `${type} (${s.format})`;
}

/** The fields of an object schema, depth first, at most `maxDepth` levels (deeper ones stay in the raw text). */
export function fieldsOf(schema: Schema, prefix = '', depth = 0, maxDepth = 4): Field[] {
  const out: Field[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    const s = asSchema(raw);
    const path = `${prefix}${name}`;
    out.push({ path, depth, type: typeText(s), required: required.has(name), notes: s.description ?? '' });
    const inner = s.type === 'array' ? asSchema(s.items) : s;
    if (inner.properties !== undefined && depth + 1 < maxDepth)
      out.push(...fieldsOf(inner, `${path}${s.type === 'array' ? '[]' : ''}.`, depth + 1, maxDepth));
  }
  return out;
}

/** One version of a schema: its fields as a table, its examples pretty-printed, the schema's own text folded. */
function VersionView({ name, version, schema }: { name: string; version: string; schema: Schema }) {
  const fields = fieldsOf(schema);
  return (
    <section class="schema-version" aria-label={`${name} version ${version}`}>
      <h3>
        Version {version}{' '}
        <span class="muted">
          · {typeText(schema)}
          {schema.additionalProperties === false ? ', no other fields' : ''}
        </span>
      </h3>
      {schema.description === undefined ? null : <p>{schema.description}</p>}
      {fields.length === 0 ? (
        <p class="muted">No named fields.</p>
      ) : (
        <DataTable
          label={`Fields of ${name} version ${version}`}
          rows={fields}
          rowKey={(f) => f.path}
          columns={[
            { label: 'Field', cell: (f) => <code style={{ marginLeft: `${f.depth * 1.1}rem` }}>{f.path}</code> },
            { label: 'Type', cell: (f) => f.type },
            { label: 'Required', cell: (f) => (f.required ? 'required' : <span class="muted">optional</span>) },
            { label: 'Description', cell: (f) => f.notes || <span class="muted">—</span> },
          ]}
        />
      )}
      {(schema.examples ?? []).map((example, i) => (
        <Pre key={i} label={`Example ${i + 1} of ${name} version ${version}`} text={JSON.stringify(example, null, 2)} />
      ))}
      <details>
        <summary>JSON Schema text</summary>
        <Pre label={`JSON Schema of ${name} version ${version}`} text={JSON.stringify(schema, null, 2)} />
      </details>
    </section>
  );
}

/** An event type's schemas by version, shown as structure (fields, types, required, examples), newest first. */
export function SchemaView({ name, schemas }: { name: string; schemas: Record<string, unknown> | null }) {
  if (schemas === null || Object.keys(schemas).length === 0)
    return <p class="muted">No schema: any JSON payload is accepted.</p>;
  const versions = Object.keys(schemas).sort((a, b) => Number(b) - Number(a) || b.localeCompare(a));
  return (
    <>
      {versions.map((v) => (
        <VersionView key={v} name={name} version={v} schema={asSchema(schemas[v])} />
      ))}
    </>
  );
}
