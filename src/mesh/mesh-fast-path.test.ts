import { describe, expect, it } from 'vitest';
import { createAnswerBatch } from './mesh-fast-path.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createAnswerBatch', () => {
  it('writes nothing while the turn runs, then every answer of the turn in the order given', async () => {
    const batch = createAnswerBatch();
    const sent: string[] = [];
    batch.push(() => sent.push('a'));
    await Promise.resolve(); // microtasks of the same turn (a dispatcher's promise) still batch
    batch.push(() => sent.push('b'));
    batch.push(() => sent.push('c'));
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual(['a', 'b', 'c']);
  });

  it('leaves an answer pushed while a batch is written for the next turn', async () => {
    const batch = createAnswerBatch();
    const sent: string[] = [];
    batch.push(() => {
      sent.push('first');
      batch.push(() => sent.push('later'));
    });
    await nextTurn();
    expect(sent).toEqual(['first']);
    await nextTurn();
    expect(sent).toEqual(['first', 'later']);
  });
});
