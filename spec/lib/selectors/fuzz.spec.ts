import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { parseLabelsFlag, parseLabelsYaml } from '../../../lib/labels/parse.ts';
import { validateLabelKey, validateLabelValue } from '../../../lib/labels/validate.ts';
import { randomInt, seededRng, type Rng } from '../../../lib/random.ts';
import { validateExpression } from '../../../lib/selectors/builders.ts';
import { formatSelectorValue, parseSelectorValue } from '../../../lib/selectors/parse.ts';

const RUNS = 10_000;

// Oracles written independently of lib/labels/validate.ts, straight from the Kubernetes regexes.
const SEGMENT = /^(?:[A-Za-z0-9](?:[-_.A-Za-z0-9]*[A-Za-z0-9])?)?$/;
const PREFIX = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const oracleValue = (v: string) => v.length <= 63 && SEGMENT.test(v);
function oracleKey(k: string, allowReserved: boolean): boolean {
  const parts = k.split('/');
  const name = parts[parts.length - 1];
  if (parts.length > 2 || name === '' || !oracleValue(name)) return false;
  if (parts.length === 1) return true;
  const prefix = parts[0];
  const reserved = prefix === 'orrery.io' || prefix.endsWith('.orrery.io');
  return prefix.length <= 253 && PREFIX.test(prefix) && (allowReserved || !reserved);
}

const SEEDS = [
  'in(a,b)', '!in(x, y)', 'exists()', '!exists()', 'IN( a , b )', 'Exists()', 'gt(4)', 'lt(10)', 'v', '!v', '',
  'k=v,k2=v2', ' zone = us , rack=r1 ', 'example.com/zone=us-east-1', 'orrery.io/node-id=n1', 'gpu_type', 'a.b-c_d',
  'a: b\nc: 1', 'zone: us-west4-a\nspot: true', '{a: [1]}', '- a\n- b', 'a: &x 1\nb: *x', 'orrery.io/node-id', 'A100',
];
const SPECIAL = '()!,=/.-_ :\n\t{}[]#&*"\'|>%@`?';
const UNICODE = ['é', 'ü', 'İ', 'ß', '中', '😀', '\u0000', '\u200b', '\u202e', '\ud800', '\udfff', '\ufeff', '\u0301', '\u00a0'];

function randomChar(rng: Rng): string {
  const pick = randomInt(rng, 10);
  if (pick < 4) return String.fromCharCode(32 + randomInt(rng, 95));
  if (pick < 7) return SPECIAL[randomInt(rng, SPECIAL.length)];
  if (pick < 9) return UNICODE[randomInt(rng, UNICODE.length)];
  return String.fromCharCode(randomInt(rng, 0x3000));
}

function randomString(rng: Rng, maxLength: number): string {
  let s = '';
  for (let n = randomInt(rng, maxLength + 1); n > 0; n--) s += randomChar(rng);
  return s;
}

function mutate(rng: Rng, input: string): string {
  let s = input;
  for (let n = 1 + randomInt(rng, 4); n > 0; n--) {
    const at = randomInt(rng, s.length + 1);
    switch (randomInt(rng, 7)) {
      case 0: s = s.slice(0, at) + randomChar(rng) + s.slice(at); break;
      case 1: s = s.slice(0, at) + s.slice(at + 1); break;
      case 2: s = s.slice(0, at) + randomChar(rng) + s.slice(at + 1); break;
      case 3: s = s.slice(0, at) + s.slice(randomInt(rng, s.length + 1)) + s.slice(at); break;
      case 4: s = s.slice(0, at) + (s[at] ?? '').toUpperCase() + s.slice(at + 1); break;
      case 5: s = s + (rng() < 0.5 ? ',' : '\n') + SEEDS[randomInt(rng, SEEDS.length)]; break;
      default: s = s.slice(0, at);
    }
  }
  return s;
}

