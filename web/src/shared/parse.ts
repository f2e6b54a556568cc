/** Parsers of form fields: plain functions of the text typed (unit tests beside them). */

/** A comma-separated field as a list (null when empty). */
export const listField = (text: string): string[] | null => {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.length === 0 ? null : items;
};

/** A local `datetime-local` value read as UTC, as an ISO instant; undefined when empty. */
export const isoOf = (local: string): string | undefined =>
  local === '' ? undefined : new Date(`${local}Z`).toISOString();
