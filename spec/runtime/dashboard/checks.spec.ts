// The dashboard's Hono glue (runtime/dashboard/checks.ts) without a server: which request targets
// are paths (400 BAD_REQUEST otherwise), and the 405 that Hono's router does not give by itself —
// each routed path answers other methods naming the allowed ones, HEAD going with GET.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Hono } from 'hono';
import { answerOtherMethods, requestUrl } from '../../../runtime/dashboard/checks.ts';
import { HttpError, errorResponse } from '../../../runtime/dashboard/http.ts';

const TARGETS: { target: string | undefined; pathname?: string; why?: RegExp }[] = [
  { target: '/', pathname: '/' },
  { target: '/api/nodes?limit=5', pathname: '/api/nodes' },
  { target: '/api/nodes/a%2Fb/labels', pathname: '/api/nodes/a%2Fb/labels' },
  { target: '/%25', pathname: '/%25' },
  { target: '/api/actors/%E0%A4%A', why: /percent-escape does not decode/ },
  { target: '/%zz', why: /percent-escape/ },
  { target: '/%ff%fe', why: /percent-escape/ },
  { target: 'http://evil.example/api/nodes', why: /expected a path/ },
  { target: '*', why: /expected a path/ },
  { target: '', why: /expected a path/ },
  { target: undefined, why: /expected a path/ },
];

test('requestUrl: a path whose escapes decode is its URL; anything else is 400 BAD_REQUEST', () => {
  for (const c of TARGETS) {
    if (c.pathname !== undefined) {
      assert.is(requestUrl(c.target).pathname, c.pathname, String(c.target));
      continue;
    }
    try {
      requestUrl(c.target);
      assert.unreachable(`${c.target} was taken`);
    } catch (err) {
      assert.instance(err, HttpError);
      assert.equal([(err as HttpError).status, (err as HttpError).code], [400, 'BAD_REQUEST']);
      assert.match((err as HttpError).message, c.why!);
    }
  }
});

test('answerOtherMethods: 405 METHOD_NOT_ALLOWED with the allowed methods of the path; its own methods, HEAD and unknown paths as before', async () => {
  const app = new Hono();
  app.onError(errorResponse);
  app.get('/items', (c) => c.text('list'));
  app.post('/items', (c) => c.text('made'));
  app.delete('/items/:id', (c) => c.text(`gone ${c.req.param('id')}`));
  app.use('/items/*', async (_c, next) => next());
  answerOtherMethods(app);

  const cases: { method: string; path: string; status: number; text?: string; message?: string }[] = [
    { method: 'GET', path: '/items', status: 200, text: 'list' },
    { method: 'HEAD', path: '/items', status: 200, text: '' },
    { method: 'POST', path: '/items', status: 200, text: 'made' },
    { method: 'DELETE', path: '/items/7', status: 200, text: 'gone 7' },
    { method: 'PUT', path: '/items', status: 405, message: 'PUT is not allowed on /items (allowed: GET, POST)' },
    { method: 'GET', path: '/items/7', status: 405, message: 'GET is not allowed on /items/7 (allowed: DELETE)' },
    { method: 'GET', path: '/other', status: 404 },
  ];
  for (const c of cases) {
    const res = await app.request(c.path, { method: c.method });
    assert.is(res.status, c.status, `${c.method} ${c.path}`);
    if (c.text !== undefined) assert.is(await res.text(), c.text);
    if (c.message !== undefined) assert.equal(await res.json(), { code: 'METHOD_NOT_ALLOWED', message: c.message });
  }
});

test.run();
