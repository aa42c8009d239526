// The brand identifier carried as payload.brand on every event to the management peer (the
// reporter, the relay and the CMMC events set it; the outbox stamps it on any event_report that
// lacks it, so a new emitter cannot forget it).
export const BRAND = 'rampart';

/** An event_report payload with `brand` set (kept when the emitter set one). */
export function withBrand(payload: Record<string, unknown>): Record<string, unknown> {
  return typeof payload['brand'] === 'string' ? payload : { ...payload, brand: BRAND };
}