function generate(rng: Rng): string {
  const kind = randomInt(rng, 8);
  if (kind < 3) return randomString(rng, 40);
  if (kind < 5) return mutate(rng, SEEDS[randomInt(rng, SEEDS.length)]);
  if (kind < 6) return SEEDS[randomInt(rng, SEEDS.length)];
  if (kind < 7) return 'a'.repeat(50 + randomInt(rng, 220)) + (rng() < 0.5 ? '' : '/x');
  return `${rng() < 0.5 ? '!' : ''}in(${Array.from({ length: randomInt(rng, 4) }, () => mutate(rng, 'val1')).join(',')})`;
}

type Check = (input: string) => string | undefined;

function checkLabels(labels: Readonly<Record<string, string>>): string | undefined {
  for (const [k, v] of Object.entries(labels)) {
    if (!oracleKey(k, false)) return `returned an invalid user key ${JSON.stringify(k)}`;
    if (typeof v !== 'string' || !oracleValue(v)) return `returned an invalid value ${JSON.stringify(v)}`;
  }
  return Object.isFrozen(labels) ? undefined : 'returned a mutable record';
}

const subjects: Record<string, Check> = {
  parseLabelsFlag: (s) => checkLabels(parseLabelsFlag(s)),
  parseLabelsYaml: (s) => checkLabels(parseLabelsYaml(s)),
  validateLabelKey: (s) => {
    const reservedOk = oracleKey(s, true);
    let accepted = true;
    try {
      validateLabelKey(s, { allowReserved: true });
    } catch {
      accepted = false;
    }
    if (accepted !== reservedOk) return `allowReserved: accepted=${accepted} but the oracle says ${reservedOk}`;
    const out = validateLabelKey(s);
    return out === s && oracleKey(s, false) ? undefined : 'accepted a key the oracle rejects';
  },
  validateLabelValue: (s) => (validateLabelValue('k', s) === s && oracleValue(s) ? undefined : 'accepted a value the oracle rejects'),
  parseSelectorValue: (s) => {
    const expr = parseSelectorValue('k', s);
    assert.equal(validateExpression(expr), expr);
    const bad = expr.values.find((v) => !oracleValue(v) || ((expr.operator === 'GT' || expr.operator === 'LT') && !/^\d+$/.test(v)));
    if (bad !== undefined) return `returned an invalid value ${JSON.stringify(bad)}`;
    const again = parseSelectorValue('k', formatSelectorValue(expr));
    return JSON.stringify(again) === JSON.stringify(expr) ? undefined : `does not round-trip: ${JSON.stringify(expr)} → ${JSON.stringify(again)}`;
  },
};

test(`fuzz: ${RUNS} inputs either parse to valid results or throw an OrreryError with a code`, () => {
  const rng = seededRng(20240601);
  const inputs = Array.from({ length: RUNS }, () => generate(rng));
  const tally: Record<string, { ok: number; rejected: number }> = {};
  const failures: string[] = [];
  for (const [name, check] of Object.entries(subjects)) {
    tally[name] = { ok: 0, rejected: 0 };
    for (const input of inputs) {
      let problem: string | undefined;
      try {
        problem = check(input);
        tally[name].ok++;
      } catch (err) {
        if (err instanceof OrreryError && typeof err.code === 'string' && err.code !== '') tally[name].rejected++;
        else problem = `threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
      }
      if (problem && failures.length < 1) failures.push(`${name}(${JSON.stringify(input)}) ${problem}`);
    }
  }
  assert.equal(failures, [], failures[0]);
  for (const [name, t] of Object.entries(tally)) {
    assert.ok(t.ok >= 50 && t.rejected >= 50, `${name} should see both outcomes often: ${JSON.stringify(t)}`);
  }
});

test('fuzz: the generator is reproducible from its seed', () => {
  const a = seededRng(7);
  const b = seededRng(7);
  assert.equal(Array.from({ length: 50 }, () => generate(a)), Array.from({ length: 50 }, () => generate(b)));
});

test.run();
