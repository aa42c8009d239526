import { PGlite } from '@electric-sql/pglite';
const mb = (x) => Math.round(x / 1048576);
let peak = 0; const s = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 10);
const t0 = performance.now();
const pg = await PGlite.create(process.argv[2], {});
const t1 = performance.now();
await pg.exec('create temp table t (id int primary key, body text, j jsonb)');
const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, body: 'x'.repeat(500) + i, j: { a: i, b: 'y'.repeat(200) } }));
for (let k = 0; k < 20; k++) {
  await pg.query('insert into t select * from json_to_recordset($1::json) as r(id int, body text, j jsonb) on conflict (id) do update set body = excluded.body', [JSON.stringify(rows)]);
}
const r = await pg.query("select count(*), sum(length(body)) from t where body like '%99%'");
const t2 = performance.now();
clearInterval(s); peak = Math.max(peak, process.memoryUsage().rss);
console.log(`create ${Math.round(t1 - t0)} ms work ${Math.round(t2 - t1)} ms rss ${mb(process.memoryUsage().rss)} peak ${mb(peak)}`);
await pg.close();
