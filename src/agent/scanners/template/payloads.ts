// Payload combinations as nuclei's attack types make them: batteringram sends the same value of
// every payload together (the lists read in step), pitchfork pairs the n-th values of the lists (up to
// the shortest), clusterbomb tries every combination. No payloads: one empty combination.
import type { RequestBlock } from './model.ts';

export function* payloadCombinations(
  payloads: RequestBlock['payloads'],
  attack: RequestBlock['attack'],
): Generator<Map<string, string>> {
  if (!payloads.length) {
    yield new Map();
    return;
  }
  if (attack === 'clusterbomb') {
    const idx = payloads.map(() => 0);
    if (payloads.some(([, v]) => !v.length)) return;
    for (;;) {
      yield new Map(payloads.map(([k, v], i) => [k, v[idx[i]!]!]));
      let i = payloads.length - 1;
      while (i >= 0 && ++idx[i]! >= payloads[i]![1].length) idx[i--] = 0;
      if (i < 0) return;
    }
  }
  // batteringram (a single list) or pitchfork (lists read in step, up to the shortest).
  const n = Math.min(...payloads.map(([, v]) => v.length));
  for (let i = 0; i < n; i++) yield new Map(payloads.map(([k, v]) => [k, v[i]!]));
}
