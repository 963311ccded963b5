import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkCodeSource, CodeSourceReason, CodeSourceRefusedError, codeSourceVerdict, parseShippedCode, shippedCodeUrl, type CodeSourcePolicy } from '../../protocols/code-source.ts';
import { decode, encode } from '../../protocols/codec.ts';

// Which module URLs a worker host may load (protocols/code-source.ts): file: URLs of this machine,
// and with code roots only files beneath one of them. Everything else is refused with a stable reason.

const ROOTS: CodeSourcePolicy = { roots: ['/srv/code', '/opt/shared/'] };

const accepted: { name: string; url: string; policy?: CodeSourcePolicy; path: string }[] = [
  { name: 'a file: URL', url: 'file:///home/me/app/actors.ts', path: '/home/me/app/actors.ts' },
  { name: 'a file: URL on localhost', url: 'file://localhost/home/me/app/actors.js', path: '/home/me/app/actors.js' },
  { name: 'a file: URL with a query (a second module instance)', url: 'file:///home/me/a.ts?v=2', path: '/home/me/a.ts' },
  { name: 'a file under a code root', url: 'file:///srv/code/app/actors.ts', policy: ROOTS, path: '/srv/code/app/actors.ts' },
  { name: 'a file under the second root (given with a trailing slash)', url: 'file:///opt/shared/t.js', policy: ROOTS, path: '/opt/shared/t.js' },
  { name: 'any file when the roots are empty', url: 'file:///tmp/x.js', policy: { roots: [] }, path: '/tmp/x.js' },
];

const refused: { name: string; url: string; policy?: CodeSourcePolicy; reason: CodeSourceReason; scheme?: string }[] = [
  { name: 'a node: builtin', url: 'node:child_process', reason: CodeSourceReason.SCHEME, scheme: 'node:' },
  { name: 'a data: module', url: 'data:text/javascript,export const x = 1', reason: CodeSourceReason.SCHEME, scheme: 'data:' },
  { name: 'an https: module', url: 'https://example.com/actors.js', reason: CodeSourceReason.SCHEME, scheme: 'https:' },
  { name: 'an http: module', url: 'http://127.0.0.1:8080/actors.js', reason: CodeSourceReason.SCHEME, scheme: 'http:' },
  { name: 'a blob: URL', url: 'blob:nodedata:1234', reason: CodeSourceReason.SCHEME, scheme: 'blob:' },
  { name: 'a javascript: URL', url: 'javascript:process.exit(1)', reason: CodeSourceReason.SCHEME, scheme: 'javascript:' },
  { name: 'a bare package name', url: 'child_process', reason: CodeSourceReason.NOT_A_URL },
  { name: 'a relative URL', url: './actors.js', reason: CodeSourceReason.NOT_A_URL },
  { name: 'an absolute path (not a URL)', url: '/home/me/actors.ts', reason: CodeSourceReason.NOT_A_URL },
  { name: 'an empty string', url: '', reason: CodeSourceReason.NOT_A_URL },
  { name: 'garbage', url: '%%%', reason: CodeSourceReason.NOT_A_URL },
  { name: 'a file: URL naming another host', url: 'file://fileserver/share/actors.js', reason: CodeSourceReason.REMOTE_FILE },
  { name: 'a file: URL with an encoded slash', url: 'file:///srv/code%2F..%2Fetc/x.js', reason: CodeSourceReason.NOT_A_PATH },
  { name: 'a file outside the code roots', url: 'file:///home/me/actors.ts', policy: ROOTS, reason: CodeSourceReason.OUTSIDE_ROOTS },
  { name: 'a sibling sharing the root as a prefix', url: 'file:///srv/code-evil/actors.ts', policy: ROOTS, reason: CodeSourceReason.OUTSIDE_ROOTS },
  { name: 'a climb out of a root with ..', url: 'file:///srv/code/../etc/x.js', policy: ROOTS, reason: CodeSourceReason.OUTSIDE_ROOTS },
  { name: 'a climb with an encoded ..', url: 'file:///srv/code/%2e%2e/etc/x.js', policy: ROOTS, reason: CodeSourceReason.OUTSIDE_ROOTS },
  { name: 'a non-file scheme under roots too', url: 'node:fs', policy: ROOTS, reason: CodeSourceReason.SCHEME, scheme: 'node:' },
];

for (const c of accepted) {
  test(`accepted: ${c.name}`, () => {
    assert.equal(codeSourceVerdict(c.url, c.policy), { ok: true, path: c.path });
    assert.is(checkCodeSource(c.url, c.policy), c.path);
  });
}

