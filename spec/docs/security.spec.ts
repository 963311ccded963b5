// docs/security.md shows the roles' permissions as a table; it must be what the NATS server is given.
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rolesTable } from '../../runtime/auth/roles.ts';

const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');

test('the roles table in docs/security.md is the permissions orrery auth init writes (cluster "default")', () => {
  const m = /<!-- roles-table -->\n([\s\S]*?)\n<!-- \/roles-table -->/.exec(doc);
  assert.ok(m, 'docs/security.md has the roles-table markers');
  assert.fixture(m![1], rolesTable('default'));
});

test('every error code the security docs name is one the code raises', () => {
  const codes = [...doc.matchAll(/`([A-Z][A-Z_]{4,})`/g)].map((x) => x[1]);
  const sources = ['lib', 'protocols', 'runtime'].flatMap((dir) => readdirSync(new URL(`../../${dir}/`, import.meta.url), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(new URL(`../../${dir}/${f}`, import.meta.url), 'utf8'))).join('\n');
  const env = new Set(['ORRERY_CREDS', 'ORRERY_TLS_CA', 'ORRERY_TLS_CERT', 'ORRERY_TLS_KEY', 'ORRERY_CODE_ROOTS', 'ORRERY_ADDRESS']);
  for (const code of new Set(codes)) {
    if (env.has(code)) continue;
    assert.ok(sources.includes(`'${code}'`), `${code} is raised somewhere`);
  }
});

test.run();
