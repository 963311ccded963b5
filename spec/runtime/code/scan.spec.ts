// The import scanner of shipped code (runtime/code/scan.ts): which specifiers a source imports at
// run time, in TypeScript and JavaScript, without being fooled by comments, strings or regexes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { scanImports } from '../../../runtime/code/scan.ts';

const cases: { name: string; source: string; want: string[] }[] = [
  { name: 'default, named and namespace imports', source: `import a from './a.ts';\nimport { b, c as d } from "./b.js";\nimport * as e from '../e.mjs';`, want: ['./a.ts', './b.js', '../e.mjs'] },
  { name: 'a side-effect import', source: `import './setup.ts';`, want: ['./setup.ts'] },
  { name: 'a default and named import together, over lines', source: `import x, {\n  y,\n  z,\n} from './xyz';`, want: ['./xyz'] },
  { name: 're-exports', source: `export * from './all.ts';\nexport * as ns from './ns.ts';\nexport { a, b as c } from './ab.ts';`, want: ['./all.ts', './ns.ts', './ab.ts'] },
  { name: 'a local export list is not an import', source: `const a = 1;\nexport { a };\nexport default a;`, want: [] },
  { name: 'dynamic import with a literal', source: `const m = await import('./lazy.ts');`, want: ['./lazy.ts'] },
  { name: 'dynamic import with an expression is not followed', source: `const m = await import(name); import(\`./t-\${x}.ts\`);`, want: [] },
  { name: 'require and TypeScript import-equals', source: `const fs = require('node:fs');\nimport cfg = require('./cfg.cjs');`, want: ['node:fs', './cfg.cjs'] },
  { name: 'import type is erased', source: `import type { T } from './types.ts';\nimport type * as N from './n.ts';\nimport { type U, v } from './uv.ts';`, want: ['./uv.ts'] },
  { name: 'export type is erased', source: `export type { T } from './types.ts';\nexport type * from './more.ts';\nexport { type U } from './u.ts';`, want: ['./u.ts'] },
  { name: 'a default import named type is not type-only', source: `import type from './type.ts';\nimport type, { a } from './ta.ts';`, want: ['./type.ts', './ta.ts'] },
  { name: 'import.meta is not an import', source: `const here = import.meta.url; const u = new URL('./x.ts', import.meta.url);`, want: [] },
  { name: 'comments are skipped', source: `// import a from './line.ts';\n/* import b from './block.ts'; */\n/** @see import('./doc.ts') */\nimport c from './real.ts';`, want: ['./real.ts'] },
  { name: 'strings that look like imports are not imports', source: `const s = "import a from './in-string.ts'";\nconst t = 'export * from "./also.ts"';`, want: [] },
  { name: 'template literals, with code in their substitutions', source: "const s = `import x from './tpl.ts' ${await import('./sub.ts')} done`;", want: ['./sub.ts'] },
  { name: 'a regular expression with quotes and slashes', source: `const re = /import '.\\/x'|["']/g;\nimport a from './after-regex.ts';`, want: ['./after-regex.ts'] },
  { name: 'division is not a regex', source: `const half = total / 2; const q = (a) / b / c;\nimport z from './z.ts';`, want: ['./z.ts'] },
  { name: 'a method called import is not an import', source: `loader.import('./not.ts'); obj?.require('./nor.ts');`, want: [] },
  { name: 'TypeScript syntax around the imports', source: `import { a } from './a.ts';\nexport class C<T extends Record<string, unknown>> implements I { private x: T[] = []; m(): Promise<void> { return import('./m.ts'); } }\nexport const f = <T,>(x: T): T => x;\nenum E { A = 1 }\ndeclare module './aug.ts' {}`, want: ['./a.ts', './m.ts'] },
  { name: 'decorators and private fields', source: `@decorate() class K { #p = 1; @field x = '/'; }\nimport y from './y.ts';`, want: ['./y.ts'] },
  { name: 'import attributes', source: `import data from './data.json' with { type: 'json' };`, want: ['./data.json'] },
  { name: 'bare package specifiers are returned too', source: `import { of } from 'rxjs';\nimport x from '@scope/pkg/sub';`, want: ['rxjs', '@scope/pkg/sub'] },
];

for (const c of cases) {
  test(c.name, () => {
    assert.equal(scanImports(c.source), c.want);
  });
}

test.run();
