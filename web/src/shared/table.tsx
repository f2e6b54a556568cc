import type { ComponentChildren } from 'preact';

/** One column of a {@link DataTable}: its heading, and the cell of a row. */
export interface Column<T> {
  readonly label: string;
  /** The heading is read by screen readers only (a column of buttons or check boxes). */
  readonly hideLabel?: boolean;
  readonly cell: (row: T) => ComponentChildren;
}

/**
 * A table whose every cell carries its column's name (`data-label`): at phone width the rows become cards
 * and each cell shows that name before its value (styles.css), so no cell loses its meaning.
 */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  label,
  class: cls,
}: {
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  label?: string;
  class?: string;
}) {
  const head = (c: Column<T>) => (c.hideLabel === true ? <span class="sr-only">{c.label}</span> : c.label);
  return (
    <table class={cls} aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" key={c.label}>
              {head(c)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={rowKey(r)}>
            {columns.map((c) => (
              <td key={c.label} data-label={c.hideLabel === true ? undefined : c.label}>
                {c.cell(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
