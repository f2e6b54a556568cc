import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * A counter on `registry` with the one label `label`, each of whose `values` starts at 0 (so that a rate over any
 * of them is defined from the first scrape).
 */
export function zeroedCounter<L extends string>(
  registry: Registry,
  metric: { readonly name: string; readonly help: string },
  label: L,
  values: readonly string[],
): Counter<L> {
  const counter = new Counter({ ...metric, labelNames: [label], registers: [registry] });
  for (const value of values) counter.inc({ [label]: value } as Partial<Record<L, string>>, 0);
  return counter;
}

/** A gauge on `registry` read at each scrape: 1 while `up()` holds, else 0. */
export function upGauge(
  registry: Registry,
  metric: { readonly name: string; readonly help: string },
  up: () => boolean,
) {
  new Gauge({
    ...metric,
    registers: [registry],
    collect() {
      this.set(up() ? 1 : 0);
    },
  });
}