for (const c of refused) {
  test(`refused: ${c.name}`, () => {
    const verdict = codeSourceVerdict(c.url, c.policy);
    assert.equal(verdict, c.scheme === undefined ? { ok: false, reason: c.reason } : { ok: false, reason: c.reason, scheme: c.scheme });
    try {
      checkCodeSource(c.url, c.policy);
      assert.unreachable('accepted');
    } catch (err) {
      assert.instance(err, CodeSourceRefusedError);
      const e = err as CodeSourceRefusedError;
      assert.is(e.code, 'CODE_SOURCE_REFUSED');
      assert.is(e.detail.reason, c.reason);
      assert.is(e.detail.moduleUrl, c.url);
      assert.is(e.detail.scheme, c.scheme);
    }
  });
}

test('a refused data: URL holding a whole program is clipped in the error', () => {
  const url = `data:text/javascript,${'x'.repeat(5000)}`;
  const err = new CodeSourceRefusedError(url, CodeSourceReason.SCHEME);
  assert.is(String(err.detail.moduleUrl).length, 201);
  assert.ok(String(err.detail.moduleUrl).endsWith('…'));
  assert.ok(err.message.length < 300);
});

const submit = (moduleUrl: string) => ({ taskId: 't1', code: { moduleUrl, functionName: 'execSync', args: ['id'] }, namespace: 'default', options: {}, hops: 0, attempt: 0 });
const register = (moduleUrl: string) => ({ actorId: 'a1', code: { moduleUrl, className: 'C', args: [] }, namespace: 'default', options: {} });

test('every message carrying code refuses a module URL the cluster does not load, with CODE_SOURCE_REFUSED', () => {
  const bodies: [string, unknown][] = [
    ['submit_task', submit('node:child_process')],
    ['leased_task', { leaseId: 'l1', taskId: 't1', code: submit('data:text/javascript,1').code, attempt: 0 }],
    ['register_actor', register('data:text/javascript,globalThis.pwned=1')],
    ['create_actor', { ...register('https://example.com/a.js'), labels: {}, resources: {}, maxConcurrency: 1, isolation: 'shared', incarnation: 0 }],
  ];
  for (const [type, body] of bodies) {
    try {
      decode(encode(type, body));
      assert.unreachable(`${type} accepted`);
    } catch (err) {
      assert.instance(err, CodeSourceRefusedError, type);
      assert.is((err as CodeSourceRefusedError).code, 'CODE_SOURCE_REFUSED', type);
    }
  }
});

test('messages carrying a file: URL decode as before', () => {
  assert.equal(decode(encode('submit_task', submit('file:///app/tasks.js'))).body, submit('file:///app/tasks.js'));
  assert.equal(decode(encode('register_actor', register('file:///app/actors.js'))).body, register('file:///app/actors.js'));
});

const HASH = '0123456789abcdef'.repeat(4);

test('shipped code (orrery-code:<hash>/<path>) is accepted whatever the code roots, with its hash and path', () => {
  const url = shippedCodeUrl({ hash: HASH, path: 'actors/counter.ts' });
  assert.is(url, `orrery-code:${HASH}/actors/counter.ts`);
  const shipped = { hash: HASH, path: 'actors/counter.ts' };
  assert.equal(codeSourceVerdict(url), { ok: true, path: 'actors/counter.ts', shipped });
  assert.equal(codeSourceVerdict(url, ROOTS), { ok: true, path: 'actors/counter.ts', shipped });
  assert.equal(parseShippedCode(url), shipped);
  assert.equal(decode(encode('register_actor', register(url))).body, register(url));
  assert.equal(decode(encode('submit_task', submit(url))).body, submit(url));
});

test('a malformed shipped-code URL is refused: the path cannot leave the bundle, the hash is 64 hex', () => {
  for (const url of [
    `orrery-code:${HASH}/../etc/passwd`,
    `orrery-code:${HASH}/a/./b.ts`,
    `orrery-code:${HASH}//abs.ts`,
    `orrery-code:${HASH}/a\\b.ts`,
    `orrery-code:${HASH}/`,
    `orrery-code:${HASH}`,
    `orrery-code:${HASH.toUpperCase()}/a.ts`,
    `orrery-code:${HASH.slice(1)}/a.ts`,
    'orrery-code://host/a.ts',
  ]) {
    assert.equal(codeSourceVerdict(url), { ok: false, reason: CodeSourceReason.BAD_SHIPPED }, url);
    assert.is(parseShippedCode(url), undefined, url);
    assert.throws(() => decode(encode('register_actor', register(url))), (err: unknown) => err instanceof CodeSourceRefusedError, url);
  }
});

test.run();
