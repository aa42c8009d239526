// Evidence-review PDFs are read on threads of their own (src/llm/llm-extract.ts): several files of
// one request in parallel, answers in the order of the upload, and a cancelled request stops its
// reading without leaving a thread busy for the next one.
import { describe, expect, it } from 'vitest';
import { extractDocuments, EXTRACT_LIMITS } from '../../src/llm/index.ts';
import { makeTextPdf } from '../helpers/llm-server.ts';

describe('PDF extraction threads', () => {
  it('reads the files of one request in parallel and answers in upload order', async () => {
    const files = await Promise.all(
      Array.from({ length: 7 }, async (_, i) => ({
        fileName: `policy-${i}.pdf`,
        data: await makeTextPdf(
          Array.from(
            { length: 3 + (6 - i) * 4 },
            (_, p) => `Policy ${i} page ${p + 1}: access control for document ${i}.`,
          ),
        ),
      })),
    );
    const docs = await extractDocuments([
      ...files,
      { fileName: 'notes.txt', data: Buffer.from('Backups run nightly.') },
    ]);
    expect(docs.map((d) => d.fileName)).toEqual([...files.map((f) => f.fileName), 'notes.txt']);
    for (const [i, d] of docs.slice(0, 7).entries()) {
      expect(d).toMatchObject({ kind: 'pdf', assessable: true, pageCount: 3 + (6 - i) * 4 });
      expect(d.pages[0]).toBe(`Policy ${i} page 1: access control for document ${i}.`);
    }
    // Two requests at once share the threads and each gets its own files back.
    const [a, b] = await Promise.all([extractDocuments(files.slice(0, 4)), extractDocuments(files.slice(4))]);
    expect([...a, ...b].map((d) => d.pages[0]!.slice(0, 8))).toEqual(files.map((_, i) => `Policy ${i}`));
  });

  it('a cancelled request rejects and leaves the threads free for the next one', async () => {
    const long = await makeTextPdf(
      Array.from({ length: 300 }, (_, p) => `Page ${p + 1} of the long policy: passwords, MFA, visitor logs.`),
    );
    const ac = new AbortController();
    const reading = extractDocuments(
      [long, long, long].map((data, i) => ({ fileName: `long-${i}.pdf`, data })),
      EXTRACT_LIMITS,
      ac.signal,
    );
    ac.abort();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    const [d] = await extractDocuments([
      { fileName: 'after.pdf', data: await makeTextPdf(['Read after a cancelled request.']) },
    ]);
    expect(d).toMatchObject({ assessable: true, pages: ['Read after a cancelled request.'] });
  });
});
