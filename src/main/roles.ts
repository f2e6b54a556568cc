/** Which roles this process runs (docs/design.md#scale): `serve` = both; `api`; `dispatcher`. */
export interface Roles {
  readonly api: boolean;
  readonly dispatcher: boolean;
}
