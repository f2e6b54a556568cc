/** One failing field of a 422 validation error, in the Svix/FastAPI shape. */
export interface ValidationIssue {
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly type: string;
}
