/** SQLSTATE codes the adapters map (PostgreSQL Appendix A). Raw pg errors never escape the adapter. */
export const SqlState = Object.freeze({
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  lockNotAvailable: '55P03',
  queryCanceled: '57014',
} as const);

/** The SQLSTATE of a pg error, or undefined. */
export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof (error as { code: unknown }).code === 'string' ? (error as { code: string }).code : undefined;
}

/** The constraint name of a pg error, or undefined. */
export function constraintOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'constraint' in error ? String((error as { constraint: unknown }).constraint) : undefined;
}
