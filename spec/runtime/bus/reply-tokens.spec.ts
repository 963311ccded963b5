// The two kinds of reply token of runtime/bus/reply-tokens.ts: an unguessable one (a raylet's
// requests to the GCS, answered into the inbox every node-role connection reads) is never handed
// out twice, nor is it one a counter would give; a reused one is handed out again once its answer
// arrived, so the server's caches stay warm. Both kinds come from one connection.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ReplyTokens } from '../../../runtime/bus/reply-tokens.ts';

test('unguessable: 10,000 request tokens, none repeated though every one was answered, each 128 random bits after R', () => {
  const tokens = new ReplyTokens();
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const t = tokens.unguessable();
    assert.match(t, /^R[A-Za-z0-9_-]{22}$/);
    assert.not.ok(seen.has(t), `token ${t} handed out twice`);
    seen.add(t);
    tokens.answered(t);
  }
  // none is what a counter in base 36 would give: every one has the R no base-36 token has
  assert.ok([...seen].every((t) => !/^[0-9a-z]+$/.test(t)));
});

test('one connection, both kinds: an answered unguessable token does not join the reused ones', () => {
  const tokens = new ReplyTokens();
  const counted = tokens.request();
  const random = tokens.unguessable();
  tokens.answered(random);
  tokens.answered(counted);
  assert.is(tokens.request(), counted);
  assert.is(tokens.request(), '1', 'the random token was not handed out as a reused one');
});

test('reused (the default): a counter in base 36, and an answered token is handed out again, last answered first', () => {
  const tokens = new ReplyTokens();
  const [a, b, c] = [tokens.request(), tokens.request(), tokens.request()];
  assert.equal([a, b, c], ['0', '1', '2']);
  tokens.answered(a);
  tokens.answered(c);
  assert.is(tokens.request(), c);
  assert.is(tokens.request(), a);
  assert.is(tokens.request(), '3', 'a token not answered (timed out, refused) is never handed out again');
  const batch = tokens.batch();
  assert.is(batch, '_0');
  tokens.batchAnswered(batch);
  assert.is(tokens.batch(), '_0');
});

test.run();
